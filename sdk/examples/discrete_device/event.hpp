// Timeline events (infer_event): a 64-bit counter that only grows, plus a sticky failure.
//
// Timeline semaphores (Vulkan, D3D12 fences, CUDA's external semaphores) are the model: one
// event serves a whole sequence of runs, each waiting for "value >= N" instead of needing
// a fresh event object. The host signals from its own threads (event_signal_host), the
// stream queue threads signal as work completes, and anyone may wait.
//
// A failure "sticks": once work that was to signal the event fails, the counter never
// advances again and every later wait, query and callback sees the failure. That way a
// consumer that waits for value 7 cannot mistake "the producer died" for "not yet".
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "failure.hpp"

namespace infer::example {

class Event {
 public:
  explicit Event(const sdk::Host& host) : host_(host) {}
  const sdk::Host& host() const { return host_; }
  // Fires the callbacks still pending with a CANCELLED status, so that every registered
  // callback runs exactly once, as the ABI promises.
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Raises the counter to `value` (a lower value leaves it unchanged: the counter only
  // grows) and releases waiters and callbacks it satisfies. No effect once failed.
  void advance(uint64_t value);
  // The host-side signal: like advance, but a value below the current counter is the
  // host's mistake and is reported; a failed event reports its failure.
  MaybeFailure signal_from_host(uint64_t value);
  // Makes `f` the event's sticky failure (the first failure wins) and releases everyone.
  void fail(const Failure& f);

  enum class WaitResult { kReached, kFailed, kTimedOut };
  // Blocks until the counter reaches `value`, the event fails (then *failure is set) or
  // `deadline` passes; no deadline means wait forever. It also waits for the callbacks
  // that the reaching signal (or failure) released to return: a host may free a
  // callback's `user` data as soon as its own wait for the same value returns.
  WaitResult wait(uint64_t value, std::optional<std::chrono::steady_clock::time_point> deadline,
                  Failure* failure);
  // The counter, or the sticky failure.
  MaybeFailure query(uint64_t* value) const;
  // Calls cb(user, status) once the counter reaches `value` or the event fails: right
  // away on this thread if that already happened, else later on whichever thread
  // advances or fails the event. Callbacks always run with no lock held, so they may call
  // back into the plugin (for example to enqueue more work), but not wait on this event.
  // A query may already see the new value while those callbacks still run.
  void on_complete(uint64_t value, infer_event_callback_fn cb, void* user);

 private:
  struct Callback {
    uint64_t value;
    infer_event_callback_fn fn;
    void* user;
  };
  // Removes and returns the pending callbacks satisfied by the current state; the
  // caller must hold mu_ and then call fire() without it.
  std::vector<Callback> take_ready();
  // Runs callbacks outside the lock (`f`: the failure to report, if any), then lets the
  // waiters that were held for them go.
  void fire(const std::vector<Callback>& callbacks, const MaybeFailure& f);

  const sdk::Host& host_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t counter_ = 0;           // guarded by mu_
  MaybeFailure failure_;           // guarded by mu_
  std::vector<Callback> pending_;  // guarded by mu_
  int firing_ = 0;                 // batches of callbacks running now; guarded by mu_
};

}  // namespace infer::example
