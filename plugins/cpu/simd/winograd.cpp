#include "winograd.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "gemm.hpp"
#include "scratch.hpp"
#include "winograd_impl.hpp"
#include "winograd_kernels.hpp"

namespace infer::cpu::simd {
namespace {

constexpr int64_t kLanes = 16;  // tile count of a block is padded to this
// V and O of one block of tiles hold about this many bytes.
constexpr int64_t kBlockBytes = 1024 * 1024;
constexpr int64_t kMinBlockTiles = 64;
// Tiles per thread from which an image's blocks run one per thread (see winograd_conv2d).
constexpr int64_t kMinThreadTiles = 24;

size_t round64(size_t n) { return (n + 63) / 64 * 64; }

struct Transforms {
  WinogradInputFn in;
  WinogradOutputFn out;
  WinogradGatherFn gather;
  WinogradScatterFn scatter;
};

Transforms transforms_for(Isa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case Isa::kAvx2:
      return {winograd_input_avx2, winograd_output_avx2, winograd_gather_avx2,
              winograd_scatter_avx2};
    case Isa::kAvx512:
      return {winograd_input_avx512, winograd_output_avx512, winograd_gather_avx512,
              winograd_scatter_avx512};
#endif
#if defined(__aarch64__)
    case Isa::kNeon:
      return {winograd_input_neon, winograd_output_neon, winograd_gather_neon,
              winograd_scatter_neon};
#endif
    default:
      return {winograd_input_scalar, winograd_output_scalar, winograd_gather_scalar,
              winograd_scatter_scalar};
  }
}

}  // namespace

void winograd_input_scalar(const float* in, int64_t Tp, float* out, int64_t out_stride) {
  winograd_impl::input_transform<float, 1>(in, Tp, out, out_stride);
}
void winograd_output_scalar(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out) {
  winograd_impl::output_transform<float, 1>(in, in_stride, Tp, bias, out);
}
void winograd_gather_scalar(const float* R, int64_t TW, float* dst, int64_t Tp) {
  winograd_impl::gather_tile_row(R, TW, dst, Tp);
}
void winograd_scatter_scalar(const float* q, int64_t Tp, int64_t OW, const float* res, float* y) {
  winograd_impl::scatter_output_row(q, Tp, OW, res, y);
}

bool winograd_supports(const ConvShape& s) {
  return s.rank == 2 && s.groups == 1 && s.kernel[0] == 3 && s.kernel[1] == 3 && s.stride[0] == 1 &&
         s.stride[1] == 1 && s.dilation[0] == 1 && s.dilation[1] == 1 && s.in_channels > 0 &&
         s.out_channels > 0;
}

size_t winograd_packed_bytes(Isa isa, int64_t M, int64_t C, GemmPrecision p) {
  return 36 * round64(packed_a_bytes(isa, M, C, p));
}

