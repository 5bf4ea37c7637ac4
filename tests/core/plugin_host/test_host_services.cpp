#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "infer/plugin.hpp"
#include "plugin_host/host_services.hpp"
#include "plugin_host/status_bridge.hpp"
#include "test_util.hpp"

namespace infer::host {
namespace {

using testing::LogRecorder;

struct Calls {
  std::mutex mu;
  std::vector<std::pair<size_t, size_t>> ranges;
  std::set<std::thread::id> threads;
  std::vector<std::atomic<int>>* hits = nullptr;
  int sleep_us = 0;
};

void record_range(void* user, size_t b, size_t e) {
  auto* c = static_cast<Calls*>(user);
  for (size_t i = b; i < e; ++i) (*c->hits)[i].fetch_add(1);
  if (c->sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(c->sleep_us));
  std::lock_guard<std::mutex> lock(c->mu);
  c->ranges.emplace_back(b, e);
  c->threads.insert(std::this_thread::get_id());
}

TEST(HostServices, TableIdentifiesTheHost) {
  HostServices hs("good", std::make_shared<tbb::task_arena>(3));
  const infer_host_services* t = hs.table();
  EXPECT_EQ(t->struct_size, sizeof(infer_host_services));
  EXPECT_EQ(t->abi_major, INFER_ABI_VERSION_MAJOR);
  EXPECT_EQ(t->abi_minor, INFER_ABI_VERSION_MINOR);
  EXPECT_EQ(t->num_threads(t->host_ctx), 3u);
  EXPECT_EQ(t->compute_precision, INFER_PRECISION_FP32);
}

TEST(HostServices, CarriesTheSessionsComputePrecision) {
  HostServices hs("good", nullptr, {}, {}, INFER_PRECISION_BF16);
  EXPECT_EQ(hs.table()->compute_precision, INFER_PRECISION_BF16);
  EXPECT_EQ(sdk::Host(hs.table()).compute_precision(), INFER_PRECISION_BF16);
  // A table from a host older than minor 3 ends before the field: the plugin reads fp32.
  infer_host_services old = *hs.table();
  old.struct_size = offsetof(infer_host_services, compute_precision);
  EXPECT_EQ(sdk::Host(&old).compute_precision(), INFER_PRECISION_FP32);
}

TEST(HostServices, ParallelForCoversTheRangeExactlyOnceInWholeGrains) {
  HostServices hs("good", std::make_shared<tbb::task_arena>(4));
  const infer_host_services* t = hs.table();
  const size_t begin = 3, end = 10003, grain = 7;
  std::vector<std::atomic<int>> hits(end);
  Calls calls;
  calls.hits = &hits;
  t->parallel_for(t->host_ctx, begin, end, grain, record_range, &calls);
  for (size_t i = 0; i < end; ++i) ASSERT_EQ(hits[i].load(), i < begin ? 0 : 1) << "index " << i;
  for (auto [b, e] : calls.ranges) {
    EXPECT_EQ((b - begin) % grain, 0u) << b;
    if (e != end) {
      EXPECT_GE(e - b, grain);
    }
  }
}

TEST(HostServices, ParallelForSpreadsAcrossThreads) {
  HostServices hs("good", std::make_shared<tbb::task_arena>(4));
  const infer_host_services* t = hs.table();
  std::vector<std::atomic<int>> hits(64);
  Calls calls;
  calls.hits = &hits;
  calls.sleep_us = 2000;  // long enough that an idle worker joins in
  t->parallel_for(t->host_ctx, 0, 64, 1, record_range, &calls);
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  // oneTBB never gives an arena more threads than the machine has.
  size_t expected = std::min<size_t>(2, std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_GE(calls.threads.size(), expected);
}

struct Grid {
  const infer_host_services* t;
  std::vector<std::atomic<int>>* cells;
  size_t cols;
};

void inner_row(void* user, size_t b, size_t e) {
  auto* g = static_cast<std::pair<Grid*, size_t>*>(user);
  for (size_t c = b; c < e; ++c) (*g->first->cells)[g->second * g->first->cols + c].fetch_add(1);
}

void outer_rows(void* user, size_t b, size_t e) {
  auto* g = static_cast<Grid*>(user);
  for (size_t r = b; r < e; ++r) {
    std::pair<Grid*, size_t> ctx{g, r};
    g->t->parallel_for(g->t->host_ctx, 0, g->cols, 3, inner_row, &ctx);
  }
}

TEST(HostServices, ParallelForNestsAndWorksFromInsideTheArena) {
  auto arena = std::make_shared<tbb::task_arena>(4);
  HostServices hs("good", arena);
  const infer_host_services* t = hs.table();
  const size_t rows = 37, cols = 41;
  std::vector<std::atomic<int>> cells(rows * cols);
  Grid grid{t, &cells, cols};
  // From outside the arena...
  t->parallel_for(t->host_ctx, 0, rows, 2, outer_rows, &grid);
  // ...and from a thread already inside it (as a runtime task would call a CPU plugin).
  arena->execute([&] { t->parallel_for(t->host_ctx, 0, rows, 5, outer_rows, &grid); });
  for (auto& c : cells) ASSERT_EQ(c.load(), 2);
}

TEST(HostServices, ParallelForOnEmptyRangeAndZeroGrain) {
  HostServices hs("good", nullptr);  // default arena
  const infer_host_services* t = hs.table();
  std::vector<std::atomic<int>> hits(10);
  Calls calls;
  calls.hits = &hits;
  t->parallel_for(t->host_ctx, 5, 5, 1, record_range, &calls);
  t->parallel_for(t->host_ctx, 6, 2, 1, record_range, &calls);
  EXPECT_TRUE(calls.ranges.empty());
  t->parallel_for(t->host_ctx, 0, 10, 0, record_range, &calls);  // grain 0 means 1
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// Set on a thread while it is inside parallel_for as the loop's caller.
thread_local bool t_calling_loop = false;

struct Meeting {
  tbb::task_arena* arena = nullptr;
  std::atomic<int> arrived{0};
  std::atomic<int> probes_ran{0};
  std::atomic<int> probes_on_waiting_caller{0};
};

// Two chunks that meet: each waits (up to a second) until both run, so another thread
// has taken one. The caller's chunk then queues probe tasks in the arena (as another
// run's nodes would be) and returns; the other chunk sleeps, so the caller has to wait
// for the loop while the probes are there to be taken.
void meeting_chunk(void* user, size_t, size_t) {
  auto* m = static_cast<Meeting*>(user);
  m->arrived.fetch_add(1);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (m->arrived.load() < 2 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (t_calling_loop) {
    for (int i = 0; i < 20; ++i)
      m->arena->enqueue([m] {
        if (t_calling_loop) m->probes_on_waiting_caller.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        m->probes_ran.fetch_add(1);
      });
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// While a caller waits for its parallel_for it runs only that loop's chunks, never
// another task of the arena, so per-thread scratch the caller handed to the loop's
// bodies stays its own.
TEST(HostServices, ParallelForCallerRunsNoOtherTaskWhileWaiting) {
  auto arena = std::make_shared<tbb::task_arena>(2);
  HostServices hs("good", arena);
  const infer_host_services* t = hs.table();
  Meeting m;
  m.arena = arena.get();
  for (int round = 0; round < 3; ++round) {
    m.arrived = 0;
    // From inside the arena, as the runtime's partition tasks call plugins.
    arena->execute([&] {
      t_calling_loop = true;
      t->parallel_for(t->host_ctx, 0, 2, 1, meeting_chunk, &m);
      t_calling_loop = false;
    });
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (m.probes_ran.load() < 60 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(m.probes_ran.load(), 60);
  EXPECT_EQ(m.probes_on_waiting_caller.load(), 0);
}

void bump(void* user) { static_cast<std::atomic<int>*>(user)->fetch_add(1); }

TEST(HostServices, TaskGroupRunsEveryTaskBeforeWaitReturns) {
  HostServices hs("good", std::make_shared<tbb::task_arena>(2));
  const infer_host_services* t = hs.table();
  std::atomic<int> count{0};
  infer_task_group* g = t->task_group_create(t->host_ctx);
  ASSERT_NE(g, nullptr);
  for (int i = 0; i < 100; ++i) t->task_group_run(g, bump, &count);
  t->task_group_wait(g);
  EXPECT_EQ(count.load(), 100);
  // A group is reusable after a wait, and may be used from another thread.
  std::thread other([&] {
    for (int i = 0; i < 10; ++i) t->task_group_run(g, bump, &count);
    t->task_group_wait(g);
  });
  other.join();
  EXPECT_EQ(count.load(), 110);
  t->task_group_destroy(g);
}

TEST(HostServices, GetOptionCopiesTruncatesAndReportsLength) {
  HostServices hs("good", nullptr,
                  {{"device", "1"}, {"mode", "fast"}, {"mode", "slow"}, {"empty", ""}});
  const infer_host_services* t = hs.table();
  char buf[16];
  EXPECT_EQ(t->get_option(t->host_ctx, "mode", buf, sizeof buf), 4);
  EXPECT_STREQ(buf, "fast");  // the first entry of a key wins
  EXPECT_EQ(t->get_option(t->host_ctx, "mode", nullptr, 0), 4);
  char small[3] = {'x', 'x', 'x'};
  EXPECT_EQ(t->get_option(t->host_ctx, "mode", small, sizeof small), 4);
  EXPECT_STREQ(small, "fa");
  EXPECT_EQ(t->get_option(t->host_ctx, "empty", buf, sizeof buf), 0);
  EXPECT_STREQ(buf, "");
  EXPECT_EQ(t->get_option(t->host_ctx, "missing", buf, sizeof buf), -1);
  EXPECT_EQ(t->get_option(t->host_ctx, nullptr, buf, sizeof buf), -1);
  EXPECT_EQ(hs.option("device").value_or("?"), "1");
  EXPECT_FALSE(hs.option("missing").has_value());
}

TEST(HostServices, StatusesCarryCodeAndCopiedMessage) {
  HostServices hs("good", nullptr);
  const infer_host_services* t = hs.table();
  std::string msg = "no driver";
  infer_status* s = t->status_create(t->host_ctx, INFER_STATUS_UNAVAILABLE, msg.c_str());
  msg = "changed";  // the status holds its own copy
  EXPECT_EQ(t->status_code(s), INFER_STATUS_UNAVAILABLE);
  EXPECT_STREQ(t->status_message(s), "no driver");
  t->status_free(s);
  EXPECT_EQ(t->status_create(t->host_ctx, INFER_STATUS_OK, "x"), nullptr);
  EXPECT_EQ(t->status_code(nullptr), INFER_STATUS_OK);
  infer_status* n = t->status_create(t->host_ctx, INFER_STATUS_INTERNAL, nullptr);
  EXPECT_STREQ(t->status_message(n), "");
  t->status_free(n);
}

TEST(HostServices, LogPrefixesThePluginNameAndMapsLevels) {
  LogRecorder rec;
  HostServices hs("vulkan", nullptr, {}, rec.sink());
  const infer_host_services* t = hs.table();
  t->log(t->host_ctx, INFER_LOG_WARNING, "slow path");
  t->log(t->host_ctx, INFER_LOG_DEBUG, "detail");
  t->log(t->host_ctx, INFER_LOG_ERROR, nullptr);
  ASSERT_EQ(rec.lines.size(), 3u);
  EXPECT_EQ(rec.lines[0].first, LogLevel::kWarning);
  EXPECT_EQ(rec.lines[0].second, "[vulkan] slow path");
  EXPECT_EQ(rec.lines[1].first, LogLevel::kDebug);
  EXPECT_EQ(rec.lines[1].second, "[vulkan] detail");
  EXPECT_EQ(rec.lines[2].first, LogLevel::kError);
}

TEST(HostServices, IsCancelledReadsTheRunContext) {
  HostServices hs("good", nullptr);
  const infer_host_services* t = hs.table();
  RunContext run;
  EXPECT_FALSE(t->is_cancelled(t->host_ctx, nullptr));
  EXPECT_FALSE(t->is_cancelled(t->host_ctx, &run));
  std::thread([&] { run.cancel(); }).join();
  EXPECT_TRUE(t->is_cancelled(t->host_ctx, &run));
}

TEST(HostServices, HostAllocHonoursAlignment) {
  HostServices hs("good", nullptr);
  const infer_host_services* t = hs.table();
  for (size_t align : {1u, 8u, 64u, 4096u}) {
    void* p = t->host_alloc(t->host_ctx, 100, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
    std::memset(p, 0xab, 100);
    t->host_free(t->host_ctx, p);
  }
  EXPECT_EQ(t->host_alloc(t->host_ctx, 100, 48), nullptr);  // not a power of two
  EXPECT_EQ(t->host_alloc(t->host_ctx, 100, 0), nullptr);
  void* z = t->host_alloc(t->host_ctx, 0, 16);
  EXPECT_NE(z, nullptr);
  t->host_free(t->host_ctx, z);
  t->host_free(t->host_ctx, nullptr);
}

}  // namespace
}  // namespace infer::host
