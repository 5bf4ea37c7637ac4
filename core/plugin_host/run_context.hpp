// The host-side definition of the ABI's opaque infer_run_context: the per-run state a
// plugin may poll through the is_cancelled host service during a long execution.
#pragma once

#include <atomic>

// Declared (opaque) in plugin_api.h. One instance per Session::run; it must outlive every
// execution that was given a pointer to it.
struct infer_run_context {
  std::atomic<bool> cancelled{false};

  void cancel() { cancelled.store(true, std::memory_order_release); }
  bool is_cancelled() const { return cancelled.load(std::memory_order_acquire); }
};

namespace infer::host {
using RunContext = ::infer_run_context;
}  // namespace infer::host
