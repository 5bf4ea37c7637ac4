#include "depthwise.hpp"

#include <algorithm>
#include <cstring>

#include "depthwise_impl.hpp"
#include "depthwise_kernels.hpp"
#include "scratch.hpp"

namespace infer::cpu::simd {

void depthwise_plane_scalar(const DepthwisePlane& p) {
  depthwise_impl::fill(p, depthwise_impl::copy_row_scalar);
  for (int64_t oh = 0; oh < p.OH; ++oh)
    for (int64_t ow = 0; ow < p.OW; ++ow) p.out[oh * p.OW + ow] = depthwise_impl::output_scalar(p, oh, ow);
}

bool depthwise_supports(const ConvShape& s) {
  return s.rank == 2 && s.groups == s.in_channels && s.groups == s.out_channels && s.groups > 0 &&
         s.kernel[0] >= 1 && s.kernel[0] <= kDepthwiseMaxKernel && s.kernel[1] >= 1 &&
         s.kernel[1] <= kDepthwiseMaxKernel && s.stride[1] <= kDepthwiseMaxKernel;
}

namespace {

// The plane geometry shared by every channel (depthwise_kernels.hpp).
DepthwisePlane plane_geometry(const ConvShape& s, const Act& act) {
  DepthwisePlane p;
  p.H = s.in[0];
  p.W = s.in[1];
  p.OH = s.out[0];
  p.OW = s.out[1];
  p.kh = static_cast<int>(s.kernel[0]);
  p.kw = static_cast<int>(s.kernel[1]);
  p.sh = s.stride[0];
  p.sw = s.stride[1];
  p.dh = s.dilation[0];
  p.dw = s.dilation[1];
  p.ph = s.pad_begin[0];
  p.pw = s.pad_begin[1];
  // Output ow at tap kw reads padded column ow * sw + kw * dw: phase (kw * dw) % sw,
  // column ow + (kw * dw) / sw of that phase.
  // Rounded up to whole 64-byte lines, so that every buffer row and every phase starts
  // on one (the buffer is 64-byte aligned): the AVX-512 rows read aligned vectors and
  // shift them (depthwise_impl.hpp, row_block_aligned).
  p.wq = (p.OW + ((p.kw - 1) * p.dw) / p.sw + 1 + kDepthwiseRowAlign - 1) / kDepthwiseRowAlign *
         kDepthwiseRowAlign;
  p.row_len = p.sw * p.wq;
  p.buf_rows = (p.OH - 1) * p.sh + (p.kh - 1) * p.dh + 1;
  for (int kw = 0; kw < p.kw; ++kw) p.offsets[kw] = ((kw * p.dw) % p.sw) * p.wq + (kw * p.dw) / p.sw;
  for (int64_t ph = 0; ph < p.sw; ++ph) {
    // Phase ph column j holds input column j * sw + ph - pw: inside the row for
    // j in [lo, hi), zero padding elsewhere.
    const int64_t lo = std::min(p.wq, std::max<int64_t>(0, (p.pw - ph + p.sw - 1) / p.sw));
    p.phase_lo[ph] = lo;
    p.phase_hi[ph] = std::clamp<int64_t>((p.W + p.pw - ph + p.sw - 1) / p.sw, lo, p.wq);
  }
  switch (act.kind) {
    case ActKind::kRelu:
      p.clamp = DepthwiseClamp::kRelu;
      break;
    case ActKind::kClip:
      p.clamp = DepthwiseClamp::kClip;
      p.lo = act.p0;
      p.hi = act.p1;
      break;
    default:
      break;  // kNone, or applied to the finished plane
  }
  return p;
}

#if defined(__x86_64__)
// The channel-blocked kernel (depthwise_block16_avx512) for small output planes: there
// a row is a fraction of a vector, and the per-channel copy and loop setup of the plane
// kernel cost more than the FMAs. Measured on MobileNetV2's shapes (infer-bench-conv,
// AVX-512, 1 thread, Zen 5): 7x7 outputs 1.5x (960 channels) and 2.1x (576, stride 2)
// faster, 14x14 outputs of a stride-2 kernel 1.2x; 14x14 at stride 1 and anything
// larger is faster plane by plane (the two transposes cost more than they save).
bool use_channel_blocks(const ConvShape& s) {
  if (s.kernel[0] * s.kernel[1] > kDepthwiseBlockMaxTaps) return false;
  const int64_t outputs = s.out[0] * s.out[1];
  const bool strided = s.stride[0] > 1 || s.stride[1] > 1;
  return outputs <= 64 || (strided && outputs <= 196);
}

void blocked_avx512(const Threads& threads, const ConvShape& s, const DepthwisePlane& geometry,
                    const float* w, const float* x, const float* bias, const float* residual,
                    const Act& act, float* y) {
  DepthwiseBlock base;
  base.kh = geometry.kh;
  base.kw = geometry.kw;
  base.H = geometry.H;
  base.W = geometry.W;
  base.OH = geometry.OH;
  base.OW = geometry.OW;
  base.sh = geometry.sh;
  base.sw = geometry.sw;
  base.dh = geometry.dh;
  base.dw = geometry.dw;
  base.ph = geometry.ph;
  base.pw = geometry.pw;
  base.clamp = geometry.clamp;
  base.lo = geometry.lo;
  base.hi = geometry.hi;
  const bool act_after = act.kind != ActKind::kNone && geometry.clamp == DepthwiseClamp::kNone;
  const int64_t C = s.in_channels, blocks = (C + 15) / 16;
  const int64_t in_plane = geometry.H * geometry.W, out_plane = geometry.OH * geometry.OW;
  const size_t floats = static_cast<size_t>(depthwise_block_floats(base));
  threads.run(static_cast<size_t>(s.batch * blocks), 1, [&](size_t b, size_t e) {
    DepthwiseBlock blk = base;
    blk.buf = scratch_as<float>(ScratchSlot::kColumns, floats);
    for (size_t t = b; t < e; ++t) {
      const int64_t n = static_cast<int64_t>(t) / blocks,
                    c0 = static_cast<int64_t>(t) % blocks * 16;
      const int64_t first = n * C + c0;
      blk.count = static_cast<int>(std::min<int64_t>(16, C - c0));
      blk.x = x + first * in_plane;
      blk.out = y + first * out_plane;
      blk.residual = residual != nullptr ? residual + first * out_plane : nullptr;
      blk.weights = w + c0 * blk.kh * blk.kw;
      blk.bias = bias != nullptr ? bias + c0 : nullptr;
      depthwise_block16_avx512(blk);
      if (act_after)
        apply_activation(Isa::kAvx512, act, blk.out, static_cast<size_t>(blk.count * out_plane));
    }
  });
}
#endif

}  // namespace

void depthwise_conv2d(Isa isa, const Threads& threads, const ConvShape& s, const float* w,
                      const float* x, const float* bias, const float* residual, const Act& act,
                      float* y) {
  void (*plane_fn)(const DepthwisePlane&) = depthwise_plane_scalar;
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx2:
      plane_fn = depthwise_plane_avx2;
      break;
    case Isa::kAvx512:
      plane_fn = depthwise_plane_avx512;
      break;
#endif
#if defined(__aarch64__)
    case Isa::kNeon:
      plane_fn = depthwise_plane_neon;
      break;
#endif
    default:
      break;
  }
  const DepthwisePlane geometry = plane_geometry(s, act);
#if defined(__x86_64__)
  if (isa == Isa::kAvx512 && use_channel_blocks(s)) {
    blocked_avx512(threads, s, geometry, w, x, bias, residual, act, y);
    return;
  }
#endif
  // Relu and Clip happen in registers; the other activations over the finished plane.
  const bool act_after = act.kind != ActKind::kNone && geometry.clamp == DepthwiseClamp::kNone;
  const int64_t C = s.in_channels;
  const int64_t in_plane = geometry.H * geometry.W, out_plane = geometry.OH * geometry.OW;
  // The aligned rows read whole vectors past a row's last column (into lanes whose
  // outputs are not stored): the slack keeps the buffer's last row inside it.
  const size_t buf_floats =
      static_cast<size_t>(geometry.buf_rows * geometry.row_len + 2 * kDepthwiseRowAlign);
  // A few ranges per thread (not one per channel): each range zeroes its buffer once.
  const size_t planes = static_cast<size_t>(s.batch * C);
  const size_t grain = std::max<size_t>(1, planes / (8 * static_cast<size_t>(threads.concurrency())));
  threads.run(planes, grain, [&](size_t b, size_t e) {
    DepthwisePlane p = geometry;
    p.buf = scratch_as<float>(ScratchSlot::kColumns, buf_floats);
    // The padding positions are the same for every channel and only the inside ones are
    // rewritten per channel, so zeroing the buffer once per range is enough.
    std::memset(p.buf, 0, sizeof(float) * buf_floats);
    for (size_t t = b; t < e; ++t) {
      const int64_t c = static_cast<int64_t>(t) % C;
      p.x = x + static_cast<int64_t>(t) * in_plane;
      p.out = y + static_cast<int64_t>(t) * out_plane;
      p.residual = residual != nullptr ? residual + static_cast<int64_t>(t) * out_plane : nullptr;
      p.weights = w + c * p.kh * p.kw;
      p.bias = bias != nullptr ? bias[c] : 0.0f;
      plane_fn(p);
      if (act_after) apply_activation(isa, act, p.out, static_cast<size_t>(out_plane));
    }
  });
}

}  // namespace infer::cpu::simd
