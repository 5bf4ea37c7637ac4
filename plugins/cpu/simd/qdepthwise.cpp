#include "qdepthwise.hpp"

#include "qdepthwise_impl.hpp"

namespace infer::cpu::simd {
namespace qdepthwise_detail {
// Defined in qdepthwise__avx2.cpp / qdepthwise__avx512.cpp (x86-64 builds only).
void plane_avx2(const QDepthwiseShape&, const uint8_t*, int32_t, const int32_t*,
                const QDepthwiseOutput&, void*, int32_t*);
void plane_avx512(const QDepthwiseShape&, const uint8_t*, int32_t, const int32_t*,
                  const QDepthwiseOutput&, void*, int32_t*);
}  // namespace qdepthwise_detail

void qdepthwise_plane(Isa isa, const QDepthwiseShape& s, const uint8_t* x, int32_t x_zero,
                      const int32_t* w, const QDepthwiseOutput& out, void* y, int32_t* scratch) {
#if defined(__x86_64__) || defined(_M_X64)
  switch (isa) {
    case Isa::kAvx512:
      return qdepthwise_detail::plane_avx512(s, x, x_zero, w, out, y, scratch);
    case Isa::kAvx2:
      return qdepthwise_detail::plane_avx2(s, x, x_zero, w, out, y, scratch);
    default:
      break;
  }
#else
  (void)isa;
#endif
  qdepthwise_detail::run_plane(s, x, x_zero, w, out, y, scratch);
}

}  // namespace infer::cpu::simd
