// The dynamic batcher (batcher.hpp): BatchQueue's policy, then the DynamicBatcher's threads.
#include "batcher.hpp"

#include <algorithm>
#include <utility>

namespace infer::serve {
namespace {

// `t + d`, held at TimePoint::max() instead of overflowing: a policy may carry a delay or a
// timeout so large that the sum no longer fits.
TimePoint add_saturated(TimePoint t, std::chrono::microseconds d) {
  const auto room = TimePoint::max() - t;
  if (d >= std::chrono::duration_cast<std::chrono::microseconds>(room)) return TimePoint::max();
  return t + d;
}

int64_t micros(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// BatchQueue

BatchQueue::BatchQueue(BatchingPolicy policy) : policy_(std::move(policy)) {
  // The preferred sizes are validated where the deployment file is read; here a size that
  // no batch can have is dropped, so that it can neither be waited for nor, as the largest
  // size, make every batch "pass" it.
  for (int64_t size : policy_.preferred_batch_sizes) {
    if (size >= 1 && size <= policy_.max_batch_size) preferred_.push_back(size);
  }
  if (preferred_.empty() && policy_.max_batch_size >= 1)
    preferred_.push_back(policy_.max_batch_size);
  std::sort(preferred_.begin(), preferred_.end());
  preferred_.erase(std::unique(preferred_.begin(), preferred_.end()), preferred_.end());
}

Status BatchQueue::push(ItemPtr item, TimePoint now) {
  if (!item) return invalid_argument("no request to queue");
  if (item->rows < 1) {
    return invalid_argument("the request has " + std::to_string(item->rows) +
                            " rows (dim 0 of its inputs); at least 1 is needed");
  }
  if (policy_.max_batch_size >= 1 && item->rows > policy_.max_batch_size) {
    return invalid_argument("the request has " + std::to_string(item->rows) +
                            " rows (dim 0 of its inputs), more than batching.max_batch_size " +
                            std::to_string(policy_.max_batch_size));
  }
  if (queue_.size() >= policy_.max_queue_size) {
    const std::string n = std::to_string(policy_.max_queue_size);
    return unavailable("queue is full: " + n + " requests are waiting (batching.max_queue_size " +
                       n + ")");
  }
  item->enqueued = now;
  if (policy_.default_timeout.count() > 0) {
    item->deadline = std::min(item->deadline, add_saturated(now, policy_.default_timeout));
  }
  queue_.push_back(std::move(item));
  return Status::ok();
}

bool BatchQueue::worth_deciding() const {
  if (queue_.size() <= 1 || policy_.max_batch_size == 0) return true;
  const BatchItem& last = *queue_.back();
  if (last.deadline != TimePoint::max() || last.shape_key != queue_.front()->shape_key) return true;
  if (policy_.max_queue_delay.count() == 0) return true;
  const int64_t smallest = preferred_.empty() ? policy_.max_batch_size : preferred_.front();
  int64_t rows = 0;
  for (const ItemPtr& item : queue_) {
    rows += item->rows;
    if (rows >= smallest) return true;
  }
  return false;
}

std::vector<ItemPtr> BatchQueue::take_expired(TimePoint now) {
  std::vector<ItemPtr> expired;
  auto keep = queue_.begin();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if ((*it)->deadline <= now) {
      expired.push_back(std::move(*it));
    } else {
      if (keep != it) *keep = std::move(*it);
      ++keep;
    }
  }
  queue_.erase(keep, queue_.end());
  return expired;
}

std::optional<TimePoint> BatchQueue::earliest_deadline() const {
  TimePoint earliest = TimePoint::max();
  for (const ItemPtr& item : queue_) earliest = std::min(earliest, item->deadline);
  if (earliest == TimePoint::max()) return std::nullopt;
  return earliest;
}

BatchQueue::Decision BatchQueue::next(TimePoint now) {
  Decision d;
  d.expired = take_expired(now);
  if (queue_.empty()) return d;

  size_t count = 0;  // items in the batch
  if (policy_.max_batch_size < 1) {
    count = 1;  // batching off: each request runs alone, as it comes
  } else {
    const int64_t max_preferred = preferred_.back();
    const std::string& key = queue_.front()->shape_key;
    int64_t rows = 0;
    size_t best = 0;       // items up to the largest preferred size reached (0: none)
    bool blocked = false;  // the walk stopped at an item that cannot join
    // The batch is a prefix of the queue: an item that cannot join ends it rather than
    // being skipped, so requests run in the order they came (FIFO, as in Triton).
    for (const ItemPtr& item : queue_) {
      if (count > 0 && (item->shape_key != key || rows + item->rows > policy_.max_batch_size)) {
        blocked = true;
        break;
      }
      if (count > 0 && best == 0 && rows + item->rows > max_preferred) {
        // Triton: passing the largest preferred size with none reached marks the batch
        // before this item as the closest one can get to a preferred size.
        best = count;
      }
      rows += item->rows;
      ++count;
      if (std::binary_search(preferred_.begin(), preferred_.end(), rows)) best = count;
    }
    if (best > 0) {
      count = best;
    } else if (rows >= max_preferred || blocked) {
      // Reached the largest preferred size by itself (the first item is larger), or the
      // batch cannot grow any more: waiting would only delay it.
    } else if (policy_.max_queue_delay.count() > 0 &&
               now - queue_.front()->enqueued < policy_.max_queue_delay) {
      // Wait for more requests, but no longer than the oldest one may be delayed, and wake
      // for the first deadline so that an expired request is refused when it expires.
      TimePoint wake = add_saturated(queue_.front()->enqueued, policy_.max_queue_delay);
      if (std::optional<TimePoint> deadline = earliest_deadline()) wake = std::min(wake, *deadline);
      d.wake_at = wake;
      return d;
    }
  }
  d.batch.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    d.batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return d;
}

size_t BatchQueue::size() const { return queue_.size(); }

std::vector<ItemPtr> BatchQueue::take_all() {
  std::vector<ItemPtr> all(std::make_move_iterator(queue_.begin()),
                           std::make_move_iterator(queue_.end()));
  queue_.clear();
  return all;
}

// ---------------------------------------------------------------------------------------
// DynamicBatcher
//
// One mutex guards the queue and every slot. The batcher thread cuts a batch only when an
// instance is idle, so while all are busy requests pile up and the next batch is larger
// (Triton's "grow batches till the payload is under execution"). Callbacks (execute_,
// reject_) always run with the mutex released: they answer clients, which may take long
// or call back into submit().

DynamicBatcher::DynamicBatcher(BatchingPolicy policy, int instances, Execute execute, Reject reject)
    : execute_(std::move(execute)),
      reject_(std::move(reject)),
      queue_(std::move(policy)),
      slots_(static_cast<size_t>(std::max(instances, 1))) {
  try {
    for (size_t i = 0; i < slots_.size(); ++i) {
      workers_.emplace_back([this, i] { worker_loop(static_cast<int>(i)); });
    }
    batcher_thread_ = std::thread([this] { batcher_loop(); });
  } catch (...) {
    // A thread could not start: the destructor will not run, so stop those that did.
    stop();
    throw;
  }
}

DynamicBatcher::~DynamicBatcher() { stop(); }

Status DynamicBatcher::submit(ItemPtr item) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!accepting_) return unavailable("model is stopping: not accepting new requests");
  Status status = queue_.push(std::move(item), Clock::now());
  if (status.is_ok() && queue_.worth_deciding()) cv_.notify_one();
  return status;
}

