#include "runtime/device_arena.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <thread>

namespace infer::runtime {
namespace {

// Host memory standing in for device buffers; counts the chunks it hands out.
class HostBacking final : public ArenaBacking {
 public:
  // `fail`: refuse every chunk; `limit`: refuse chunks larger than this.
  explicit HostBacking(int* chunks, bool fail = false, size_t limit = SIZE_MAX)
      : chunks_(chunks), fail_(fail), limit_(limit) {}
  ~HostBacking() override {
    for (void* p : memory_) std::free(p);
  }
  Result<Chunk> allocate(size_t size, size_t alignment) override {
    if (fail_ || size > limit_) return unavailable("device out of memory");
    void* p = std::aligned_alloc(alignment, size);
    memory_.push_back(p);
    ++*chunks_;
    // The chunk's "buffer" handle is its address: the tests only compare handles.
    return Chunk{reinterpret_cast<infer_buffer*>(p), p};
  }

 private:
  int* chunks_;
  bool fail_;
  size_t limit_;
  std::vector<void*> memory_;
};

constexpr size_t kA = DeviceArena::kAlignment;

TEST(DeviceArena, BlocksAreAlignedDistinctAndMapped) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks), 4096);
  auto a = arena.allocate(10);
  auto b = arena.allocate(0);
  auto c = arena.allocate(kA + 1);
  ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok());
  EXPECT_EQ(a->size, kA);
  EXPECT_EQ(b->size, kA);  // a zero-byte tensor still gets its own block
  EXPECT_EQ(c->size, 2 * kA);
  for (const auto* blk : {&*a, &*b, &*c}) {
    EXPECT_EQ(blk->offset % kA, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(blk->host_ptr) % kA, 0u);
    EXPECT_EQ(static_cast<uint8_t*>(blk->host_ptr),
              reinterpret_cast<uint8_t*>(blk->buffer) + blk->offset);
  }
  EXPECT_NE(a->offset, b->offset);
  EXPECT_NE(b->offset, c->offset);
  EXPECT_EQ(chunks, 1);
  EXPECT_EQ(arena.in_use_bytes(), 4 * kA);
  // Writing every block in full must not overlap another (ASan would also catch it).
  std::memset(a->host_ptr, 1, a->size);
  std::memset(c->host_ptr, 3, c->size);
  EXPECT_EQ(static_cast<uint8_t*>(a->host_ptr)[kA - 1], 1);
}

TEST(DeviceArena, FreedBlocksAreReusedBestFit) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks), 64 * kA);
  auto big = arena.allocate(8 * kA);
  auto sep1 = arena.allocate(kA);
  auto small = arena.allocate(2 * kA);
  auto sep2 = arena.allocate(kA);
  ASSERT_TRUE(big.is_ok() && sep1.is_ok() && small.is_ok() && sep2.is_ok());
  ASSERT_TRUE(arena.release(*big));
  ASSERT_TRUE(arena.release(*small));
  // Free now: 8*kA at big's offset, 2*kA at small's offset, and the chunk's tail. The
  // best fit for 2*kA is small's old place, not the bigger hole.
  auto again = arena.allocate(2 * kA);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->offset, small->offset);
  auto mid = arena.allocate(5 * kA);
  ASSERT_TRUE(mid.is_ok());
  EXPECT_EQ(mid->offset, big->offset);
  EXPECT_EQ(chunks, 1);
}

TEST(DeviceArena, NeighboursMergeWhenReleased) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks), 8 * kA, 8 * kA);
  std::vector<DeviceArena::Block> blocks;
  for (int i = 0; i < 8; ++i) {
    auto b = arena.allocate(kA);
    ASSERT_TRUE(b.is_ok());
    blocks.push_back(*b);
  }
  EXPECT_EQ(chunks, 1);
  // Release in an order that needs merging on both sides.
  for (int i : {1, 3, 2, 0, 6, 4, 5, 7}) ASSERT_TRUE(arena.release(blocks[i]));
  EXPECT_EQ(arena.in_use_bytes(), 0u);
  // The whole chunk is one free block again: a chunk-sized request fits without growing.
  auto whole = arena.allocate(8 * kA);
  ASSERT_TRUE(whole.is_ok());
  EXPECT_EQ(whole->offset, 0u);
  EXPECT_EQ(chunks, 1);
}

