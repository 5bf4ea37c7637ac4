#include "memory.hpp"

#include <algorithm>
#include <cstdio>

#include "device.hpp"

namespace infer::vk {
namespace {

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

std::string mib(VkDeviceSize bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

MemoryAllocator::~MemoryAllocator() {
  // Every buffer is freed before the device goes; what is left are the empty blocks kept
  // for reuse.
  for (auto& block : blocks_) {
    if (block->mapped) device_.vk().vkUnmapMemory(device_.handle(), block->memory);
    device_.vk().vkFreeMemory(device_.handle(), block->memory, nullptr);
  }
}

size_t MemoryAllocator::block_count() const {
  std::lock_guard lock(mu_);
  return blocks_.size();
}

MaybeFailure MemoryAllocator::new_block(uint32_t type_index, VkDeviceSize size, bool dedicated,
                                        const std::string& what, MemoryBlock** out) {
  const VkDeviceSize limit = device_.max_allocation_size();
  if (size > limit)
    return failure(INFER_STATUS_OUT_OF_MEMORY,
                   "vulkan: " + what + " (" + mib(size) + ") exceeds the device's largest " +
                       "allocation (maxMemoryAllocationSize " + mib(limit) + ")");
  VkMemoryAllocateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  info.allocationSize = size;
  info.memoryTypeIndex = type_index;
  auto block = std::make_unique<MemoryBlock>();
  VkResult r = device_.vk().vkAllocateMemory(device_.handle(), &info, nullptr, &block->memory);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return failure(INFER_STATUS_OUT_OF_MEMORY, "vulkan: out of device memory allocating " + what +
                                                   " (a block of " + mib(size) + ")");
  if (r != VK_SUCCESS) return vk_failure(r, "vkAllocateMemory for " + what);
  block->size = size;
  block->type_index = type_index;
  block->dedicated = dedicated;
  if (device_.memory_type_flags(type_index) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    void* ptr = nullptr;
    r = device_.vk().vkMapMemory(device_.handle(), block->memory, 0, VK_WHOLE_SIZE, 0, &ptr);
    if (r != VK_SUCCESS) {
      device_.vk().vkFreeMemory(device_.handle(), block->memory, nullptr);
      return vk_failure(r, "vkMapMemory for " + what);
    }
    block->mapped = static_cast<std::byte*>(ptr);
  }
  block->free_ranges[0] = size;
  device_.host().log(INFER_LOG_DEBUG, "vulkan: new memory block of " + mib(size) + " (type " +
                                          std::to_string(type_index) +
                                          (dedicated ? ", dedicated" : "") + ") for " + what);
  *out = block.get();
  blocks_.push_back(std::move(block));
  return std::nullopt;
}

MaybeFailure MemoryAllocator::allocate(uint32_t type_index, VkDeviceSize size,
                                       VkDeviceSize alignment, const std::string& what,
                                       Allocation* out) {
  size = std::max<VkDeviceSize>(size, 1);
  std::lock_guard lock(mu_);
  if (size > kDedicatedThreshold) {
    MemoryBlock* block = nullptr;
    if (MaybeFailure f = new_block(type_index, size, true, what, &block)) return f;
    block->free_ranges.clear();
    block->used = size;
    *out = Allocation{block, 0, size};
    return std::nullopt;
  }
  // First fit over the shared blocks of this type.
  for (auto& b : blocks_) {
    if (b->dedicated || b->type_index != type_index) continue;
    for (auto it = b->free_ranges.begin(); it != b->free_ranges.end(); ++it) {
      const VkDeviceSize start = align_up(it->first, alignment);
      const VkDeviceSize end = it->first + it->second;
      if (start + size > end) continue;
      const VkDeviceSize range_offset = it->first;
      b->free_ranges.erase(it);
      // Put back what is left on either side of the allocation.
      if (start > range_offset) b->free_ranges[range_offset] = start - range_offset;
      if (start + size < end) b->free_ranges[start + size] = end - (start + size);
      b->used += size;
      *out = Allocation{b.get(), start, size};
      return std::nullopt;
    }
  }
  MemoryBlock* block = nullptr;
  if (MaybeFailure f = new_block(type_index, kBlockSize, false, what, &block)) return f;
  block->free_ranges.clear();
  block->free_ranges[size] = kBlockSize - size;
  block->used = size;
  *out = Allocation{block, 0, size};
  return std::nullopt;
}

void MemoryAllocator::free(const Allocation& a) {
  if (a.block == nullptr) return;
  std::lock_guard lock(mu_);
  MemoryBlock* b = a.block;
  b->used -= a.size;
  if (b->dedicated) {
    release_block(b);
    return;
  }
  // Insert the range and merge it with free neighbours.
  auto [it, inserted] = b->free_ranges.emplace(a.offset, a.size);
  (void)inserted;
  auto next = std::next(it);
  if (next != b->free_ranges.end() && it->first + it->second == next->first) {
    it->second += next->second;
    b->free_ranges.erase(next);
  }
  if (it != b->free_ranges.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      b->free_ranges.erase(it);
    }
  }
  if (b->used == 0) {
    // Keep one empty block per memory type for the next burst of small allocations;
    // release any further empty block.
    for (auto& other : blocks_)
      if (other.get() != b && !other->dedicated && other->type_index == b->type_index &&
          other->used == 0) {
        release_block(b);
        return;
      }
  }
}

void MemoryAllocator::release_block(MemoryBlock* b) {
  if (b->mapped) device_.vk().vkUnmapMemory(device_.handle(), b->memory);
  device_.vk().vkFreeMemory(device_.handle(), b->memory, nullptr);
  blocks_.erase(std::remove_if(blocks_.begin(), blocks_.end(),
                               [&](const std::unique_ptr<MemoryBlock>& p) { return p.get() == b; }),
                blocks_.end());
}

MaybeFailure Buffer::create(Device& device, infer_memory_kind kind, VkDeviceSize size,
                            VkDeviceSize alignment, const std::string& what,
                            std::unique_ptr<Buffer>* out) {
  if (kind != INFER_MEMORY_DEVICE_LOCAL && kind != INFER_MEMORY_HOST_VISIBLE &&
      kind != INFER_MEMORY_HOST_PINNED)
    return failure(INFER_STATUS_INVALID_ARGUMENT,
                   "vulkan: buffer_alloc: unknown memory kind " + std::to_string(int(kind)));
  if (alignment != 0 && (alignment & (alignment - 1)) != 0)
    return failure(INFER_STATUS_INVALID_ARGUMENT, "vulkan: buffer_alloc: alignment " +
                                                      std::to_string(alignment) +
                                                      " is not a power of two");
  // One buffer lives in one allocation, so nothing larger can exist on this device;
  // refusing here also keeps an absurd size away from vkCreateBuffer.
  if (size > device.max_allocation_size())
    return failure(INFER_STATUS_OUT_OF_MEMORY,
                   "vulkan: " + what + " exceeds the device's largest allocation (" +
                       std::to_string(device.max_allocation_size()) + " bytes)");
  std::unique_ptr<Buffer> buffer(new Buffer(device, kind));
  buffer->size_ = size;
  const DeviceFns& vk = device.vk();
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  // A zero-sized VkBuffer is invalid; the few extra bytes are never addressed.
  info.size = std::max<VkDeviceSize>(align_up(size, 4), 16);
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  const std::vector<uint32_t>& families = device.queue_families();
  if (families.size() > 1) {
    // Copies may run on a transfer-only queue family: share the buffer between the
    // families instead of transferring ownership back and forth.
    info.sharingMode = VK_SHARING_MODE_CONCURRENT;
    info.queueFamilyIndexCount = static_cast<uint32_t>(families.size());
    info.pQueueFamilyIndices = families.data();
  } else {
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  }
  if (VkResult r = vk.vkCreateBuffer(device.handle(), &info, nullptr, &buffer->buffer_);
      r != VK_SUCCESS) {
    buffer->buffer_ = VK_NULL_HANDLE;
    return vk_failure(r, "vkCreateBuffer for " + what);
  }
  VkMemoryRequirements req{};
  vk.vkGetBufferMemoryRequirements(device.handle(), buffer->buffer_, &req);
  int type_index = device.memory_type(kind, req.memoryTypeBits);
  if (type_index < 0)
    return failure(INFER_STATUS_UNSUPPORTED,
                   "vulkan: the device has no memory type for " + what + " (kind " +
                       std::to_string(int(kind)) + ")");
  // 256 bytes keeps every buffer start aligned for storage-buffer binding on any device
  // (minStorageBufferOffsetAlignment is at most 256) and for the host's SIMD code.
  const VkDeviceSize align =
      std::max({req.alignment, static_cast<VkDeviceSize>(alignment), VkDeviceSize{256}});
  if (MaybeFailure f = device.memory().allocate(static_cast<uint32_t>(type_index), req.size,
                                                align, what, &buffer->allocation_))
    return f;
  if (VkResult r = vk.vkBindBufferMemory(device.handle(), buffer->buffer_,
                                         buffer->allocation_.block->memory,
                                         buffer->allocation_.offset);
      r != VK_SUCCESS)
    return vk_failure(r, "vkBindBufferMemory for " + what);
  buffer->mappable_ = buffer->allocation_.mapped() != nullptr &&
                      (kind != INFER_MEMORY_DEVICE_LOCAL || device.host_addressable());
  *out = std::move(buffer);
  return std::nullopt;
}

Buffer::~Buffer() {
  if (buffer_ != VK_NULL_HANDLE) device_.vk().vkDestroyBuffer(device_.handle(), buffer_, nullptr);
  device_.memory().free(allocation_);
}

}  // namespace infer::vk
