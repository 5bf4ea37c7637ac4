// Implicit im2col: the B operand of a 2-D convolution's GEMM (rows = input channel x
// kernel offset, columns = output positions), packed panel by panel straight from the
// image when sgemm asks for a block. The column matrix is never written out and packed
// again, and the per-ISA packers fill a whole panel per K step (AVX-512: a masked load
// per output row the panel spans, see gemm_im2col__avx512.cpp) instead of copying short
// output rows one by one.
#pragma once

#include <cstdint>

#include "gemm.hpp"

namespace infer::cpu::simd {

// One image and group of a 2-D convolution, NCHW: x points at its first input channel.
struct Im2colGeom {
  const float* x = nullptr;
  int64_t channels = 0;  // input channels of the group
  int64_t H = 0, W = 0, KH = 0, KW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  int64_t OH = 0, OW = 0;
};

// Row k of the column matrix is input channel c at kernel offset (kh, kw); the packers
// walk the rows in order. Internal linkage: each ISA's file compiles its own copy.
namespace {
struct Im2colTap {
  int64_t c, kh, kw;
  Im2colTap(const Im2colGeom& g, int64_t k) : c(k / (g.KH * g.KW)), kh(k / g.KW % g.KH), kw(k % g.KW) {}
  void next(const Im2colGeom& g) {
    if (++kw < g.KW) return;
    kw = 0;
    if (++kh < g.KH) return;
    kh = 0;
    ++c;
  }
};
}  // namespace

// Packs rows [k0, k0 + kc) x columns [n0, n0 + cols) of the column matrix into
// ceil(cols / nr) panels of kc x nr floats at dst (the layout of gemm_kernels.hpp).
void im2col_pack(Isa isa, const Im2colGeom& g, int64_t k0, int64_t kc, int64_t n0, int64_t cols,
                 int nr, float* dst);

class Im2colSource final : public GemmBSource {
 public:
  explicit Im2colSource(const Im2colGeom& g) : g_(g) {}
  void pack_block(Isa isa, int64_t k0, int64_t kc, int64_t n0, int64_t cols, int nr,
                  float* dst) const override {
    im2col_pack(isa, g_, k0, kc, n0, cols, nr, dst);
  }

 private:
  Im2colGeom g_;
};

namespace gemm_detail {
// The AVX-512 packer (32-wide panels), defined only where that ISA's file is built.
void im2col_pack_avx512(const Im2colGeom& g, int64_t k0, int64_t kc, int64_t n0, int64_t cols,
                        float* dst);
}  // namespace gemm_detail

}  // namespace infer::cpu::simd
