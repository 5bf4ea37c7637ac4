// The convolution driver: algorithm choice, weight packing and the GEMM paths (direct
// 1x1, implicit 2-D im2col, N-D im2col). Depthwise and Winograd live in their own files.
#include "conv.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "depthwise.hpp"
#include "gemm.hpp"
#include "gemm_im2col.hpp"
#include "scratch.hpp"
#include "winograd.hpp"

namespace infer::cpu::simd {
namespace {

// The packed blob's header; the payload starts at kHeaderBytes.
struct PackedHeader {
  uint32_t magic;
  uint32_t algo;
  uint32_t isa;
  uint32_t rank;
  int64_t out_channels;
  int64_t in_channels;
  int64_t groups;
  int64_t kernel_size;
  int64_t part_bytes;  // kGemm: bytes per group's packed A (64-byte rounded)
  uint32_t precision;  // a GemmPrecision
};
constexpr uint32_t kMagic = 0x31564e43;  // "CNV1"
constexpr size_t kHeaderBytes = 64;
static_assert(sizeof(PackedHeader) <= kHeaderBytes);

size_t round64(size_t n) { return (n + 63) / 64 * 64; }

const unsigned char* payload(const void* packed) {
  return static_cast<const unsigned char*>(packed) + kHeaderBytes;
}

// The generic N-D unrolling of one image and group: all rows, all output positions.
void im2col_nd(const ConvShape& s, const float* x, int64_t rows, float* col) {
  const int nd = s.rank;
  const int64_t out_sp = s.out_size(), in_sp = s.in_size(), kprod = s.kernel_size();
  const int64_t ow_n = s.out[nd - 1];
  const int64_t outer_n = out_sp / ow_n;
  int64_t koff[kMaxConvRank], opos[kMaxConvRank];
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r / kprod;
    int64_t kr = r % kprod;
    for (int d = nd; d-- > 0;) {
      koff[d] = kr % s.kernel[d];
      kr /= s.kernel[d];
    }
    const float* xc = x + c * in_sp;
    float* dst = col + r * out_sp;
    const int64_t s_last = s.stride[nd - 1];
    const int64_t base_last = koff[nd - 1] * s.dilation[nd - 1] - s.pad_begin[nd - 1];
    const int64_t in_last = s.in[nd - 1];
    for (int64_t outer = 0; outer < outer_n; ++outer) {
      int64_t rem = outer;
      for (int d = nd - 1; d-- > 0;) {
        opos[d] = rem % s.out[d];
        rem /= s.out[d];
      }
      int64_t in_off = 0;
      bool inside = true;
      for (int d = 0; d < nd - 1; ++d) {
        const int64_t p = opos[d] * s.stride[d] + koff[d] * s.dilation[d] - s.pad_begin[d];
        if (p < 0 || p >= s.in[d]) {
          inside = false;
          break;
        }
        in_off = in_off * s.in[d] + p;
      }
      float* drow = dst + outer * ow_n;
      if (!inside) {
        std::memset(drow, 0, sizeof(float) * static_cast<size_t>(ow_n));
        continue;
      }
      const float* xrow = xc + in_off * in_last;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const int64_t p = ow * s_last + base_last;
        drow[ow] = (p >= 0 && p < in_last) ? xrow[p] : 0.0f;
      }
    }
  }
}

bool is_pointwise(const ConvShape& s) {
  for (int d = 0; d < s.rank; ++d)
    if (s.kernel[d] != 1 || s.stride[d] != 1 || s.pad_begin[d] != 0 || s.out[d] != s.in[d])
      return false;
  return true;
}

// A 2-D 1x1 kernel without padding whose strides skip input (ResNet's downsample
// shortcuts): every output reads one input pixel, all inside the image.
bool is_strided_pointwise(const ConvShape& s) {
  if (s.rank != 2 || is_pointwise(s)) return false;
  for (int d = 0; d < 2; ++d)
    if (s.kernel[d] != 1 || s.pad_begin[d] != 0 || (s.out[d] - 1) * s.stride[d] >= s.in[d])
      return false;
  return true;
}