TEST(DeviceArena, GrowsByDoublingChunksAndServesLargeRequests) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks), 4 * kA, 16 * kA);
  ASSERT_TRUE(arena.allocate(4 * kA).is_ok());  // fills chunk 0 (4 kA)
  ASSERT_TRUE(arena.allocate(kA).is_ok());      // chunk 1: 8 kA
  EXPECT_EQ(chunks, 2);
  EXPECT_EQ(arena.reserved_bytes(), 12 * kA);
  auto huge = arena.allocate(100 * kA);  // bigger than any chunk size: its own chunk
  ASSERT_TRUE(huge.is_ok());
  EXPECT_EQ(huge->offset, 0u);
  EXPECT_EQ(chunks, 3);
  EXPECT_EQ(arena.chunk_count(), 3u);
  EXPECT_EQ(arena.reserved_bytes(), 112 * kA);
}

TEST(DeviceArena, PeakCountsTheMostBytesInUseAtOnce) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks));
  auto a = arena.allocate(3 * kA);
  auto b = arena.allocate(2 * kA);
  ASSERT_TRUE(arena.release(*a));
  auto c = arena.allocate(kA);
  EXPECT_EQ(arena.peak_bytes(), 5 * kA);
  EXPECT_EQ(arena.in_use_bytes(), 3 * kA);
  ASSERT_TRUE(arena.release(*b));
  ASSERT_TRUE(arena.release(*c));
  EXPECT_EQ(arena.in_use_bytes(), 0u);
  EXPECT_EQ(arena.peak_bytes(), 5 * kA);
}

TEST(DeviceArena, ReleasingAnUnknownOrTwiceFreedBlockIsRefused) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks));
  auto a = arena.allocate(kA);
  ASSERT_TRUE(arena.release(*a));
  EXPECT_FALSE(arena.release(*a));
  DeviceArena::Block bogus = *a;
  bogus.offset += kA;
  EXPECT_FALSE(arena.release(bogus));
  EXPECT_EQ(arena.in_use_bytes(), 0u);
}

TEST(DeviceArena, BackingFailureIsReported) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks, /*fail=*/true), 4096);
  auto a = arena.allocate(10);
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnavailable);
  // The arena first asks for its usual chunk, then for just the request.
  EXPECT_EQ(a.status().message(), "arena: allocating a 256-byte chunk: device out of memory");
}

TEST(DeviceArena, FallsBackToRequestSizedChunksOnASmallDevice) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks, false, /*limit=*/3 * kA), 16 * kA);
  auto a = arena.allocate(2 * kA);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ(arena.reserved_bytes(), 2 * kA);
  auto b = arena.allocate(4 * kA);
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().message(), "arena: allocating a 1024-byte chunk: device out of memory");
  EXPECT_EQ(chunks, 1);
}

TEST(DeviceArena, ConcurrentAllocationsNeverOverlap) {
  int chunks = 0;
  DeviceArena arena(std::make_unique<HostBacking>(&chunks), 64 * kA);
  constexpr int kThreads = 8;
  constexpr int kRounds = 300;
  std::vector<std::thread> threads;
  std::atomic<int> overlaps{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1000 + t);
      std::vector<DeviceArena::Block> held;
      for (int i = 0; i < kRounds; ++i) {
        if (held.empty() || rng() % 3 != 0) {
          auto b = arena.allocate(1 + rng() % (4 * kA));
          if (!b.is_ok()) continue;
          // Stamp the whole block with this thread's id; a block shared with another
          // thread would show a foreign stamp when checked before release.
          std::memset(b->host_ptr, t + 1, b->size);
          held.push_back(*b);
        } else {
          const size_t k = rng() % held.size();
          const auto* p = static_cast<const uint8_t*>(held[k].host_ptr);
          for (size_t j = 0; j < held[k].size; ++j)
            if (p[j] != t + 1) {
              ++overlaps;
              break;
            }
          arena.release(held[k]);
          held.erase(held.begin() + static_cast<long>(k));
        }
      }
      for (const auto& b : held) arena.release(b);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(arena.in_use_bytes(), 0u);
  EXPECT_GT(arena.peak_bytes(), 0u);
}

}  // namespace
}  // namespace infer::runtime
