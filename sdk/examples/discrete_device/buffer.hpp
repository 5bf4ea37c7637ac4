// Buffers: the plugin's memory objects (infer_buffer).
//
// DEVICE_LOCAL buffers model memory on the card. The plugin keeps their bytes in blocks
// it never hands to the host: buffer_map refuses them, and the only ways in and out are
// copies enqueued on a stream (copy_batch) and the plugin's own kernels. That is exactly
// the contract a real GPU plugin has to honour, so the host's staging logic is exercised
// honestly even though the "device" is ordinary RAM.
//
// HOST_VISIBLE and HOST_PINNED buffers model staging memory in host RAM that the device
// can also reach; the host may map them. They do not count against device memory.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

#include "device.hpp"

namespace infer::example {

class Buffer {
 public:
  // Allocates `size` bytes aligned to `alignment` (0 or a power of two); DEVICE_LOCAL
  // memory is reserved from the device first (OUT_OF_MEMORY when it is full).
  static MaybeFailure allocate(Device& device, infer_memory_kind kind, size_t size,
                               size_t alignment, const std::string& what,
                               std::unique_ptr<Buffer>* out);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Device& device() const { return device_; }
  infer_memory_kind kind() const { return kind_; }
  size_t size() const { return size_; }

  // Whether buffer_map may give the host a pointer to the bytes.
  bool host_mappable() const { return kind_ != INFER_MEMORY_DEVICE_LOCAL; }

  // The bytes, for the plugin's own copy engine and kernels (which run on a stream's
  // queue thread). Never returned to the host for DEVICE_LOCAL memory.
  std::byte* data() const { return storage_.get(); }

  // True when [offset, offset + bytes) lies inside the buffer (overflow-safe).
  bool contains(size_t offset, size_t bytes) const { return sdk::range_fits(size_, offset, bytes); }

 private:
  struct AlignedDelete {
    std::align_val_t alignment;
    void operator()(std::byte* p) const { ::operator delete[](p, alignment); }
  };
  Buffer(Device& device, infer_memory_kind kind, size_t size, std::byte* bytes,
         std::align_val_t alignment)
      : device_(device), kind_(kind), size_(size), storage_(bytes, AlignedDelete{alignment}) {}

  Device& device_;
  const infer_memory_kind kind_;
  const size_t size_;
  std::unique_ptr<std::byte[], AlignedDelete> storage_;
};

}  // namespace infer::example