// The GEMM paths: y[n, g] = W_g * B(n, g) for each image and group, B being the input
// itself (pointwise), its 2-D im2col packed panel by panel straight from the image
// (gemm_im2col.hpp), or its N-D im2col.
void gemm_conv(Isa isa, const Threads& threads, const ConvShape& s, const void* packed,
               const float* x, const float* bias, const float* residual, const Act& act,
               float* y) {
  const PackedHeader* h = static_cast<const PackedHeader*>(packed);
  const int64_t N = s.batch, C = s.in_channels, M = s.out_channels, G = s.groups;
  const int64_t Cg = C / G, Mg = M / G;
  const int64_t kprod = s.kernel_size();
  const int64_t K = Cg * kprod;
  const int64_t in_sp = s.in_size(), out_sp = s.out_size();
  const size_t part = static_cast<size_t>(h->part_bytes);
  const bool pointwise = is_pointwise(s);
  const bool strided_pointwise = is_strided_pointwise(s);
  const bool implicit_2d = !pointwise && !strided_pointwise && s.rank == 2;
  const bool strided_window_1d =
      s.rank == 1 && Cg == 1 && !pointwise && s.pad_begin[0] == 0 &&
      (s.out[0] - 1) * s.stride[0] + (s.kernel[0] - 1) * s.dilation[0] < s.in[0];

  const int64_t tasks = N * G;
  const int conc = threads.concurrency();
  // Enough independent (image, group) tasks: run them in parallel with serial GEMMs
  // inside; otherwise run the tasks one after the other, each GEMM on all threads.
  const bool outer_parallel = conc > 1 && tasks >= 2 * static_cast<int64_t>(conc);
  SerialThreads serial;
  const Threads& inner = outer_parallel ? static_cast<const Threads&>(serial) : threads;

  auto task = [&](int64_t t) {
    const int64_t g = t % G;
    const int64_t n = t / G;
    const float* xg = x + (n * C + g * Cg) * in_sp;
    const int64_t y_off = (n * M + g * Mg) * out_sp;
    GemmEpilogue ep;
    if (bias != nullptr) {
      ep.bias_mode = GemmEpilogue::Bias::kPerRow;
      ep.bias = bias + g * Mg;
    }
    ep.act = act;
    if (residual != nullptr) {
      ep.residual = residual + y_off;
      ep.ldr = out_sp;
    }
    const GemmOperand A = GemmOperand::prepacked(payload(packed) + static_cast<size_t>(g) * part);
    if (pointwise) {
      sgemm(isa, inner, Mg, out_sp, K, 1.0f, A, GemmOperand::raw(xg, in_sp), 0.0f, y + y_off,
            out_sp, ep);
      return;
    }
    if (strided_pointwise) {
      // Subsample the input once into a contiguous block and run a plain GEMM on it:
      // packing strided panels through implicit im2col is 1.2-1.5x slower on these shapes
      // (infer-bench-conv res1x1s2_*).
      const int64_t OH = s.out[0], OW = s.out[1], W = s.in[1], sh = s.stride[0], sw = s.stride[1];
      float* sub = scratch_as<float>(ScratchSlot::kColumns, static_cast<size_t>(Cg * out_sp));
      inner.run(static_cast<size_t>(Cg), 16, [&](size_t b, size_t e) {
        for (size_t c = b; c < e; ++c) {
          const float* xc = xg + static_cast<int64_t>(c) * in_sp;
          float* dst = sub + static_cast<int64_t>(c) * out_sp;
          for (int64_t oh = 0; oh < OH; ++oh) {
            const float* row = xc + oh * sh * W;
            for (int64_t ow = 0; ow < OW; ++ow) dst[oh * OW + ow] = row[ow * sw];
          }
        }
      });
      sgemm(isa, inner, Mg, out_sp, K, 1.0f, A, GemmOperand::raw(sub, out_sp), 0.0f, y + y_off,
            out_sp, ep);
      return;
    }
    if (implicit_2d) {
      Im2colGeom geom;
      geom.x = xg;
      geom.channels = Cg;
      geom.H = s.in[0];
      geom.W = s.in[1];
      geom.KH = s.kernel[0];
      geom.KW = s.kernel[1];
      geom.sh = s.stride[0];
      geom.sw = s.stride[1];
      geom.dh = s.dilation[0];
      geom.dw = s.dilation[1];
      geom.ph = s.pad_begin[0];
      geom.pw = s.pad_begin[1];
      geom.OH = s.out[0];
      geom.OW = s.out[1];
      const Im2colSource source(geom);
      sgemm(isa, inner, Mg, out_sp, K, 1.0f, A, GemmOperand::from_source(&source), 0.0f, y + y_off,
            out_sp, ep);
      return;
    }
    if (strided_window_1d) {
      // One input channel, no padding: column t of the im2col matrix is the input window
      // at t * stride, so the matrix is the input itself read with row stride dilation and
      // column stride stride (an STFT written as a Conv: kernel 512, stride 160).
      sgemm(isa, inner, Mg, out_sp, K, 1.0f, A, GemmOperand::raw(xg, s.dilation[0], s.stride[0]),
            0.0f, y + y_off, out_sp, ep);
      return;
    }
    float* col = scratch_as<float>(ScratchSlot::kColumns, static_cast<size_t>(K * out_sp));
    im2col_nd(s, xg, K, col);
    sgemm(isa, inner, Mg, out_sp, K, 1.0f, A, GemmOperand::raw(col, out_sp), 0.0f, y + y_off,
          out_sp, ep);
  };
  if (outer_parallel) {
    threads.run(static_cast<size_t>(tasks), 1, [&](size_t b, size_t e) {
      for (size_t t = b; t < e; ++t) task(static_cast<int64_t>(t));
    });
  } else {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  }
}

}  // namespace

