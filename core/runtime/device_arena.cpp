#include "runtime/device_arena.hpp"

#include <algorithm>
#include <string>

namespace infer::runtime {
namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

DeviceArena::DeviceArena(std::unique_ptr<ArenaBacking> backing, size_t min_chunk, size_t max_chunk)
    : backing_(std::move(backing)),
      max_chunk_(std::max(round_up(max_chunk, kAlignment), kAlignment)),
      next_chunk_(std::max(round_up(min_chunk, kAlignment), kAlignment)) {}

DeviceArena::~DeviceArena() = default;

void DeviceArena::insert_free(uint32_t chunk, size_t offset, size_t size) {
  free_by_size_.emplace(size, chunk, offset);
  free_by_pos_.emplace(Pos{chunk, offset}, size);
}

void DeviceArena::erase_free(uint32_t chunk, size_t offset, size_t size) {
  free_by_size_.erase({size, chunk, offset});
  free_by_pos_.erase(Pos{chunk, offset});
}

Status DeviceArena::grow(size_t need) {
  size_t size = std::max(need, next_chunk_);
  Result<ArenaBacking::Chunk> mem = backing_->allocate(size, kAlignment);
  if (!mem.is_ok() && size > need) {
    // A device with little memory left may still fit the request itself.
    size = need;
    mem = backing_->allocate(size, kAlignment);
  }
  if (!mem.is_ok())
    return mem.status().with_context("arena: allocating a " + std::to_string(size) + "-byte chunk");
  const auto index = static_cast<uint32_t>(chunks_.size());
  chunks_.push_back(ChunkInfo{*mem, size});
  reserved_ += size;
  insert_free(index, 0, size);
  next_chunk_ = std::min(next_chunk_ * 2, max_chunk_);
  return Status::ok();
}

Result<DeviceArena::Block> DeviceArena::allocate(size_t bytes) {
  const size_t need = round_up(std::max<size_t>(bytes, 1), kAlignment);
  std::lock_guard lock(mu_);
  auto it = free_by_size_.lower_bound({need, 0, 0});
  if (it == free_by_size_.end()) {
    INFER_RETURN_IF_ERROR(grow(need));
    it = free_by_size_.lower_bound({need, 0, 0});
  }
  const auto [size, chunk, offset] = *it;
  erase_free(chunk, offset, size);
  if (size > need) insert_free(chunk, offset + need, size - need);
  allocated_.emplace(Pos{chunk, offset}, need);
  in_use_ += need;
  peak_ = std::max(peak_, in_use_);

  Block b;
  b.buffer = chunks_[chunk].mem.buffer;
  b.offset = offset;
  b.size = need;
  b.chunk = chunk;
  if (chunks_[chunk].mem.host_ptr != nullptr)
    b.host_ptr = static_cast<uint8_t*>(chunks_[chunk].mem.host_ptr) + offset;
  return b;
}

bool DeviceArena::release(const Block& block) {
  std::lock_guard lock(mu_);
  auto it = allocated_.find(Pos{block.chunk, block.offset});
  if (it == allocated_.end() || it->second != block.size) return false;
  allocated_.erase(it);
  in_use_ -= block.size;

  size_t offset = block.offset;
  size_t size = block.size;
  // Merge with the free block right after this one...
  auto next = free_by_pos_.find(Pos{block.chunk, offset + size});
  if (next != free_by_pos_.end()) {
    const size_t next_size = next->second;
    erase_free(block.chunk, offset + size, next_size);
    size += next_size;
  }
  // ...and with the one right before it.
  auto after = free_by_pos_.lower_bound(Pos{block.chunk, offset});
  if (after != free_by_pos_.begin()) {
    auto prev = std::prev(after);
    if (prev->first.first == block.chunk && prev->first.second + prev->second == offset) {
      const size_t prev_offset = prev->first.second;
      const size_t prev_size = prev->second;
      erase_free(block.chunk, prev_offset, prev_size);
      offset = prev_offset;
      size += prev_size;
    }
  }
  insert_free(block.chunk, offset, size);
  return true;
}

size_t DeviceArena::in_use_bytes() const {
  std::lock_guard lock(mu_);
  return in_use_;
}

size_t DeviceArena::peak_bytes() const {
  std::lock_guard lock(mu_);
  return peak_;
}

size_t DeviceArena::reserved_bytes() const {
  std::lock_guard lock(mu_);
  return reserved_;
}

size_t DeviceArena::chunk_count() const {
  std::lock_guard lock(mu_);
  return chunks_.size();
}

}  // namespace infer::runtime
