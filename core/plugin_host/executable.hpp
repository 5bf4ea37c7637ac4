// RAII wrapper over a compiled partition (infer_executable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infer/plugin_api.h"
#include "infer/status.hpp"
#include "plugin_host/run_context.hpp"

namespace infer::host {

class PluginInstance;
class Stream;

// Fills `out` (struct_size already set) with memory of the executing device for output
// `index` of the given dtype and shape. Called from inside Executable::execute, on the
// plugin's thread, exactly once per output. A non-OK Status is handed to the plugin.
using OutputAllocator = std::function<Status(size_t index, infer_dtype dtype,
                                             std::span<const int64_t> dims, infer_tensor* out)>;

struct ExecuteArgs {
  std::span<const infer_tensor> inputs;  // in the order of the graph view's inputs
  OutputAllocator alloc_output;
  std::span<const infer_event_value> waits;
  std::span<const infer_event_value> signals;
  RunContext* run = nullptr;
};

// Move-only. Keeps alive whatever the compile call was told to (the graph view's
// constant data and prepacked weights, which the plugin may use in place) until
// executable_destroy has returned.
class Executable {
 public:
  Executable() = default;
  Executable(Executable&& other) noexcept;
  Executable& operator=(Executable&& other) noexcept;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  ~Executable();

  bool valid() const { return executable_ != nullptr; }
  infer_executable* raw() const { return executable_; }
  const std::string& name() const { return name_; }
  // The partition view's input and output counts at compile time.
  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return num_outputs_; }

  // Enqueues one execution on `stream` (a stream of the same device). Checks the input
  // count against the compiled view. Safe to call from several threads at once (on
  // different streams).
  Status execute(const Stream& stream, const ExecuteArgs& args) const;

  void reset();

 private:
  friend class Device;
  Executable(std::shared_ptr<const PluginInstance> owner, infer_executable* executable,
             std::string name, size_t num_inputs, size_t num_outputs,
             std::vector<std::shared_ptr<const void>> keep_alive);

  std::shared_ptr<const PluginInstance> owner_;
  infer_executable* executable_ = nullptr;
  std::string name_;
  size_t num_inputs_ = 0;
  size_t num_outputs_ = 0;
  std::vector<std::shared_ptr<const void>> keep_alive_;
};

}  // namespace infer::host
