// Timeline events (infer_event): a timeline VkSemaphore for the device side, plus the
// event's state as the host sees it.
//
// The device-side half: work on a stream that waits for (event, value) waits on the
// semaphore inside vkQueueSubmit, and work that signals it signals the semaphore, so
// dependent work on other streams starts without a round trip through the host.
//
// The host-side half: `counter` is the value the plugin has *confirmed* (the waiter
// thread raises it after the signalling submission completed and its host-side part -
// e.g. the copy from a staging buffer into host memory - is done), plus a sticky failure
// and the completion callbacks. event_wait, event_query and event_on_complete read this
// state rather than the semaphore, for two reasons: a failure must wake waiters although
// the semaphore value says nothing about failures, and a device-to-host copy is only
// finished once the waiter thread has copied the staging buffer out, after the semaphore
// was signalled.
//
// Semaphore rules this class enforces: signal values of one semaphore must increase, and
// the host may only signal it while no device signal is pending. So a signal whose value
// is not above every earlier signal is dropped from the submission (it changes nothing,
// as the ABI says), and a host signal that arrives while a device signal is pending is
// applied to the semaphore when the pending ones have completed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "failure.hpp"

namespace infer::vk {

class Device;

// The host-side state (counter, sticky failure, callbacks, waits, queries) is the SDK's
// sdk::Timeline, the same as every plugin's; this class adds the semaphore and its rules.
class Event : public sdk::Timeline {
 public:
  static MaybeFailure create(Device& device, std::shared_ptr<Event>* out);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  Device& device() const { return device_; }
  VkSemaphore semaphore() const { return semaphore_; }

  // event_signal_host: the timeline's checks and advance, plus the semaphore signal
  // (now, or once the pending device signals completed).
  MaybeFailure signal_from_host(uint64_t value);

  // ---- For streams ---------------------------------------------------------------------
  // (resolved, failure_state, advance and fail come from sdk::Timeline.)
  // True when a signal to at least `value` has happened or sits in a submitted batch, so
  // that a batch waiting for it can be submitted without blocking the queue.
  bool signal_submitted(uint64_t value) const;
  // Called before submitting a batch that signals `value`: true when the batch should
  // signal the semaphore (value above every earlier signal); the signal is then pending
  // until gpu_signal_done.
  bool claim_gpu_signal(uint64_t value);
  // The submission that claimed `value` has completed (`f` empty) or failed, or never
  // reached the device (`never_submitted`: the plugin signals the semaphore itself so
  // device waiters are released).
  void gpu_signal_done(uint64_t value, const MaybeFailure& f, bool never_submitted);

 private:
  explicit Event(Device& device);
  // Signals the semaphore from the host up to host_target_ when no device signal is
  // pending; caller holds sem_mu_.
  void flush_host_signal();

  Device& device_;
  VkSemaphore semaphore_ = VK_NULL_HANDLE;
  // The semaphore's bookkeeping, apart from the timeline's own lock: the timeline's
  // callbacks run without any lock, and these fields only order semaphore signals.
  mutable std::mutex sem_mu_;
  uint64_t max_signal_ = 0;        // highest value any submitted or host signal sets
  int gpu_pending_ = 0;            // claimed device signals not yet completed
  uint64_t host_target_ = 0;       // value the host side must signal the semaphore to
  uint64_t semaphore_floor_ = 0;   // value the semaphore is known to have reached
};

// The infer_event handle: the ABI object owns one reference; submissions in flight hold
// others, so the semaphore outlives any batch that uses it.
struct EventHandle {
  std::shared_ptr<Event> event;
};

}  // namespace infer::vk
