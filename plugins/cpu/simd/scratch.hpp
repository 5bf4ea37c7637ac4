// Per-thread scratch memory for kernels (packing panels, im2col columns, Winograd
// tiles). Each thread keeps a few grow-only, 64-byte aligned buffers, so once a model has
// run once no run allocates scratch again. A buffer is valid until the same thread asks
// for the same slot again: a routine must not hand a slot's pointer to code that may use
// that slot itself (give nested users different slots), nor keep it across calls.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace infer::cpu::simd {

// kSharedA / kSharedB: sgemm's operands packed once per call and read by every thread
// of that call (gemm.cpp). kConvert: a bfloat16 sgemm's float32 panels on their way to
// bfloat16 (gemm_pack.cpp). kMisc: a kernel's own buffer around its sgemm calls (the
// attention scores of src/kernels/fused_attention.cpp).
enum class ScratchSlot {
  kPackA,
  kPackB,
  kSharedA,
  kSharedB,
  kConvert,
  kColumns,
  kWinograd,
  kMisc,
  kCount
};

// A thread's buffer for `slot`, at least `bytes` long and 64-byte aligned. Throws
// std::bad_alloc when memory runs out (the plugin's ABI guard turns it into a status).
inline void* scratch(ScratchSlot slot, size_t bytes) {
  struct Buffer {
    void* p = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer buffers[static_cast<size_t>(ScratchSlot::kCount)];
  Buffer& b = buffers[static_cast<size_t>(slot)];
  if (b.size < bytes) {
    // Grow geometrically so slowly growing requests do not reallocate every time.
    size_t want = b.size * 2 > bytes ? b.size * 2 : bytes;
    want = (want + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, want);
    if (p == nullptr) throw std::bad_alloc();
    std::free(b.p);
    b.p = p;
    b.size = want;
  }
  return b.p;
}

template <typename T>
T* scratch_as(ScratchSlot slot, size_t count) {
  return static_cast<T*>(scratch(slot, count * sizeof(T)));
}

}  // namespace infer::cpu::simd