bool DynamicBatcher::run_now(ItemPtr& item) {
  int instance = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accepting_ || stopping_ || queue_.policy().max_batch_size != 0 || queue_.size() != 0)
      return false;
    instance = idle_instance();
    if (instance < 0) return false;
    Slot& slot = slots_[static_cast<size_t>(instance)];
    slot.busy = true;
    ++busy_;
  }
  item->enqueued = Clock::now();
  std::vector<ItemPtr> batch;
  batch.push_back(std::move(item));
  execute_(instance, std::move(batch));
  std::lock_guard<std::mutex> lock(mutex_);
  slots_[static_cast<size_t>(instance)].busy = false;
  --busy_;
  // Requests queued meanwhile can go to this instance now. Only then is the batcher
  // woken: a wake-up per request would cost two context switches.
  if (queue_.size() != 0) cv_.notify_one();
  if (idle_locked()) idle_cv_.notify_all();
  return true;
}

void DynamicBatcher::stop_accepting() {
  std::lock_guard<std::mutex> lock(mutex_);
  accepting_ = false;
}

bool DynamicBatcher::drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_cv_.wait_for(lock, timeout, [this] { return idle_locked(); });
}

void DynamicBatcher::stop() {
  std::lock_guard<std::mutex> stop_lock(stop_mutex_);
  if (joined_) return;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    accepting_ = false;
    stopping_ = true;
    cv_.notify_all();
    for (Slot& slot : slots_) slot.cv.notify_all();
    reject_unlocked(lock, queue_.take_all(),
                    [](const BatchItem&) { return unavailable("server is shutting down"); });
  }
  // Workers finish the batch they hold (it was handed over before stopping_ was set), then
  // see stopping_ and return.
  if (batcher_thread_.joinable()) batcher_thread_.join();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  joined_ = true;
}

