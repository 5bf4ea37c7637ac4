// The dynamic batcher of infer-serve: Triton's `dynamic_batching` semantics (research
// serving-anchors.md §1.3-1.5), in two layers.
//
// BatchQueue is the policy alone: a bounded FIFO of queued requests and the decision of
// what to run next, given the time. It reads no clock and starts no thread, so its tests
// drive it with a fake clock.
//
// DynamicBatcher is the thread around it, one per served model: it cuts a batch when an
// instance is free (so while every instance is busy the queue grows and the next batch
// is larger), hands it to that instance's worker thread, and rejects what expires.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "infer/status.hpp"

namespace infer::serve {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// The `batching:` block of a deployment file, after defaults are applied.
struct BatchingPolicy {
  // 0: batching off; every request runs alone as it arrives. >= 1: at most this many
  // rows (the sum of the requests' dim 0) per run.
  int64_t max_batch_size = 0;
  // Sizes run at once when reachable; ascending, each in [1, max_batch_size]. Empty means
  // {max_batch_size} (Triton's default).
  std::vector<int64_t> preferred_batch_sizes;
  // How long the oldest queued request may wait for others before a batch smaller than
  // a preferred size runs anyway. 0: run whatever is queued when an instance is free.
  std::chrono::microseconds max_queue_delay{0};
  // Requests waiting (not yet in a batch); one more is refused as unavailable. >= 1.
  size_t max_queue_size = 1024;
  // How long a request may wait in the queue before it is refused as unavailable;
  // 0: no limit. A request's own timeout may only shorten it.
  std::chrono::microseconds default_timeout{0};
};

// One queued request, as the batcher sees it. The server derives its own request type
// from it; the batcher only reads these fields.
struct BatchItem {
  virtual ~BatchItem() = default;
  int64_t rows = 1;                       // what it adds to a batch (its inputs' dim 0); >= 1
  std::string shape_key;                  // items with different keys never share a batch
  TimePoint enqueued{};                   // set by BatchQueue::push
  TimePoint deadline = TimePoint::max();  // refused as expired from then on
};
using ItemPtr = std::shared_ptr<BatchItem>;

// The policy: which queued items form the next batch, and when. Not thread-safe (the
// DynamicBatcher holds its lock around every call).
class BatchQueue {
 public:
  explicit BatchQueue(BatchingPolicy policy);

  // Queues `item` at `now` (sets item->enqueued; applies the default timeout to its
  // deadline). Unavailable, naming the limit, when max_queue_size items are waiting; an
  // item with fewer than 1 row, or more rows than max_batch_size (when batching is on), is
  // InvalidArgument. A refused item is left unchanged.
  Status push(ItemPtr item, TimePoint now);

  struct Decision {
    std::vector<ItemPtr> batch;        // run these now, in queue order (empty: nothing yet)
    std::vector<ItemPtr> expired;      // refuse these: their deadline passed while queued
    std::optional<TimePoint> wake_at;  // with an empty batch: decide again then at the
                                       // latest (nullopt: only when an item is pushed)
  };
  // Called when an instance is free. Takes out the expired items, then forms the batch:
  // the longest run of queue-order items with the first item's shape_key whose rows fit
  // in max_batch_size, cut at the largest preferred size reached; it runs now if it
  // reached a preferred size, if the next item cannot join it (other shape or too many
  // rows), if the oldest item has waited max_queue_delay, or if the delay is 0;
  // otherwise the decision says when to look again (the oldest item's delay end, or an
  // earlier deadline). With batching off every batch is one item. As in Triton, rows
  // passing the largest preferred size count as reaching it: the batch is then cut just
  // before the item that passes it (or is that item alone, when it is first).
  Decision next(TimePoint now);

  size_t size() const;
  // After a push: whether next() may now decide differently than it did before it, so
  // that the batcher is woken only then (the first item, a batch that can run at once, an
  // item that cannot join the batch, a deadline); otherwise the batcher sleeps on until
  // its own wake-up time. Waking it for every request cost two context switches each.
  bool worth_deciding() const;
  // Everything still queued, in order, leaving the queue empty (shutdown).
  std::vector<ItemPtr> take_all();

