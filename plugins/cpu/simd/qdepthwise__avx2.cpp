// The plane loop of qdepthwise.hpp compiled with the AVX2 flags (qdepthwise_impl.hpp).
#include "qdepthwise_impl.hpp"

namespace infer::cpu::simd::qdepthwise_detail {

void plane_avx2(const QDepthwiseShape& s, const uint8_t* x, int32_t x_zero, const int32_t* w,
                const QDepthwiseOutput& out, void* y, int32_t* scratch) {
  run_plane(s, x, x_zero, w, out, y, scratch);
}

}  // namespace infer::cpu::simd::qdepthwise_detail
