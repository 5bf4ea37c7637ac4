#include "qdepthwise.hpp"

#include <cstdio>
#include <cstdlib>

#include "qdepthwise_impl.hpp"

namespace infer::cpu::simd {
namespace qdepthwise_detail {
// Defined in qdepthwise__avx2.cpp / qdepthwise__avx512.cpp (x86-64 builds only).
void plane_avx2(const QDepthwiseShape&, const uint8_t*, int32_t, const int32_t*,
                const QDepthwiseOutput&, void*, int32_t*);
void plane_avx512(const QDepthwiseShape&, const uint8_t*, int32_t, const int32_t*,
                  const QDepthwiseOutput&, void*, int32_t*);
void block16_avx512(const QDepthwiseShape&, int32_t, const QDepthwiseOutput&,
                    const QDepthwiseBlock&, int64_t, int64_t, float*);
}  // namespace qdepthwise_detail

namespace {

// Floats of a band of `rows` output rows: its padded input rows and its outputs, 16
// channels per pixel.
int64_t band_floats(const QDepthwiseShape& s, int64_t rows) {
  const int64_t in_rows = (rows - 1) * s.sh + (s.KH - 1) * s.dh + 1;
  const int64_t wp = (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1;
  return 16 * (in_rows * wp + rows * s.OW);
}

}  // namespace

bool qdepthwise_block_supported(Isa isa, const QDepthwiseShape& s) {
#if defined(__x86_64__) || defined(_M_X64)
  return isa == Isa::kAvx512 && s.KH * s.KW <= kQDepthwiseBlockMaxTaps && s.OH > 0 && s.OW > 0;
#else
  (void)isa, (void)s;
  return false;
#endif
}

int64_t qdepthwise_block_band_rows(const QDepthwiseShape& s) {
  // A band's buffers within 256 KiB (in L2 with the weights and the planes it reads).
  constexpr int64_t kBandFloats = 64 << 10;
  int64_t rows = 1;
  while (rows < s.OH && band_floats(s, rows + 1) <= kBandFloats) ++rows;
  return rows;
}

size_t qdepthwise_block_scratch_floats(const QDepthwiseShape& s) {
  return static_cast<size_t>(band_floats(s, qdepthwise_block_band_rows(s)));
}

void qdepthwise_block(Isa isa, const QDepthwiseShape& s, int32_t x_zero, const QDepthwiseOutput& out,
                      const QDepthwiseBlock& b, int64_t oh0, int64_t oh1, float* scratch) {
#if defined(__x86_64__) || defined(_M_X64)
  if (qdepthwise_block_supported(isa, s))
    return qdepthwise_detail::block16_avx512(s, x_zero, out, b, oh0, oh1, scratch);
#endif
  (void)isa, (void)s, (void)x_zero, (void)out, (void)b, (void)oh0, (void)oh1, (void)scratch;
  std::fprintf(stderr, "infer cpu simd: qdepthwise_block called where it is not supported\n");
  std::abort();
}

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
