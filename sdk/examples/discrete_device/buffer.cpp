#include "buffer.hpp"

#include <cstring>
#include <string>

namespace infer::example {
namespace {

// Kernels read float32 tensors at any offset the host chose; 64 bytes also suits SIMD
// code a real plugin might run on the same memory.
constexpr size_t kMinAlignment = 64;

}  // namespace

MaybeFailure Buffer::allocate(Device& device, infer_memory_kind kind, size_t size, size_t alignment,
                              const std::string& what, std::unique_ptr<Buffer>* out) {
  if (kind != INFER_MEMORY_DEVICE_LOCAL && kind != INFER_MEMORY_HOST_VISIBLE &&
      kind != INFER_MEMORY_HOST_PINNED) {
    return failure(INFER_STATUS_INVALID_ARGUMENT, "example: buffer_alloc: unknown memory kind " +
                                                      std::to_string(static_cast<int>(kind)));
  }
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return failure(
        INFER_STATUS_INVALID_ARGUMENT,
        "example: buffer_alloc: alignment " + std::to_string(alignment) + " is not a power of two");
  }
  if (alignment < kMinAlignment) alignment = kMinAlignment;

  // Reserve device memory before touching host RAM, so that an over-large request fails
  // with the device's own OUT_OF_MEMORY rather than exhausting the machine.
  const bool on_device = kind == INFER_MEMORY_DEVICE_LOCAL;
  if (on_device) {
    if (MaybeFailure f = device.reserve(size, what)) return f;
  }
  std::byte* bytes = static_cast<std::byte*>(
      ::operator new[](size == 0 ? 1 : size, std::align_val_t(alignment), std::nothrow));
  if (bytes == nullptr) {
    if (on_device) device.release(size);
    return failure(INFER_STATUS_OUT_OF_MEMORY, "example: out of host memory backing " + what);
  }
  // Zeroed so that a read of never-written memory is deterministic (real VRAM is not).
  std::memset(bytes, 0, size);
  out->reset(new Buffer(device, kind, size, bytes, std::align_val_t(alignment)));
  return std::nullopt;
}

Buffer::~Buffer() {
  if (kind_ == INFER_MEMORY_DEVICE_LOCAL) device_.release(size_);
}

}  // namespace infer::example
