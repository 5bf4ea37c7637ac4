// The dynamic batcher (tools/infer-serve/batcher.hpp). BatchQueue is driven with a fake
// clock: time points built by hand, so each expected batch and wake-up time is computed
// here from the policy (Triton's dynamic_batching rules). DynamicBatcher runs real threads;
// its tests never use a sleep as the thing they measure: an instance is held on a gate the
// test opens, and every wait on another thread has a generous timeout that only a bug hits.
#include "batcher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace infer::serve {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// Microsecond `n` of the fake clock.
TimePoint at(int64_t n) { return TimePoint{} + microseconds(n); }

// A request the tests can recognize and count answers on.
struct TestItem : BatchItem {
  int id = 0;
  std::atomic<int> executed{0};
  std::atomic<int> rejected{0};
};
using TestPtr = std::shared_ptr<TestItem>;

TestPtr item(int id, int64_t rows = 1, std::string key = "") {
  auto it = std::make_shared<TestItem>();
  it->id = id;
  it->rows = rows;
  it->shape_key = std::move(key);
  return it;
}

std::vector<int> ids(const std::vector<ItemPtr>& items) {
  std::vector<int> out;
  for (const ItemPtr& it : items) out.push_back(static_cast<const TestItem&>(*it).id);
  return out;
}

BatchingPolicy batching(int64_t max_batch, std::vector<int64_t> preferred = {},
                        int64_t delay_us = 0) {
  BatchingPolicy p;
  p.max_batch_size = max_batch;
  p.preferred_batch_sizes = std::move(preferred);
  p.max_queue_delay = microseconds(delay_us);
  return p;
}

// Pushes items with ids first..first+n-1, one row each, at fake times t, t+1, ...
void push_n(BatchQueue& q, int first, int n, int64_t t = 0) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(q.push(item(first + i), at(t + i)).is_ok());
}

// ---------------------------------------------------------------------------------------
// BatchQueue

TEST(BatchQueue, EmptyQueueHasNothingAndNoWakeUp) {
  BatchQueue q(batching(8, {}, 100));
  const BatchQueue::Decision d = q.next(at(0));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_TRUE(d.expired.empty());
  EXPECT_FALSE(d.wake_at.has_value());
}

TEST(BatchQueue, PushStampsEnqueueTime) {
  BatchQueue q(batching(8));
  TestPtr a = item(1);
  ASSERT_TRUE(q.push(a, at(42)).is_ok());
  EXPECT_EQ(a->enqueued, at(42));
  EXPECT_EQ(a->deadline, TimePoint::max());  // no default timeout: no deadline
  EXPECT_EQ(q.size(), 1u);
}

TEST(BatchQueue, PreferredSizeReachedRunsAtOnce) {
  // max 8, preferred {4}, delay 1000 us: 4 rows are a preferred size, so they run at t=3
  // although the oldest has waited 3 us of its 1000.
  BatchQueue q(batching(8, {4}, 1000));
  push_n(q, 1, 3);
  BatchQueue::Decision d = q.next(at(2));
  EXPECT_TRUE(d.batch.empty());  // 3 rows: not preferred yet
  ASSERT_TRUE(q.push(item(4), at(3)).is_ok());
  d = q.next(at(3));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(q.size(), 0u);
}

TEST(BatchQueue, LargestReachablePreferredSizeIsChosen) {
  // Preferred {2, 4}: with 5 queued the walk reaches 2, then 4 (then 5, not preferred), and
  // cuts at 4; item 5 stays.
  BatchQueue q(batching(8, {2, 4}, 1000));
  push_n(q, 1, 5);
  BatchQueue::Decision d = q.next(at(5));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(q.size(), 1u);
  // With 3 queued only 2 is reachable: it runs at once, and the third waits.
  BatchQueue q3(batching(8, {2, 4}, 1000));
  push_n(q3, 1, 3);
  d = q3.next(at(3));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2}));
  EXPECT_EQ(q3.size(), 1u);
}

