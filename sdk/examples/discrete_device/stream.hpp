// Streams (infer_stream): the device's in-order hardware queue.
//
// A real discrete device has command queues that run copies and kernels in order, while
// the host thread that enqueued them goes on with other work. The example models each
// queue with one worker thread that takes work items off a FIFO and runs them.
//
// Why a thread, when plugins must never start thread pools? The rule exists so that the
// host's oneTBB arena alone decides how much host CPU inference uses. This thread is not
// a pool doing host work in parallel: it stands for the device's queue engine, which on
// real hardware runs beside the CPU. It is the ONE kind of thread a plugin may own, and
// only a plugin that simulates asynchronous hardware needs it; a plugin driving a real
// GPU gets the same behaviour from the driver's queues, and a CPU plugin runs its kernels
// with the host's parallel_for instead.
//
// Failure rule: when an item fails, the stream is poisoned until the next signal reports
// the failure. Items in between are skipped (they would read the results of the failed
// work), every signal that follows fails its event with the same failure, and the first
// non-signal item after those signals runs normally again. So one failed execution fails
// exactly the events it was to signal, and the stream stays usable for the next run.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "device.hpp"
#include "event.hpp"

namespace infer::example {

// One entry of a queue, like a command in a device's command buffer.
struct WorkItem {
  enum class Kind {
    kTask,    // a copy batch or a kernel launch: runs `task`
    kWait,    // blocks the queue until `event` reaches `value` (or fails)
    kSignal,  // raises `event` to `value` (or fails it if the stream is poisoned)
  };
  Kind kind = Kind::kTask;
  std::function<MaybeFailure()> task;
  Event* event = nullptr;
  uint64_t value = 0;

  static WorkItem make_task(std::function<MaybeFailure()> fn) {
    WorkItem item;
    item.task = std::move(fn);
    return item;
  }
  static WorkItem make_wait(Event* event, uint64_t value) {
    return WorkItem{Kind::kWait, {}, event, value};
  }
  static WorkItem make_signal(Event* event, uint64_t value) {
    return WorkItem{Kind::kSignal, {}, event, value};
  }
};

class Stream {
 public:
  // Starts the queue thread.
  explicit Stream(Device& device);
  // Lets the queue run dry, then stops and joins its thread ("stream_destroy waits for the
  // queued work to finish"). A queued wait whose value is never signalled would block
  // forever, so the host must release such waits before destroying the stream.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Device& device() const { return device_; }

  // Appends items to the queue as one unit and returns at once: the enqueueing thread
  // never blocks on the device.
  void enqueue(std::vector<WorkItem> items);

 private:
  void run_queue();  // the queue thread's loop
  void run_item(WorkItem& item);

  Device& device_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WorkItem> queue_;  // guarded by mu_
  bool stopping_ = false;       // guarded by mu_

  // Owned by the queue thread alone (see the failure rule above).
  MaybeFailure poisoned_;
  bool poison_reported_ = false;

  std::thread thread_;  // last member: started after everything it uses exists
};

}  // namespace infer::example
