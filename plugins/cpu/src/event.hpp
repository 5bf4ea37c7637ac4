// A timeline event: a 64-bit counter that only grows, a sticky failure, host waits with
// timeout, and completion callbacks. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "infer/plugin.hpp"
#include "status.hpp"

namespace infer::cpu {

class Event {
 public:
  explicit Event(const sdk::Host* host) : host_(host) {}
  // Pending callbacks are completed with a CANCELLED status: each is called exactly once.
  ~Event();

  void signal(uint64_t value);
  // Makes `failure` stick (the first failure wins) and completes all callbacks with it.
  void fail(const Status& failure);
  // Blocks until the counter reaches `value` (OK), the event fails (its failure), or
  // `timeout_ns` passes (TIMEOUT; UINT64_MAX waits forever). Returns only once the
  // callbacks released by signals and failures have returned, as the ABI promises.
  Status wait(uint64_t value, uint64_t timeout_ns);
  Status query(uint64_t* value);
  void on_complete(uint64_t value, infer_event_callback_fn cb, void* user);

 private:
  struct Callback {
    uint64_t value;
    infer_event_callback_fn fn;
    void* user;
  };
  // Calls `cbs` with `status` (NULL: success) outside the lock; `firing_` was raised
  // for them under the lock and is lowered here once they have all returned.
  void run_callbacks(const std::vector<Callback>& cbs, const Status& status);

  const sdk::Host* host_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t value_ = 0;
  bool failed_ = false;
  Status failure_;
  std::vector<Callback> callbacks_;
  int firing_ = 0;  // batches of callbacks currently running
};

}  // namespace infer::cpu