TEST(BatchQueue, DelayNotReachedWaitsUntilOldestDelayEnds) {
  // Preferred defaults to {8}. Items at t=10, 20, 30, delay 100: at t=50 the oldest has
  // waited 40 us, so nothing runs and the batcher should look again at 10 + 100 = 110.
  BatchQueue q(batching(8, {}, 100));
  ASSERT_TRUE(q.push(item(1), at(10)).is_ok());
  ASSERT_TRUE(q.push(item(2), at(20)).is_ok());
  ASSERT_TRUE(q.push(item(3), at(30)).is_ok());
  const BatchQueue::Decision d = q.next(at(50));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_TRUE(d.expired.empty());
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_EQ(*d.wake_at, at(110));
  EXPECT_EQ(q.size(), 3u);
}

TEST(BatchQueue, DelayReachedRunsPartialBatch) {
  BatchQueue q(batching(8, {}, 100));
  ASSERT_TRUE(q.push(item(1), at(10)).is_ok());
  ASSERT_TRUE(q.push(item(2), at(20)).is_ok());
  ASSERT_TRUE(q.push(item(3), at(30)).is_ok());
  EXPECT_TRUE(q.next(at(109)).batch.empty());      // 99 us waited
  const BatchQueue::Decision d = q.next(at(110));  // exactly the delay: runs
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(d.wake_at.has_value());
  EXPECT_EQ(q.size(), 0u);
}

TEST(BatchQueue, ZeroDelayRunsWhateverIsQueued) {
  BatchQueue q(batching(8));  // delay 0, preferred {8}
  push_n(q, 1, 3);
  const BatchQueue::Decision d = q.next(at(2));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2, 3}));
}

TEST(BatchQueue, MaxBatchSizeCapsRowsAndRemainderStaysInOrder) {
  BatchQueue q(batching(4));
  push_n(q, 1, 6);
  BatchQueue::Decision d = q.next(at(6));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(q.size(), 2u);
  d = q.next(at(7));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{5, 6}));
  EXPECT_EQ(q.size(), 0u);
}

TEST(BatchQueue, MultiRowItemsAddTheirRows) {
  // max 8 = preferred: 3 + 5 rows are exactly 8, they run at once despite the delay.
  BatchQueue q(batching(8, {}, 1000));
  ASSERT_TRUE(q.push(item(1, 3), at(0)).is_ok());
  ASSERT_TRUE(q.push(item(2, 5), at(1)).is_ok());
  ASSERT_TRUE(q.push(item(3, 1), at(2)).is_ok());
  BatchQueue::Decision d = q.next(at(2));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2}));
  EXPECT_EQ(q.size(), 1u);

  // 3 + 2 = 5 rows; the next item (4 rows) would make 9 > 8, so it cannot join and the 5
  // rows run now ("send now") rather than wait out the delay; item 3 is not skipped to.
  BatchQueue q2(batching(8, {}, 1000));
  ASSERT_TRUE(q2.push(item(1, 3), at(0)).is_ok());
  ASSERT_TRUE(q2.push(item(2, 2), at(1)).is_ok());
  ASSERT_TRUE(q2.push(item(3, 4), at(2)).is_ok());
  ASSERT_TRUE(q2.push(item(4, 1), at(3)).is_ok());
  d = q2.next(at(3));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2}));
  EXPECT_EQ(ids(q2.take_all()), (std::vector<int>{3, 4}));
}

TEST(BatchQueue, PassingLargestPreferredSizeCutsBeforeIt) {
  // Preferred {2, 4}, max 8, rows 1, 2, 3: running totals 1, 3, 6 never hit 2 or 4; the
  // third item passes 4, so (as in Triton) the batch is cut before it: items 1 and 2 run
  // now, without waiting for the delay.
  BatchQueue q(batching(8, {2, 4}, 1000));
  ASSERT_TRUE(q.push(item(1, 1), at(0)).is_ok());
  ASSERT_TRUE(q.push(item(2, 2), at(1)).is_ok());
  ASSERT_TRUE(q.push(item(3, 3), at(2)).is_ok());
  BatchQueue::Decision d = q.next(at(2));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2}));
  EXPECT_EQ(q.size(), 1u);
  // A first item larger than every preferred size reaches it by itself and runs alone.
  BatchQueue q2(batching(8, {2}, 1000));
  ASSERT_TRUE(q2.push(item(1, 3), at(0)).is_ok());
  d = q2.next(at(0));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1}));
}

