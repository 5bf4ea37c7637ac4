#include "stream.hpp"

#include <exception>
#include <new>
#include <string>
#include <utility>

namespace infer::example {

Stream::Stream(Device& device) : device_(device), thread_([this] { run_queue(); }) {}

Stream::~Stream() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Stream::enqueue(std::vector<WorkItem> items) {
  {
    std::lock_guard lock(mu_);
    for (WorkItem& item : items) queue_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void Stream::run_queue() {
  for (;;) {
    WorkItem item;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      // Stop only once the queue is empty: destruction drains the queue first.
      if (queue_.empty()) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    // Run without the lock, so the host can keep enqueueing while the device works.
    run_item(item);
    // `item` is destroyed here, on the queue thread: a kernel's captured state (its
    // temporary device buffers) is released as soon as the kernel has run.
  }
}

void Stream::run_item(WorkItem& item) {
  if (item.kind == WorkItem::Kind::kSignal) {
    if (poisoned_) {
      item.event->fail(*poisoned_);
      poison_reported_ = true;
    } else {
      item.event->advance(item.value);
    }
    return;
  }

  // New work after the signals that reported a failure: the failure is history.
  if (poisoned_ && poison_reported_) {
    poisoned_.reset();
    poison_reported_ = false;
  }
  // Work after a failure that no signal has reported yet would consume bad results.
  if (poisoned_) return;

  if (item.kind == WorkItem::Kind::kWait) {
    Failure f;
    if (item.event->wait(item.value, std::nullopt, &f) == Event::WaitResult::kFailed) {
      // The producer we waited for failed: its failure flows on to our own signals.
      poisoned_ = std::move(f);
    }
    return;
  }
  // A task must not throw across the queue thread (nothing would catch it), so an
  // escaped exception becomes the task's failure like any other error.
  try {
    poisoned_ = item.task();
  } catch (const std::bad_alloc&) {
    poisoned_ = failure(INFER_STATUS_OUT_OF_MEMORY, "example: out of host memory in a queue task");
  } catch (const std::exception& e) {
    poisoned_ =
        failure(INFER_STATUS_INTERNAL, std::string("example: queue task threw: ") + e.what());
  } catch (...) {
    poisoned_ = failure(INFER_STATUS_INTERNAL, "example: queue task threw an unknown exception");
  }
}

}  // namespace infer::example
