// A per-device memory arena: sub-allocates tensors from a few large device buffers and
// reuses freed blocks, so a run costs no buffer_alloc/buffer_free calls once the arena
// has grown to the model's working set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "infer/plugin_api.h"
#include "infer/status.hpp"

namespace infer::runtime {

// Where the arena's large buffers come from (a plugin device in production, plain host
// memory in tests). The backing owns the chunks it hands out and frees them when it is
// destroyed, which the arena does last.
class ArenaBacking {
 public:
  struct Chunk {
    infer_buffer* buffer = nullptr;  // the device buffer (may be null for host test memory)
    void* host_ptr = nullptr;        // its mapping when the host can address it, else null
  };
  virtual ~ArenaBacking() = default;
  virtual Result<Chunk> allocate(size_t size, size_t alignment) = 0;
};

class DeviceArena {
 public:
  // Every block starts at a multiple of kAlignment within its chunk, and chunks are
  // allocated with that alignment: enough for any SIMD width and for GPU copy engines.
  static constexpr size_t kAlignment = 256;
  static constexpr size_t kDefaultMinChunk = size_t{1} << 20;   // 1 MiB
  static constexpr size_t kDefaultMaxChunk = size_t{64} << 20;  // 64 MiB

  struct Block {
    infer_buffer* buffer = nullptr;
    size_t offset = 0;         // bytes from the start of `buffer`
    size_t size = 0;           // bytes reserved (requested size rounded up)
    void* host_ptr = nullptr;  // mapped address of the block's first byte, or null
    uint32_t chunk = 0;
    bool valid() const { return size != 0; }
  };

  // Chunks start at `min_chunk` bytes and double (up to `max_chunk`) each time the arena
  // has to grow, so a big model needs few chunks; a request larger than that gets a
  // chunk of its own size.
  explicit DeviceArena(std::unique_ptr<ArenaBacking> backing, size_t min_chunk = kDefaultMinChunk,
                       size_t max_chunk = kDefaultMaxChunk);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Best fit among the free blocks; grows by one chunk when none fits (a chunk of just
  // the request's size when the backing refuses the usual chunk size). A zero-byte
  // request still gets a distinct block. Thread-safe.
  Result<Block> allocate(size_t bytes);
  // Returns a block to the free list, merging it with free neighbours. False (and no
  // change) when `block` is not an allocated block of this arena. Thread-safe.
  bool release(const Block& block);

  size_t in_use_bytes() const;
  size_t peak_bytes() const;      // the most bytes ever in use at once
  size_t reserved_bytes() const;  // the sum of the chunks obtained from the backing
  size_t chunk_count() const;

 private:
  struct ChunkInfo {
    ArenaBacking::Chunk mem;
    size_t size = 0;
  };
  using Pos = std::pair<uint32_t, size_t>;  // (chunk, offset)

  void insert_free(uint32_t chunk, size_t offset, size_t size);
  void erase_free(uint32_t chunk, size_t offset, size_t size);
  Status grow(size_t need);

  std::unique_ptr<ArenaBacking> backing_;
  const size_t max_chunk_;
  size_t next_chunk_;
  mutable std::mutex mu_;
  std::vector<ChunkInfo> chunks_;
  std::set<std::tuple<size_t, uint32_t, size_t>> free_by_size_;  // (size, chunk, offset)
  std::map<Pos, size_t> free_by_pos_;                            // -> size
  std::map<Pos, size_t> allocated_;                              // -> size
  size_t in_use_ = 0;
  size_t peak_ = 0;
  size_t reserved_ = 0;
};

}  // namespace infer::runtime