TEST(BatchQueue, DifferentShapeKeyEndsTheBatch) {
  // Keys a, a, b, a with a long delay: the b item cannot join, so a, a run now; then b
  // runs alone (the a behind it cannot join either); the last a waits for its delay.
  BatchQueue q(batching(8, {}, 1000));
  ASSERT_TRUE(q.push(item(1, 1, "a"), at(0)).is_ok());
  ASSERT_TRUE(q.push(item(2, 1, "a"), at(1)).is_ok());
  ASSERT_TRUE(q.push(item(3, 1, "b"), at(2)).is_ok());
  ASSERT_TRUE(q.push(item(4, 1, "a"), at(3)).is_ok());
  BatchQueue::Decision d = q.next(at(3));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 2}));
  d = q.next(at(4));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{3}));
  d = q.next(at(5));
  EXPECT_TRUE(d.batch.empty());
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_EQ(*d.wake_at, at(3 + 1000));
  d = q.next(at(1003));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{4}));
}

TEST(BatchQueue, FullQueueRefusesAndDoesNotQueue) {
  BatchingPolicy p = batching(8, {}, 1000);
  p.max_queue_size = 2;
  BatchQueue q(p);
  push_n(q, 1, 2);
  TestPtr third = item(3);
  const Status s = q.push(third, at(5));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "queue is full: 2 requests are waiting (batching.max_queue_size 2)");
  EXPECT_EQ(third->enqueued, TimePoint{});  // left unchanged
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(ids(q.take_all()), (std::vector<int>{1, 2}));
  EXPECT_TRUE(q.push(third, at(6)).is_ok());  // room again
}

TEST(BatchQueue, RowsOutsideLimitsAreInvalid) {
  BatchQueue q(batching(4));
  Status s = q.push(item(1, 5), at(0));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("5 rows"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("max_batch_size 4"), std::string::npos) << s.message();
  s = q.push(item(2, 0), at(0));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("0 rows"), std::string::npos) << s.message();
  EXPECT_TRUE(q.push(item(3, 4), at(0)).is_ok());  // exactly the max is fine
  EXPECT_EQ(q.size(), 1u);
  // With batching off there is no row limit to exceed.
  BatchQueue off(batching(0));
  EXPECT_TRUE(off.push(item(4, 5), at(0)).is_ok());
}

TEST(BatchQueue, ExpiredItemsAreReturnedNeverBatched) {
  BatchQueue q(batching(8));
  TestPtr a = item(1), b = item(2), c = item(3);
  b->deadline = at(50);  // the middle one expires
  ASSERT_TRUE(q.push(a, at(0)).is_ok());
  ASSERT_TRUE(q.push(b, at(1)).is_ok());
  ASSERT_TRUE(q.push(c, at(2)).is_ok());
  const BatchQueue::Decision d = q.next(at(50));  // deadline <= now: expired
  EXPECT_EQ(ids(d.expired), (std::vector<int>{2}));
  EXPECT_EQ(ids(d.batch), (std::vector<int>{1, 3}));
  EXPECT_EQ(q.size(), 0u);
}

TEST(BatchQueue, AllExpiredLeavesNothingToWaitFor) {
  BatchQueue q(batching(8, {}, 1000));
  TestPtr a = item(1);
  a->deadline = at(10);
  ASSERT_TRUE(q.push(a, at(0)).is_ok());
  const BatchQueue::Decision d = q.next(at(10));
  EXPECT_EQ(ids(d.expired), (std::vector<int>{1}));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_FALSE(d.wake_at.has_value());
}

TEST(BatchQueue, WakeAtIsTheEarlierDeadline) {
  // Delay ends at 0 + 100; item 2's deadline is 50, so look again at 50 to refuse it.
  BatchQueue q(batching(8, {}, 100));
  TestPtr b = item(2);
  b->deadline = at(50);
  ASSERT_TRUE(q.push(item(1), at(0)).is_ok());
  ASSERT_TRUE(q.push(b, at(1)).is_ok());
  BatchQueue::Decision d = q.next(at(10));
  EXPECT_TRUE(d.batch.empty());
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_EQ(*d.wake_at, at(50));
  d = q.next(at(50));
  EXPECT_EQ(ids(d.expired), (std::vector<int>{2}));
  EXPECT_TRUE(d.batch.empty());
  ASSERT_TRUE(d.wake_at.has_value());
  EXPECT_EQ(*d.wake_at, at(100));
}