size_t DynamicBatcher::queue_depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

int DynamicBatcher::busy_instances() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_;
}

int DynamicBatcher::idle_instance() const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].busy) return static_cast<int>(i);
  }
  return -1;
}

bool DynamicBatcher::idle_locked() const {
  return queue_.size() == 0 && busy_ == 0 && rejecting_ == 0;
}

void DynamicBatcher::wait_for_change(std::unique_lock<std::mutex>& lock,
                                     std::optional<TimePoint> until) {
  // No predicate: every caller goes round its loop and looks again, so a spurious wakeup
  // costs one decision and a notify that came before the wait is not needed (the state it
  // announced was seen under the same lock).
  if (until) {
    cv_.wait_until(lock, *until);
  } else {
    cv_.wait(lock);
  }
}

void DynamicBatcher::reject_unlocked(std::unique_lock<std::mutex>& lock, std::vector<ItemPtr> items,
                                     const std::function<Status(const BatchItem&)>& why) {
  if (items.empty()) return;
  // Counted while the callbacks run, so that drain() does not report "done" before every
  // taken item has its answer.
  const int n = static_cast<int>(items.size());
  rejecting_ += n;
  lock.unlock();
  for (const ItemPtr& item : items) reject_(item, why(*item));
  items.clear();  // the last references may go here; destructors run unlocked too
  lock.lock();
  rejecting_ -= n;
  if (idle_locked()) idle_cv_.notify_all();
}

void DynamicBatcher::batcher_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (queue_.size() == 0) {
      wait_for_change(lock, std::nullopt);
      continue;
    }
    const TimePoint now = Clock::now();
    std::vector<ItemPtr> expired;
    std::optional<TimePoint> wake_at;
    bool handed = false;
    const int instance = idle_instance();
    if (instance < 0) {
      // Nothing can run until an instance frees (its worker notifies), but a request whose
      // deadline passes meanwhile is refused then, not when an instance frees.
      expired = queue_.take_expired(now);
      wake_at = queue_.earliest_deadline();
    } else {
      BatchQueue::Decision d = queue_.next(now);
      expired = std::move(d.expired);
      wake_at = d.wake_at;
      if (!d.batch.empty()) {
        Slot& slot = slots_[static_cast<size_t>(instance)];
        slot.batch = std::move(d.batch);
        slot.busy = true;
        ++busy_;
        slot.cv.notify_one();
        handed = true;
      }
    }
    if (!expired.empty()) {
      reject_unlocked(lock, std::move(expired), [now](const BatchItem& item) {
        return unavailable("request timed out after waiting " +
                           std::to_string(micros(now - item.enqueued)) + " us in the queue");
      });
      continue;  // the lock was released: decide again on what is queued now
    }
    // After a hand-over, go round at once: another instance may be idle and more queued.
    if (!handed) wait_for_change(lock, wake_at);
  }
}

void DynamicBatcher::worker_loop(int instance) {
  Slot& slot = slots_[static_cast<size_t>(instance)];
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    slot.cv.wait(lock, [&] { return slot.batch.has_value() || stopping_; });
    if (!slot.batch) return;  // stopping, and nothing was handed over
    std::vector<ItemPtr> batch = std::move(*slot.batch);
    slot.batch.reset();
    lock.unlock();
    execute_(instance, std::move(batch));
    lock.lock();
    slot.busy = false;
    --busy_;
    if (queue_.size() != 0) cv_.notify_one();  // the batcher may cut the next batch now
    if (idle_locked()) idle_cv_.notify_all();
  }
}

}  // namespace infer::serve
