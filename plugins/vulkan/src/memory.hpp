// Device memory: a sub-allocator over large VkDeviceMemory blocks, and the infer_buffer
// object (a VkBuffer bound to a piece of such a block).
//
// Drivers limit the number of live VkDeviceMemory allocations (maxMemoryAllocationCount,
// often 4096) and allocating one is slow, while the host allocates many small buffers
// (inputs, outputs, staging). So requests up to kDedicatedThreshold share 64 MiB blocks,
// each block carved first-fit with neighbouring free ranges merged on free; larger
// requests get a block of their own. Host-visible blocks are mapped once, for their
// whole life.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "failure.hpp"

namespace infer::vk {

class Device;

struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  uint32_t type_index = 0;
  std::byte* mapped = nullptr;  // non-null for host-visible memory
  bool dedicated = false;       // holds exactly one allocation
  std::map<VkDeviceSize, VkDeviceSize> free_ranges;  // offset -> size
  VkDeviceSize used = 0;
};

struct Allocation {
  MemoryBlock* block = nullptr;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  std::byte* mapped() const { return block && block->mapped ? block->mapped + offset : nullptr; }
};

class MemoryAllocator {
 public:
  static constexpr VkDeviceSize kBlockSize = VkDeviceSize{64} << 20;
  static constexpr VkDeviceSize kDedicatedThreshold = VkDeviceSize{16} << 20;

  explicit MemoryAllocator(Device& device) : device_(device) {}
  ~MemoryAllocator();
  MemoryAllocator(const MemoryAllocator&) = delete;
  MemoryAllocator& operator=(const MemoryAllocator&) = delete;

  // Allocates `size` bytes of memory type `type_index` aligned to `alignment` (a power of
  // two). `what` names the allocation in errors ("a buffer of 300 bytes").
  MaybeFailure allocate(uint32_t type_index, VkDeviceSize size, VkDeviceSize alignment,
                        const std::string& what, Allocation* out);
  void free(const Allocation& allocation);

  // Live VkDeviceMemory objects and the bytes they hold (for logs and tests).
  size_t block_count() const;

 private:
  MaybeFailure new_block(uint32_t type_index, VkDeviceSize size, bool dedicated,
                         const std::string& what, MemoryBlock** out);
  void release_block(MemoryBlock* block);

  Device& device_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;  // guarded by mu_
};

// An infer_buffer: a VkBuffer usable as a storage buffer and as both ends of a copy,
// bound to an Allocation.
class Buffer {
 public:
  // `kind` selects the memory type (see Device::memory_type). Size 0 is allowed (the
  // VkBuffer then has a few bytes, never read).
  static MaybeFailure create(Device& device, infer_memory_kind kind, VkDeviceSize size,
                             VkDeviceSize alignment, const std::string& what,
                             std::unique_ptr<Buffer>* out);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Device& device() const { return device_; }
  infer_memory_kind kind() const { return kind_; }
  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // The host address of byte 0 when the memory is host-visible, else null.
  std::byte* mapped() const { return allocation_.mapped(); }
  // Whether the host may read and write the buffer directly (buffer_map): host-visible
  // kinds always, DEVICE_LOCAL only on a host_addressable (unified memory) device.
  bool host_mappable() const { return mappable_; }
  bool contains(size_t offset, size_t bytes) const {
    return sdk::range_fits(size_, offset, bytes);
  }

 private:
  Buffer(Device& device, infer_memory_kind kind) : device_(device), kind_(kind) {}
  Device& device_;
  infer_memory_kind kind_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  Allocation allocation_;
  bool mappable_ = false;
};

}  // namespace infer::vk