void winograd_pack(Isa isa, int64_t M, int64_t C, const float* w, void* dst, GemmPrecision p) {
  // U = G g G^T per (m, c), in double so the packed weights carry no extra rounding.
  static const double G[6][3] = {{1.0 / 4, 0, 0},
                                 {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                 {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                 {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                 {0, 0, 1}};
  const size_t MC = static_cast<size_t>(M * C);
  std::vector<float> U(36 * MC);
  for (int64_t mc = 0; mc < M * C; ++mc) {
    const float* g = w + mc * 9;
    double t[6][3];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 3; ++j)
        t[i][j] = G[i][0] * g[0 * 3 + j] + G[i][1] * g[1 * 3 + j] + G[i][2] * g[2 * 3 + j];
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        U[static_cast<size_t>(i * 6 + j) * MC + static_cast<size_t>(mc)] =
            static_cast<float>(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
  }
  const size_t part = round64(packed_a_bytes(isa, M, C, p));
  for (size_t xi = 0; xi < 36; ++xi)
    pack_a(isa, M, C, GemmOperand::raw(U.data() + xi * MC, C),
           static_cast<unsigned char*>(dst) + xi * part, p);
}

void winograd_conv2d(Isa isa, const Threads& threads, const ConvShape& s, const void* packed,
                     const float* x, const float* bias, const float* residual, const Act& act,
                     float* y, GemmPrecision p) {
  const Transforms tf = transforms_for(isa);
  const int64_t N = s.batch, C = s.in_channels, M = s.out_channels;
  const int64_t H = s.in[0], W = s.in[1], OH = s.out[0], OW = s.out[1];
  const int64_t ph = s.pad_begin[0], pw = s.pad_begin[1];
  const int64_t TH = (OH + 3) / 4, TW = (OW + 3) / 4;
  const int64_t row_w = 4 * TW + 2;  // padded input columns one tile row reads
  const size_t part = round64(packed_a_bytes(isa, M, C, p));
  const unsigned char* U = static_cast<const unsigned char*>(packed);

  const int64_t tile_bytes = 36 * (C + M) * static_cast<int64_t>(sizeof(float));
  // At least kMinBlockTiles tiles per block: fewer make the 36 GEMMs too narrow to run
  // near peak, and each block streams all the transformed weights once.
  const int64_t rows_per_block = std::clamp<int64_t>(
      std::max(kBlockBytes / (tile_bytes * TW), (kMinBlockTiles + TW - 1) / TW), 1, TH);
  int64_t nblocks = (TH + rows_per_block - 1) / rows_per_block;
  const int conc = threads.concurrency();
  // An image with enough tiles for every thread is cut into a multiple of the thread
  // count of blocks, each run whole (transforms and GEMMs) by one thread: three phases
  // split across the threads per block cost a join each and scaled 1.05-1.3x on 2
  // threads (56x56x64: 3 blocks, 9 joins per run). Blocks hold whole tile rows, as
  // equal in count as they divide.
  if (conc > 1 && TH * TW >= kMinThreadTiles * conc && TH >= conc) {
    const int64_t per_thread = (TH + conc - 1) / conc;  // rows if one block per thread
    nblocks = std::min<int64_t>(TH, conc * ((per_thread + rows_per_block - 1) / rows_per_block));
  }
  const int64_t tasks = N * nblocks;
  const bool outer_parallel = conc > 1 && tasks >= static_cast<int64_t>(conc);
  SerialThreads serial;
  const Threads& inner = outer_parallel ? static_cast<const Threads&>(serial) : threads;

  auto task = [&](int64_t task_index) {
    const int64_t n = task_index / nblocks, blk = task_index % nblocks;
    const int64_t ty0 = blk * TH / nblocks, ty1 = (blk + 1) * TH / nblocks;
    const int64_t T = (ty1 - ty0) * TW;
    const int64_t Tp = (T + kLanes - 1) / kLanes * kLanes;
    float* V = scratch_as<float>(ScratchSlot::kWinograd, static_cast<size_t>(36 * (C + M) * Tp));
    float* O = V + 36 * C * Tp;
    const float* xn = x + n * C * H * W;

    // Input transform, parallel over channels: gather each 6x6 tile into lane order,
    // then V[xi][c][t] = (B^T d B)[xi].
    inner.run(static_cast<size_t>(C), 1, [&](size_t cb, size_t ce) {
      float* P = scratch_as<float>(ScratchSlot::kColumns, static_cast<size_t>(36 * Tp + row_w));
      float* R = P + 36 * Tp;
      for (int64_t e = 0; e < 36; ++e)
        std::fill(P + e * Tp + T, P + (e + 1) * Tp, 0.0f);
      for (size_t c = cb; c < ce; ++c) {
        const float* xc = xn + static_cast<int64_t>(c) * H * W;
        for (int64_t ty = ty0; ty < ty1; ++ty) {
          const int64_t t0 = (ty - ty0) * TW;
          for (int64_t i = 0; i < 6; ++i) {
            const int64_t iy = ty * 4 + i - ph;
            if (iy < 0 || iy >= H) {
              std::fill(R, R + row_w, 0.0f);
            } else {
              const float* src = xc + iy * W;
              const int64_t lo = std::min(row_w, std::max<int64_t>(0, pw));
              const int64_t hi = std::clamp<int64_t>(W + pw, lo, row_w);
              std::fill(R, R + lo, 0.0f);
              std::memcpy(R + lo, src + (lo - pw), sizeof(float) * static_cast<size_t>(hi - lo));
              std::fill(R + hi, R + row_w, 0.0f);
            }
            tf.gather(R, TW, P + i * 6 * Tp + t0, Tp);
          }
        }
        tf.in(P, Tp, V + static_cast<int64_t>(c) * Tp, C * Tp);
      }
    });

    // The 36 GEMMs O_xi[M, Tp] = U_xi[M, C] * V_xi[C, Tp], spread over the threads.
    inner.run(36, 1, [&](size_t b, size_t e) {
      SerialThreads one;
      for (size_t xi = b; xi < e; ++xi)
        sgemm(isa, one, M, Tp, C, 1.0f, GemmOperand::prepacked(U + xi * part),
              GemmOperand::raw(V + static_cast<int64_t>(xi) * C * Tp, Tp), 0.0f,
              O + static_cast<int64_t>(xi) * M * Tp, Tp);
    });

    // Output transform, parallel over output channels, with bias, residual, activation.
    const int64_t oy0 = ty0 * 4, oy1 = std::min(OH, ty1 * 4);
    inner.run(static_cast<size_t>(M), 1, [&](size_t mb, size_t me) {
      float* Q = scratch_as<float>(ScratchSlot::kColumns, static_cast<size_t>(16 * Tp));
      for (size_t m = mb; m < me; ++m) {
        tf.out(O + static_cast<int64_t>(m) * Tp, M * Tp, Tp, bias ? bias[m] : 0.0f, Q);
        const int64_t plane_off = (n * M + static_cast<int64_t>(m)) * OH * OW;
        float* ym = y + plane_off;
        // The residual is read element by element just before the same element of y is
        // written, so it may alias y (an in-place FusedConv).
        const float* rm = residual != nullptr ? residual + plane_off : nullptr;
        for (int64_t oy = oy0; oy < oy1; ++oy) {
          const int64_t ty = oy / 4, i = oy % 4;
          const float* q = Q + (i * 4) * Tp + (ty - ty0) * TW;
          tf.scatter(q, Tp, OW, rm != nullptr ? rm + oy * OW : nullptr, ym + oy * OW);
        }
        apply_activation(isa, act, ym + oy0 * OW, static_cast<size_t>((oy1 - oy0) * OW));
      }
    });
  };

  if (outer_parallel) {
    threads.run(static_cast<size_t>(tasks), 1, [&](size_t b, size_t e) {
      for (size_t t = b; t < e; ++t) task(static_cast<int64_t>(t));
    });
  } else {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  }
}

}  // namespace infer::cpu::simd