  const BatchingPolicy& policy() const { return policy_; }

 private:
  // The DynamicBatcher also refuses expired items while every instance is busy, when it
  // cannot ask for a batch.
  friend class DynamicBatcher;
  // Takes out every item whose deadline is <= now, in queue order.
  std::vector<ItemPtr> take_expired(TimePoint now);
  // The earliest deadline of a queued item; nullopt when none has one.
  std::optional<TimePoint> earliest_deadline() const;

  BatchingPolicy policy_;
  std::vector<int64_t> preferred_;  // the preferred sizes that can be reached, ascending
  std::deque<ItemPtr> queue_;       // FIFO; front = oldest
};

// One batcher thread and `instances` worker threads for a model.
class DynamicBatcher {
 public:
  // Runs one batch on instance `instance` (0-based), on that instance's worker thread;
  // it answers every item itself. Never called for an empty batch.
  using Execute = std::function<void(int instance, std::vector<ItemPtr> batch)>;
  // Answers an item that will not run (expired in the queue, or left at shutdown).
  using Reject = std::function<void(const ItemPtr& item, const Status& why)>;

  // `instances` below 1 counts as 1. Execute and Reject must not throw.
  DynamicBatcher(BatchingPolicy policy, int instances, Execute execute, Reject reject);
  ~DynamicBatcher();  // stop() then joins the threads
  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  // Queues an item (BatchQueue::push at Clock::now()). Unavailable after stop_accepting()
  // ("... is stopping") or when the queue is full.
  Status submit(ItemPtr item);
  // With batching off: runs `item` at once, on the caller's thread, when an instance is
  // idle and nothing waits in the queue (so requests keep their order), and returns true;
  // the hand-overs to the batcher and worker threads cost more than a small model's run.
  // Otherwise (batching on, all instances busy, queued requests, stopping) returns false
  // and leaves `item` to the caller, who submits it.
  bool run_now(ItemPtr& item);
  // New submits are refused from now on; queued and running batches still complete.
  void stop_accepting();
  // Waits until the queue is empty and no batch is running, up to `timeout`; true when
  // everything finished. Call after stop_accepting().
  bool drain(std::chrono::milliseconds timeout);
  // Rejects what is still queued (unavailable, "... shutting down"), waits for running
  // batches, stops the threads. Idempotent. Not from inside Execute or Reject (it joins
  // the thread that calls them).
  void stop();

  size_t queue_depth() const;
  int busy_instances() const;

 private:
  // One instance: the batch handed to its worker, and whether it is running one.
  struct Slot {
    std::optional<std::vector<ItemPtr>> batch;  // handed over, not yet taken by the worker
    bool busy = false;                          // from the hand-over until execute returns
    std::condition_variable cv;                 // wakes this worker
  };

  void batcher_loop();
  void worker_loop(int instance);
  // The lowest-numbered idle instance, or -1. Called with mutex_ held.
  int idle_instance() const;
  // Waits on cv_ until `until` (forever when nullopt) or a notify. Called with mutex_ held.
  void wait_for_change(std::unique_lock<std::mutex>& lock, std::optional<TimePoint> until);
  // Answers `items` with reject_ outside the lock (`lock` is released meanwhile);
  // `why(item)` builds each status.
  void reject_unlocked(std::unique_lock<std::mutex>& lock, std::vector<ItemPtr> items,
                       const std::function<Status(const BatchItem&)>& why);
  // Queue empty, no batch running, no rejection under way. Called with mutex_ held.
  bool idle_locked() const;

  Execute execute_;
  Reject reject_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;       // wakes the batcher thread
  std::condition_variable idle_cv_;  // wakes drain()
  BatchQueue queue_;
  bool accepting_ = true;
  bool stopping_ = false;
  std::vector<Slot> slots_;  // one per instance
  int busy_ = 0;             // slots with busy set
  int rejecting_ = 0;        // items taken out of the queue whose reject_ has not returned
  std::mutex stop_mutex_;    // serializes stop(); taken before mutex_, never after
  bool joined_ = false;      // under stop_mutex_: the threads are joined
  std::thread batcher_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace infer::serve