TEST(BatchQueue, DefaultTimeoutSetsDeadlineAndShorterOwnDeadlineIsKept) {
  BatchingPolicy p = batching(8, {}, 1000);
  p.default_timeout = microseconds(100);
  BatchQueue q(p);
  TestPtr plain = item(1), shorter = item(2), longer = item(3);
  shorter->deadline = at(50);
  longer->deadline = at(500);
  ASSERT_TRUE(q.push(plain, at(10)).is_ok());
  ASSERT_TRUE(q.push(shorter, at(10)).is_ok());
  ASSERT_TRUE(q.push(longer, at(10)).is_ok());
  EXPECT_EQ(plain->deadline, at(110));
  EXPECT_EQ(shorter->deadline, at(50));  // its own timeout may only shorten the default
  EXPECT_EQ(longer->deadline, at(110));
  const BatchQueue::Decision d = q.next(at(110));
  EXPECT_EQ(ids(d.expired), (std::vector<int>{1, 2, 3}));
}

TEST(BatchQueue, BatchingOffRunsOneItemPerBatch) {
  BatchQueue q(batching(0, {}, 1000));  // the delay plays no part without batching
  ASSERT_TRUE(q.push(item(1, 3), at(0)).is_ok());
  push_n(q, 2, 2, 1);
  for (int expected = 1; expected <= 3; ++expected) {
    const BatchQueue::Decision d = q.next(at(3));
    EXPECT_EQ(ids(d.batch), (std::vector<int>{expected}));
  }
  EXPECT_EQ(q.size(), 0u);
}