int64_t ConvShape::kernel_size() const {
  int64_t p = 1;
  for (int d = 0; d < rank; ++d) p *= kernel[d];
  return p;
}
int64_t ConvShape::in_size() const {
  int64_t p = 1;
  for (int d = 0; d < rank; ++d) p *= in[d];
  return p;
}
int64_t ConvShape::out_size() const {
  int64_t p = 1;
  for (int d = 0; d < rank; ++d) p *= out[d];
  return p;
}

const char* conv_algo_name(ConvAlgo algo) {
  switch (algo) {
    case ConvAlgo::kGemm:
      return "gemm";
    case ConvAlgo::kDepthwise:
      return "depthwise";
    case ConvAlgo::kWinograd:
      return "winograd";
  }
  return "unknown";
}

bool winograd_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("INFER_CPU_WINOGRAD");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

bool conv_algo_supports(ConvAlgo algo, const ConvShape& s) {
  switch (algo) {
    case ConvAlgo::kGemm:
      return true;
    case ConvAlgo::kDepthwise:
      return depthwise_supports(s);
    case ConvAlgo::kWinograd:
      return winograd_supports(s);
  }
  return false;
}

ConvAlgo choose_conv_algo(Isa, const ConvShape& s, GemmPrecision p) {
  if (depthwise_supports(s)) return ConvAlgo::kDepthwise;
  // bfloat16 Winograd is faster than bfloat16 im2col + GEMM (1 thread, Zen 5: 0.79 vs
  // 1.39 ms at 56x56x64, 0.64 vs 1.22 at 28x28x128, 0.57 vs 1.16 at 14x14x256; 1.85 vs
  // 1.21 at 7x7x512) but too inexact: its transforms amplify the rounding of U and V, for
  // a relative L2 error of 1.0-1.4e-2 on post-ReLU inputs and 2.0-2.6e-2 on zero-mean ones
  // against 2.2e-3 for im2col (winograd.hpp). Not chosen; it runs when asked for. (Float32
  // Winograd, 1.07 / 1.06 / 0.94 ms on the first three, is faster than bfloat16 im2col
  // too: a caller after speed may pack those layers in float32.)
  if (p == GemmPrecision::kBfloat16) return ConvAlgo::kGemm;
  if (winograd_enabled() && winograd_supports(s)) {
    // Winograd pays off when there are enough channels for the 36 GEMMs to run near peak
    // and enough tiles per image for the transformed weights (4x the direct ones) to be
    // reused; measured per ResNet layer shape with infer-bench-conv.
    const int64_t C = s.in_channels, M = s.out_channels;
    const bool big_channels = C >= 32 && M >= 32;
    const bool known = s.out[0] > 0 && s.out[1] > 0;
    // Measured (infer-bench-conv, AVX-512, 1 thread, batch 1): Winograd beats im2col+GEMM
    // 1.5x at 56x56x64, 2x at 28x28x128, 1.35x at 14x14x256, and loses 4.6x at 7x7x512
    // (4 tiles per image: the 36 GEMMs are 16 columns wide and stream 4x the weights).
    // Tiles are per image: blocks never span images.
    const int64_t tiles = known ? ((s.out[0] + 3) / 4) * ((s.out[1] + 3) / 4) : 1 << 20;
    if (big_channels && tiles >= 16 && (known ? std::min(s.out[0], s.out[1]) >= 8 : true))
      return ConvAlgo::kWinograd;
  }
  return ConvAlgo::kGemm;
}

size_t conv_packed_bytes(Isa isa, const ConvShape& s, ConvAlgo algo, GemmPrecision p) {
  const int64_t G = s.groups;
  switch (algo) {
    case ConvAlgo::kGemm: {
      const size_t part = round64(
          packed_a_bytes(isa, s.out_channels / G, s.in_channels / G * s.kernel_size(), p));
      return kHeaderBytes + part * static_cast<size_t>(G);
    }
    case ConvAlgo::kDepthwise:
      return kHeaderBytes + round64(sizeof(float) * static_cast<size_t>(s.out_channels * s.kernel_size()));
    case ConvAlgo::kWinograd:
      return kHeaderBytes + winograd_packed_bytes(isa, s.out_channels, s.in_channels, p);
  }
  return 0;
}

