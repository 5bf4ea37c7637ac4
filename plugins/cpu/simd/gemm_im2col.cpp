// The portable implicit-im2col packer (the reference, and the AVX2/NEON/scalar path) and
// the dispatch to the AVX-512 one.
#include "gemm_im2col.hpp"

#include <algorithm>

namespace infer::cpu::simd {
namespace {

constexpr int kMaxNr = 64;
// A column past the matrix edge gets an input row far outside the image, so every one of
// its elements reads as padding (0) whatever the kernel offset.
constexpr int64_t kOutside = -(int64_t{1} << 40);

void im2col_pack_generic(const Im2colGeom& g, int64_t k0, int64_t kc, int64_t n0, int64_t cols,
                         int nr, float* dst) {
  int64_t ih0[kMaxNr], iw0[kMaxNr];
  const int64_t H = g.H, W = g.W;
  for (int64_t p0 = 0; p0 < cols; p0 += nr, dst += kc * nr) {
    const int cc = static_cast<int>(std::min<int64_t>(nr, cols - p0));
    for (int j = 0; j < nr; ++j) {
      if (j < cc) {
        const int64_t n = n0 + p0 + j;
        ih0[j] = n / g.OW * g.sh - g.ph;
        iw0[j] = n % g.OW * g.sw - g.pw;
      } else {
        ih0[j] = iw0[j] = kOutside;
      }
    }
    // Row k is channel k / (KH * KW) at kernel offset (kh, kw); walk it incrementally.
    Im2colTap tap(g, k0);
    float* d = dst;
    for (int64_t k = 0; k < kc; ++k, d += nr) {
      const float* xc = g.x + tap.c * H * W;
      const int64_t dy = tap.kh * g.dh, dx = tap.kw * g.dw;
      for (int j = 0; j < nr; ++j) {
        const int64_t ih = ih0[j] + dy, iw = iw0[j] + dx;
        d[j] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xc[ih * W + iw] : 0.0f;
      }
      tap.next(g);
    }
  }
}

}  // namespace

void im2col_pack(Isa isa, const Im2colGeom& g, int64_t k0, int64_t kc, int64_t n0, int64_t cols,
                 int nr, float* dst) {
#if defined(__x86_64__) || defined(_M_X64)
  // The AVX-512 packer indexes with 32-bit gathers: images of up to 2^31 floats.
  if (isa == Isa::kAvx512 && nr == 32 && g.H * g.W < (int64_t{1} << 31) &&
      g.H < (int64_t{1} << 20) && g.W < (int64_t{1} << 20)) {
    gemm_detail::im2col_pack_avx512(g, k0, kc, n0, cols, dst);
    return;
  }
#else
  (void)isa;
#endif
  im2col_pack_generic(g, k0, kc, n0, cols, nr, dst);
}

}  // namespace infer::cpu::simd