TEST(BatchQueue, TakeAllReturnsQueueOrderAndEmpties) {
  BatchQueue q(batching(8, {}, 1000));
  push_n(q, 1, 4);
  EXPECT_EQ(ids(q.take_all()), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(q.size(), 0u);
  EXPECT_TRUE(q.take_all().empty());
}

// ---------------------------------------------------------------------------------------
// DynamicBatcher

constexpr auto kLong = std::chrono::seconds(10);  // only a bug waits this long

// A gate the test opens; execute callbacks block on it to hold an instance busy.
class Gate {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(m_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

// What the callbacks saw, and a way to wait for it.
class Recorder {
 public:
  void executed(int instance, const std::vector<ItemPtr>& batch) {
    std::lock_guard<std::mutex> lock(m_);
    for (const ItemPtr& it : batch) ++static_cast<TestItem&>(*it).executed;
    batches_.push_back(ids(batch));
    instances_.push_back(instance);
    cv_.notify_all();
  }
  void rejected(const ItemPtr& it, const Status& why) {
    std::lock_guard<std::mutex> lock(m_);
    ++static_cast<TestItem&>(*it).rejected;
    rejections_.push_back({static_cast<const TestItem&>(*it).id, why});
    cv_.notify_all();
  }
  // Waits until `n` batches were executed; false after kLong.
  bool wait_batches(size_t n) {
    std::unique_lock<std::mutex> lock(m_);
    return cv_.wait_for(lock, kLong, [&] { return batches_.size() >= n; });
  }
  bool wait_rejections(size_t n) {
    std::unique_lock<std::mutex> lock(m_);
    return cv_.wait_for(lock, kLong, [&] { return rejections_.size() >= n; });
  }
  std::vector<std::vector<int>> batches() {
    std::lock_guard<std::mutex> lock(m_);
    return batches_;
  }
  std::vector<std::pair<int, Status>> rejections() {
    std::lock_guard<std::mutex> lock(m_);
    return rejections_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::vector<int>> batches_;
  std::vector<int> instances_;
  std::vector<std::pair<int, Status>> rejections_;
};

// A batcher whose execute records the batch, then (from call `hold_from` on, 0-based)
// blocks on `gate` until the test opens it.
struct Harness {
  explicit Harness(BatchingPolicy policy, int instances = 1, int hold_from = 0)
      : batcher(
            std::move(policy), instances,
            [this, hold_from](int instance, std::vector<ItemPtr> batch) {
              const int call = calls++;
              rec.executed(instance, batch);
              if (call >= hold_from) gate.wait();
            },
            [this](const ItemPtr& it, const Status& why) { rec.rejected(it, why); }) {}
  ~Harness() {
    gate.open();  // never leave a worker blocked when the batcher is torn down
    batcher.stop();
  }
  Gate gate;
  Recorder rec;
  std::atomic<int> calls{0};
  DynamicBatcher batcher;  // last: it is stopped before the rest is destroyed
};

TEST(DynamicBatcher, BatchFormsWhileTheInstanceIsBusy) {
  // One instance, delay 0: item 1 runs alone and holds the instance; items 2-5 queue
  // meanwhile and run as one batch when it frees.
  Harness h(batching(8), 1, 0);
  TestPtr first = item(1);
  ASSERT_TRUE(h.batcher.submit(first).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  EXPECT_EQ(h.batcher.busy_instances(), 1);
  std::vector<TestPtr> rest;
  for (int id = 2; id <= 5; ++id) {
    rest.push_back(item(id));
    ASSERT_TRUE(h.batcher.submit(rest.back()).is_ok());
  }
  EXPECT_EQ(h.batcher.queue_depth(), 4u);
  h.gate.open();
  ASSERT_TRUE(h.rec.wait_batches(2));
  EXPECT_EQ(h.rec.batches(), (std::vector<std::vector<int>>{{1}, {2, 3, 4, 5}}));
  EXPECT_TRUE(h.batcher.drain(milliseconds(10000)));
  EXPECT_EQ(h.batcher.queue_depth(), 0u);
  EXPECT_EQ(h.batcher.busy_instances(), 0);
}

TEST(DynamicBatcher, PreferredSizeRunsWithoutWaitingForTheDelay) {
  // Delay of an hour: four submits reach preferred size 4 and run; a lone item would not.
  Harness h(batching(8, {4}, 3600LL * 1000 * 1000), 1, 99);
  for (int id = 1; id <= 4; ++id) ASSERT_TRUE(h.batcher.submit(item(id)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  EXPECT_EQ(h.rec.batches(), (std::vector<std::vector<int>>{{1, 2, 3, 4}}));
}

TEST(DynamicBatcher, PartialBatchRunsWhenTheDelayEnds) {
  // Delay 2 ms, preferred 8: a single item runs once the batcher wakes at its delay end.
  Harness h(batching(8, {}, 2000), 1, 99);
  ASSERT_TRUE(h.batcher.submit(item(1)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  EXPECT_EQ(h.rec.batches(), (std::vector<std::vector<int>>{{1}}));
}

TEST(DynamicBatcher, EveryItemAnsweredOnceAcrossStop) {
  // Item 1 holds the only instance; 2-5 are queued when stop() runs on another thread.
  // stop() rejects them at once, then waits for item 1's batch, which the test releases.
  Harness h(batching(8), 1, 0);
  std::vector<TestPtr> items;
  for (int id = 1; id <= 5; ++id) items.push_back(item(id));
  ASSERT_TRUE(h.batcher.submit(items[0]).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  for (int i = 1; i < 5; ++i) ASSERT_TRUE(h.batcher.submit(items[static_cast<size_t>(i)]).is_ok());
  std::thread stopper([&] { h.batcher.stop(); });
  EXPECT_TRUE(h.rec.wait_rejections(4));  // not ASSERT: the stopper must be joined
  h.gate.open();
  stopper.join();
  h.batcher.stop();  // idempotent
  EXPECT_EQ(items[0]->executed.load(), 1);
  EXPECT_EQ(items[0]->rejected.load(), 0);
  for (size_t i = 1; i < items.size(); ++i) {
    EXPECT_EQ(items[i]->executed.load(), 0) << "item " << items[i]->id;
    EXPECT_EQ(items[i]->rejected.load(), 1) << "item " << items[i]->id;
  }
  for (const auto& [id, why] : h.rec.rejections()) {
    EXPECT_EQ(why.code(), StatusCode::kUnavailable);
    EXPECT_EQ(why.message(), "server is shutting down");
  }
  const Status late = h.batcher.submit(item(6));
  EXPECT_EQ(late.code(), StatusCode::kUnavailable);
}

TEST(DynamicBatcher, ManySubmittersEveryItemAnsweredExactlyOnce) {
  // Four threads submit 50 items each to two instances, and stop() comes at some point:
  // whatever interleaving happens, each accepted item is executed or rejected once, and
  // each refused one never reaches a callback.
  std::vector<TestPtr> items;
  for (int id = 0; id < 200; ++id) items.push_back(item(id));
  std::vector<char> accepted(items.size(), 0);
  {
    Harness h(batching(4), 2, 1 << 30);
    std::vector<std::thread> submitters;
    for (int t = 0; t < 4; ++t) {
      submitters.emplace_back([&, t] {
        for (size_t i = static_cast<size_t>(t); i < items.size(); i += 4) {
          accepted[i] = h.batcher.submit(items[i]).is_ok() ? 1 : 0;
        }
      });
    }
    EXPECT_TRUE(h.rec.wait_batches(3));  // not ASSERT: the submitters must be joined
    h.batcher.stop();
    for (std::thread& s : submitters) s.join();
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const int answers = items[i]->executed + items[i]->rejected;
    EXPECT_EQ(answers, accepted[i] ? 1 : 0) << "item " << i;
  }
}

TEST(DynamicBatcher, SubmitAfterStopAcceptingIsUnavailableAndQueuedWorkDrains) {
  Harness h(batching(8), 1, 0);
  ASSERT_TRUE(h.batcher.submit(item(1)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  ASSERT_TRUE(h.batcher.submit(item(2)).is_ok());
  h.batcher.stop_accepting();
  const Status s = h.batcher.submit(item(3));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "model is stopping: not accepting new requests");
  // The instance is held: nothing can finish, so drain gives up after its timeout.
  EXPECT_FALSE(h.batcher.drain(milliseconds(1)));
  h.gate.open();
  EXPECT_TRUE(h.batcher.drain(milliseconds(10000)));
  EXPECT_EQ(h.rec.batches(), (std::vector<std::vector<int>>{{1}, {2}}));
  EXPECT_TRUE(h.rec.rejections().empty());
}

TEST(DynamicBatcher, FullQueueRefusesSubmit) {
  BatchingPolicy p = batching(8);
  p.max_queue_size = 2;
  Harness h(p, 1, 0);
  ASSERT_TRUE(h.batcher.submit(item(1)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));  // item 1 runs: it no longer counts as waiting
  ASSERT_TRUE(h.batcher.submit(item(2)).is_ok());
  ASSERT_TRUE(h.batcher.submit(item(3)).is_ok());
  const Status s = h.batcher.submit(item(4));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "queue is full: 2 requests are waiting (batching.max_queue_size 2)");
}

TEST(DynamicBatcher, TwoInstancesRunConcurrently) {
  // Each execute waits until both are inside execute at once; with one instance (or
  // batches run one after the other) that never happens and the test fails on its timeout.
  std::mutex m;
  std::condition_variable cv;
  int running = 0;
  int saw_both = 0;
  std::vector<int> instances;
  Recorder rec;
  DynamicBatcher batcher(
      batching(8), 2,
      [&](int instance, std::vector<ItemPtr> batch) {
        std::unique_lock<std::mutex> lock(m);
        ++running;
        instances.push_back(instance);
        cv.notify_all();
        if (cv.wait_for(lock, kLong, [&] { return running == 2; })) ++saw_both;
        lock.unlock();
        rec.executed(instance, batch);
      },
      [&](const ItemPtr& it, const Status& why) { rec.rejected(it, why); });
  ASSERT_TRUE(batcher.submit(item(1)).is_ok());
  {
    // Item 2 goes in only once item 1 runs, so the two cannot share a batch.
    std::unique_lock<std::mutex> lock(m);
    ASSERT_TRUE(cv.wait_for(lock, kLong, [&] { return running == 1; }));
  }
  ASSERT_TRUE(batcher.submit(item(2)).is_ok());
  ASSERT_TRUE(rec.wait_batches(2));
  batcher.stop();
  std::lock_guard<std::mutex> lock(m);
  EXPECT_EQ(saw_both, 2);
  EXPECT_EQ(std::set<int>(instances.begin(), instances.end()), (std::set<int>{0, 1}));
}

TEST(DynamicBatcher, ItemExpiringWhileInstancesAreBusyIsRejected) {
  // Item 1 holds the only instance. Item 2 may wait 1 ms: it is refused at its deadline
  // while the instance is still held, and never executed. (Its own deadline rather than a
  // default timeout, which would also bind item 1 on a machine slow enough to start it late.)
  Harness h(batching(8), 1, 0);
  ASSERT_TRUE(h.batcher.submit(item(1)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  TestPtr late = item(2);
  late->deadline = Clock::now() + milliseconds(1);
  ASSERT_TRUE(h.batcher.submit(late).is_ok());
  ASSERT_TRUE(h.rec.wait_rejections(1));
  EXPECT_EQ(h.batcher.busy_instances(), 1);  // still held: the rejection did not wait for it
  const auto rejections = h.rec.rejections();
  ASSERT_EQ(rejections.size(), 1u);
  EXPECT_EQ(rejections[0].first, 2);
  EXPECT_EQ(rejections[0].second.code(), StatusCode::kUnavailable);
  EXPECT_EQ(rejections[0].second.message().rfind("request timed out after waiting ", 0), 0u)
      << rejections[0].second.message();
  h.gate.open();
  EXPECT_TRUE(h.batcher.drain(milliseconds(10000)));
  EXPECT_EQ(late->executed.load(), 0);
  EXPECT_EQ(late->rejected.load(), 1);
  EXPECT_EQ(h.batcher.queue_depth(), 0u);
}

TEST(DynamicBatcher, PastDeadlineIsRejectedNotExecuted) {
  Harness h(batching(8), 1, 99);
  TestPtr stale = item(1);
  stale->deadline = Clock::now() - milliseconds(1);
  ASSERT_TRUE(h.batcher.submit(stale).is_ok());
  ASSERT_TRUE(h.rec.wait_rejections(1));
  ASSERT_TRUE(h.batcher.submit(item(2)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  EXPECT_EQ(h.rec.batches(), (std::vector<std::vector<int>>{{2}}));
  EXPECT_EQ(stale->executed.load(), 0);
  EXPECT_EQ(stale->rejected.load(), 1);
}

TEST(DynamicBatcher, BatchingOffRunsEachRequestAlone) {
  Harness h(batching(0), 1, 0);
  ASSERT_TRUE(h.batcher.submit(item(1)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));
  for (int id = 2; id <= 4; ++id) ASSERT_TRUE(h.batcher.submit(item(id)).is_ok());
  h.gate.open();
  ASSERT_TRUE(h.rec.wait_batches(4));
  EXPECT_EQ(h.rec.batches(), (std::vector<std::vector<int>>{{1}, {2}, {3}, {4}}));
}

// run_now: with batching off and an idle instance the item runs on the caller's thread
// before run_now returns; otherwise it is left to the caller.
TEST(DynamicBatcher, RunNowRunsOnTheCallersThreadWhenAnInstanceIsIdle) {
  std::thread::id ran_on;
  std::vector<int> executed;
  DynamicBatcher batcher(
      batching(0), 1,
      [&](int, std::vector<ItemPtr> batch) {
        ran_on = std::this_thread::get_id();
        executed = ids(batch);
      },
      [](const ItemPtr&, const Status&) {});
  ItemPtr it = item(7);
  ASSERT_TRUE(batcher.run_now(it));
  EXPECT_EQ(it, nullptr);  // taken
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(executed, std::vector<int>{7});
  EXPECT_EQ(batcher.busy_instances(), 0);
  EXPECT_TRUE(batcher.drain(std::chrono::milliseconds(0)));
}

TEST(DynamicBatcher, RunNowDeclinesWhenBusyQueuedBatchingOrStopping) {
  Harness h(batching(0), 1, 0);
  ASSERT_TRUE(h.batcher.submit(item(1)).is_ok());
  ASSERT_TRUE(h.rec.wait_batches(1));  // the only instance is held by item 1
  ItemPtr busy = item(2);
  EXPECT_FALSE(h.batcher.run_now(busy));
  ASSERT_NE(busy, nullptr);  // left to the caller
  ASSERT_TRUE(h.batcher.submit(busy).is_ok());
  h.gate.open();
  ASSERT_TRUE(h.rec.wait_batches(2));
  EXPECT_EQ(h.rec.batches(), (std::vector<std::vector<int>>{{1}, {2}}));

  Harness on(batching(4), 1, 100);
  ItemPtr batched = item(3);
  EXPECT_FALSE(on.batcher.run_now(batched));  // batching on: the batcher forms batches
  ASSERT_NE(batched, nullptr);

  Harness stopping(batching(0), 1, 100);
  stopping.batcher.stop_accepting();
  ItemPtr late = item(4);
  EXPECT_FALSE(stopping.batcher.run_now(late));
  EXPECT_EQ(stopping.rec.batches().size(), 0u);
}

}  // namespace
}  // namespace infer::serve