void conv_pack_weights(Isa isa, const ConvShape& s, ConvAlgo algo, const float* w, void* dst,
                       GemmPrecision p) {
  if (!gemm_precision_supported(isa, p)) {
    std::fprintf(stderr,
                 "infer cpu simd: conv_pack_weights: precision %s asked for isa %s, which has "
                 "no %s GEMM on this CPU (check gemm_precision_supported first)\n",
                 gemm_precision_name(p), isa_name(isa), gemm_precision_name(p));
    std::abort();
  }
  PackedHeader h{};
  h.magic = kMagic;
  h.algo = static_cast<uint32_t>(algo);
  h.isa = static_cast<uint32_t>(isa);
  h.rank = static_cast<uint32_t>(s.rank);
  h.out_channels = s.out_channels;
  h.in_channels = s.in_channels;
  h.groups = s.groups;
  h.kernel_size = s.kernel_size();
  h.precision = static_cast<uint32_t>(p);
  unsigned char* out = static_cast<unsigned char*>(dst) + kHeaderBytes;
  switch (algo) {
    case ConvAlgo::kGemm: {
      const int64_t Mg = s.out_channels / s.groups, K = s.in_channels / s.groups * s.kernel_size();
      const size_t part = round64(packed_a_bytes(isa, Mg, K, p));
      h.part_bytes = static_cast<int64_t>(part);
      for (int64_t g = 0; g < s.groups; ++g)
        pack_a(isa, Mg, K, GemmOperand::raw(w + g * Mg * K, K),
               out + static_cast<size_t>(g) * part, p);
      break;
    }
    case ConvAlgo::kDepthwise:
      std::memcpy(out, w, sizeof(float) * static_cast<size_t>(s.out_channels * s.kernel_size()));
      break;
    case ConvAlgo::kWinograd:
      winograd_pack(isa, s.out_channels, s.in_channels, w, out, p);
      break;
  }
  std::memset(dst, 0, kHeaderBytes);
  std::memcpy(dst, &h, sizeof h);
}

bool conv_packed_matches(Isa isa, const ConvShape& s, const void* packed, size_t bytes,
                         ConvAlgo* algo, GemmPrecision* precision) {
  if (packed == nullptr || bytes < kHeaderBytes) return false;
  if (reinterpret_cast<uintptr_t>(packed) % 64 != 0) return false;
  PackedHeader h;
  std::memcpy(&h, packed, sizeof h);
  if (h.magic != kMagic || h.isa != static_cast<uint32_t>(isa) ||
      h.rank != static_cast<uint32_t>(s.rank) || h.out_channels != s.out_channels ||
      h.in_channels != s.in_channels || h.groups != s.groups || h.kernel_size != s.kernel_size())
    return false;
  if (h.algo < 1 || h.algo > 3) return false;
  if (h.precision > static_cast<uint32_t>(GemmPrecision::kBfloat16)) return false;
  const ConvAlgo a = static_cast<ConvAlgo>(h.algo);
  const GemmPrecision p = static_cast<GemmPrecision>(h.precision);
  if (!conv_algo_supports(a, s) || conv_packed_bytes(isa, s, a, p) != bytes) return false;
  if (algo != nullptr) *algo = a;
  if (precision != nullptr) *precision = p;
  return true;
}

void conv_forward(Isa isa, const Threads& threads, const ConvShape& s, const void* packed,
                  const float* x, const float* bias, const float* residual, const Act& act,
                  float* y) {
  if (s.batch == 0 || s.out_channels == 0 || s.out_size() == 0) return;
  PackedHeader h;
  std::memcpy(&h, packed, sizeof h);
  switch (static_cast<ConvAlgo>(h.algo)) {
    case ConvAlgo::kDepthwise:
      depthwise_conv2d(isa, threads, s, reinterpret_cast<const float*>(payload(packed)), x, bias,
                       residual, act, y);
      return;
    case ConvAlgo::kWinograd:
      winograd_conv2d(isa, threads, s, payload(packed), x, bias, residual, act, y,
                      static_cast<GemmPrecision>(h.precision));
      return;
    case ConvAlgo::kGemm:
      break;
  }
  if (s.in_channels == 0 || s.kernel_size() == 0) {
    // No input channel contributes: y = act(bias + residual).
    const int64_t out_sp = s.out_size();
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t m = 0; m < s.out_channels; ++m) {
        float* row = y + (n * s.out_channels + m) * out_sp;
        const float* res = residual ? residual + (n * s.out_channels + m) * out_sp : nullptr;
        for (int64_t i = 0; i < out_sp; ++i)
          row[i] = (bias ? bias[m] : 0.0f) + (res ? res[i] : 0.0f);
        apply_activation(isa, act, row, static_cast<size_t>(out_sp));
      }
    return;
  }
  gemm_conv(isa, threads, s, packed, x, bias, residual, act, y);
}

}  // namespace infer::cpu::simd
