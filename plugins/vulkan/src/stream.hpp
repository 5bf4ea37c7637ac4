// Streams (infer_stream): an ordered queue of work on one device.
//
// Every enqueueing call (copy_batch, execute, stream_signal) becomes one Entry: an
// optional host-side step run before the device part ("pre": e.g. copying host memory
// into a staging buffer), an optional command buffer, an optional host-side step run
// after it ("post": copying a staging buffer out to host memory), the (event, value)
// pairs it waits for (from stream_wait and execute's waits) and those it signals.
//
// Ordering: each stream owns a timeline semaphore; entry k's batch waits for the value
// k-1 and signals k, so entries run in order even when copies go to another queue, and
// the semaphore wait makes all earlier writes visible. A batch is only submitted once
// every semaphore it waits for has its signal submitted (or the host-side state already
// resolved it): the queue never holds a batch blocked on something not yet submitted, so
// streams that depend on each other through the host cannot deadlock a shared queue (on
// lavapipe every stream shares one queue). A pre step runs when every earlier entry has
// completed and the waits are resolved; its batch is submitted after it.
//
// Completion: each batch also signals a fence, and the device's scheduler thread
// (scheduler.hpp) retires entries in order once their fence is signalled: it runs the
// post step, confirms or fails
// the signalled events (which fires their callbacks), and releases what the entry kept
// alive (command buffer, staging and scratch memory, descriptor pool).
//
// Failure rule (plugin_api.h): when an entry fails - a wait on a failed event, a failed
// host step, a failed submission, a cancelled run - the failure poisons the stream until
// the next entry that signals something: those signals fail their events with it, and
// the entry after runs normally again. Device work already submitted still runs (a GPU
// cannot skip it); only its host steps are skipped.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "event.hpp"

namespace infer::vk {

class Device;
enum class QueueKind { kCompute = 0, kTransfer = 1 };

struct EventRef {
  std::shared_ptr<Event> event;
  uint64_t value = 0;
};

// What one enqueueing call hands to the stream.
struct Work {
  std::vector<EventRef> waits;
  std::vector<EventRef> signals;
  std::function<MaybeFailure()> pre;
  std::function<MaybeFailure()> post;
  VkCommandBuffer cmd = VK_NULL_HANDLE;  // recorded and ended, or null
  QueueKind queue = QueueKind::kCompute;
  MaybeFailure failure;                          // known before submission (e.g. cancelled)
  std::vector<std::shared_ptr<const void>> keep;  // released when the entry retires
};

class Stream {
 public:
  static MaybeFailure create(Device& device, std::shared_ptr<Stream>* out);
  // Frees the semaphore and command pools. Only once nothing is in flight (see drain).
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device& device() const { return device_; }

  // ---- Host threads (calls on one stream are serialized by the host) -------------------
  // Later work waits for (event, value): attached to the next entry.
  void add_wait(EventRef wait);
  // A command buffer of this stream for `queue`, reset and begun (one-time submit).
  MaybeFailure begin_commands(QueueKind queue, VkCommandBuffer* out);
  // Gives back a command buffer from begin_commands that will not be submitted.
  void discard_commands(QueueKind queue, VkCommandBuffer cmd);
  // Appends the work as one entry and submits what can be submitted.
  void enqueue(Work work);
  // Blocks until every entry has retired (stream_destroy "waits for the queued work").
  void drain();

  // ---- The scheduler thread ------------------------------------------------------------
  // Retires completed entries and submits ready ones; true when anything happened.
  bool service();
  // The fence of the oldest entry in flight, which the scheduler waits for, if any.
  bool pending_fence(VkFence* fence) const;

 private:
  struct Entry {
    Work work;
    uint64_t done_value = 0;
    bool submitted = false;
    bool pre_done = false;
    bool never_submitted = false;  // the submission failed: nothing signals done_value
    VkFence fence = VK_NULL_HANDLE;  // signalled when the batch completes
    uint64_t serial = 0;             // the batch's serial on its queue
    std::vector<bool> claimed;     // per signal: the batch signals its semaphore
  };
  explicit Stream(Device& device) : device_(device) {}
  // Submits the queued entries that are ready, in order; true when one was submitted.
  // Caller holds mu_.
  bool pump_locked();
  void submit_locked(Entry& e);
  // Finishes an entry taken off the queue (no lock held).
  void retire(Entry& e);
  // A reset fence for a submission (reused after retire). Caller holds mu_.
  VkFence take_fence();

  Device& device_;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  VkCommandPool pools_[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};

  mutable std::mutex mu_;
  std::condition_variable drained_cv_;
  std::deque<Entry> entries_;        // guarded by mu_
  std::vector<EventRef> next_waits_;  // guarded by mu_
  uint64_t last_value_ = 0;          // guarded by mu_
  std::vector<VkFence> free_fences_;  // guarded by mu_
  MaybeFailure poison_;              // guarded by mu_

  std::mutex cmd_mu_;
  std::vector<VkCommandBuffer> recycled_[2];  // guarded by cmd_mu_
};

// The infer_stream handle: the ABI object owns one reference; the scheduler holds
// another while it services the stream.
struct StreamHandle {
  std::shared_ptr<Stream> stream;
};

}  // namespace infer::vk
