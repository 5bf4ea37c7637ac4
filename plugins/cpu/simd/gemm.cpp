// The SGEMM driver (BLIS-style): C is cut into tiles of whole register panels, spread over
// the threads; a tile walks K in blocks, packing its slice of each raw operand into
// thread-local scratch (prepacked operands are used in place; a raw operand that several
// tiles read is packed once, block by block, by whichever tile needs a block first, into
// a buffer they all share), and runs the ISA's register tile over every MR x NR
// micro-tile with the B micro-panel outermost, so it stays in L1 while the A block streams
// from L2. The epilogue runs inside the register tile routine on the last K block. M == 1
// and N == 1 take a GEMV path that streams the other operand once (float32 only).
//
// The bfloat16 precision runs the same driver over pair steps (gemm_kernels.hpp): its
// own tile, and packers that convert what they pack. Its GEMV goes through the general
// path (a 1 x 2048 x 1000 classifier with prepacked weights: see sgemm).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "gemm.hpp"
#include "gemm_kernels.hpp"
#include "gemm_packed.hpp"
#include "scratch.hpp"

namespace infer::cpu::simd {
namespace gemm_detail {

Geometry geometry(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      // mc x kc of A = 168 KiB and kc x nc of B = 512 KiB share the 1 MiB L2. kc = 256
      // measured best of 96..256 on Zen 4 (128 was close).
      return {14, 32, 256, 168, 512};
    case Isa::kAvx2:
      return {6, 16, 256, 144, 512};
    case Isa::kNeon:
      return {8, 12, 256, 128, 384};
    case Isa::kScalar:
      break;
  }
  return {4, 16, 256, 64, 256};
}

const Kernels& kernels(Isa isa) {
  switch (isa) {
#if defined(__x86_64__) || defined(_M_X64)
    case Isa::kAvx512:
      return kernels_avx512();
    case Isa::kAvx2:
      return kernels_avx2();
#endif
#if defined(__aarch64__)
    case Isa::kNeon:
      return kernels_neon();
#endif
    default:
      break;
  }
  return kernels_scalar();
}

const Bf16Kernels* bf16_kernels(Isa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == Isa::kAvx512 && isa_supported(isa) && cpu_has_avx512_bf16())
    return &kernels_avx512bf16();
#else
  (void)isa;
#endif
  return nullptr;
}

}  // namespace gemm_detail

namespace {

using namespace gemm_detail;

constexpr double kParallelFlops = 1e6;  // below this the threads cost more than they save
// At most this many floats (8 MiB) for an operand packed once for all tiles; a bigger one
// is packed block by block inside each tile (and then is large enough that its repacking
// per tile is a small fraction of the tile's work).
constexpr int64_t kMaxSharedFloats = int64_t{2} << 20;

// An operand packed once for all the tiles of one sgemm call (the whole-operand layout of
// pack_a/pack_b), one unit (a K block of one panel) at a time, by whichever tile needs
// the unit first: no extra parallel_for before the tiles, and a unit is packed right
// before its first use (still in that core's cache). state[unit]: 0 not packed, 1 being
// packed, 2 ready.
struct SharedOperand {
  float* panels = nullptr;
  uint8_t* state = nullptr;
  int64_t width = 0;  // mr or nr
  int64_t K = 0, kb = 0, kc = 0;

  // Ensures panels [p0, p1) of K block kbi are packed: packs those no one claimed (with
  // pack(p, k0, kcb, dst)), then waits for those another thread is packing (a unit is a
  // few microseconds of copying, and its packer never waits on anything).
  template <typename Pack>
  const float* ensure(int64_t p0, int64_t p1, int64_t kbi, Pack&& pack) const {
    const int64_t k0 = kbi * kc, kcb = std::min(kc, K - k0);
    bool others = false;
    for (int64_t p = p0; p < p1; ++p) {
      std::atomic_ref<uint8_t> st(state[p * kb + kbi]);
      uint8_t expected = 0;
      if (st.load(std::memory_order_acquire) == 0 &&
          st.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        pack(p, k0, kcb, panels + p * K * width + k0 * width);
        st.store(2, std::memory_order_release);
      } else {
        others = true;
      }
    }
    if (others)
      for (int64_t p = p0; p < p1; ++p) {
        std::atomic_ref<uint8_t> st(state[p * kb + kbi]);
        while (st.load(std::memory_order_acquire) != 2) std::this_thread::yield();
      }
    return panels + p0 * K * width + k0 * width;
  }
};

// Bytes of a SharedOperand of `panels` panels: the panels, then one state byte per unit.
size_t shared_floats_bytes(int64_t panels, int64_t width, int64_t K) {
  return (static_cast<size_t>(panels * width * K) * sizeof(float) + 63) / 64 * 64;
}
size_t shared_bytes(int64_t panels, int64_t width, int64_t K, int64_t kb) {
  return shared_floats_bytes(panels, width, K) + static_cast<size_t>(panels * kb);
}

// Lays out a SharedOperand in `data` (shared_bytes long), every unit still to pack.
SharedOperand shared_operand(char* data, int64_t panels, int64_t width, int64_t K, int64_t kb,
                             int64_t kc) {
  SharedOperand s;
  const size_t floats_bytes = shared_floats_bytes(panels, width, K);
  s.panels = reinterpret_cast<float*>(data);
  s.state = reinterpret_cast<uint8_t*>(data + floats_bytes);
  std::memset(s.state, 0, static_cast<size_t>(panels * kb));
  s.width = width;
  s.K = K;
  s.kb = kb;
  s.kc = kc;
  return s;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

bool has_epilogue(const GemmEpilogue& ep) {
  return ep.bias_mode != GemmEpilogue::Bias::kNone || ep.residual != nullptr ||
         ep.act.kind != ActKind::kNone;
}

// Finishes `len` outputs of a GEMV (or of K == 0) held in y: element j goes to
// out[j * ostride] at row row0 + j * drow, column col0 + j * dcol of C.
void finish_span(Isa isa, float* y, int64_t len, float* out, int64_t ostride, int64_t row0,
                 int64_t drow, int64_t col0, int64_t dcol, float alpha, float beta,
                 const GemmEpilogue& ep) {
  for (int64_t j = 0; j < len; ++j) {
    float v = alpha * y[j];
    if (beta != 0.0f) v += beta * out[j * ostride];
    const int64_t r = row0 + j * drow, c = col0 + j * dcol;
    if (ep.bias_mode == GemmEpilogue::Bias::kPerRow) v += ep.bias[r];
    if (ep.bias_mode == GemmEpilogue::Bias::kPerCol) v += ep.bias[c];
    if (ep.residual != nullptr) v += ep.residual[r * ep.ldr + c];
    y[j] = v;
  }
  if (ep.act.kind != ActKind::kNone) apply_activation(isa, ep.act, y, static_cast<size_t>(len));
  for (int64_t j = 0; j < len; ++j) out[j * ostride] = y[j];
}

// Runs body(b, e) over [0, n) tasks, on the threads when `parallel`.
template <typename F>
void run_tasks(const Threads& threads, bool parallel, size_t n, F&& body) {
  if (parallel && n > 1)
    threads.run(n, 1, body);
  else
    body(0, n);
}

// K == 0: C = beta * C, then the epilogue.
void scale_only(Isa isa, const Threads& threads, int64_t M, int64_t N, float beta, float* C,
                int64_t ldc, const GemmEpilogue& ep) {
  const bool parallel = threads.concurrency() > 1 && static_cast<double>(M) * N >= kParallelFlops;
  run_tasks(threads, parallel, static_cast<size_t>(M), [&](size_t b, size_t e) {
    float* y = scratch_as<float>(ScratchSlot::kPackA, static_cast<size_t>(N));
    for (size_t i = b; i < e; ++i) {
      std::fill(y, y + N, 0.0f);
      finish_span(isa, y, N, C + static_cast<int64_t>(i) * ldc, 1, static_cast<int64_t>(i), 0, 0, 1,
                  0.0f, beta, ep);
    }
  });
}

// The matrix of a GEMV, element (k, j) for k < K, j < L.
struct GemvMatrix {
  enum class Kind { kPanels, kRows, kDots } kind;
  const float* w;
  int64_t ld;     // kRows: w[k * ld + j]; kDots: w[j * ld + k]; kPanels: K * width per panel
  int width = 0;  // kPanels: panel p holds (k, p * width + c) at [k * width + c]
};

// y = x^T W over L outputs written to out[j * ostride] (row/column of C given by the
// epilogue indexing), x[k * incx].
void gemv(Isa isa, const Threads& threads, int64_t L, int64_t K, const float* x, int64_t incx,
          const GemvMatrix& W, float* out, int64_t ostride, bool is_row, float alpha, float beta,
          const GemmEpilogue& ep) {
  const Kernels& kn = kernels(isa);
  // Dot products want a contiguous x.
  if (W.kind == GemvMatrix::Kind::kDots && incx != 1) {
    float* xc = scratch_as<float>(ScratchSlot::kPackB, static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) xc[k] = x[k * incx];
    x = xc;
    incx = 1;
  }
  // Chunks of outputs: whole panels, and enough of them to feed every thread.
  // Chunks start at multiples of 64 so that each output sees the same kernel code path
  // (and so the same rounding) whatever the thread count.
  const int64_t unit = W.kind == GemvMatrix::Kind::kPanels ? W.width : 64;
  const int conc = threads.concurrency();
  const bool parallel = conc > 1 && 2.0 * static_cast<double>(K) * L >= kParallelFlops;
  int64_t chunk = round_up(std::min<int64_t>(L, 512), unit);
  if (parallel) chunk = std::min(chunk, round_up(ceil_div(L, 4 * conc), unit));
  const int64_t chunks = ceil_div(L, chunk);
  run_tasks(threads, parallel, static_cast<size_t>(chunks), [&](size_t b, size_t e) {
    float* y = scratch_as<float>(ScratchSlot::kPackA, static_cast<size_t>(chunk));
    for (size_t t = b; t < e; ++t) {
      const int64_t j0 = static_cast<int64_t>(t) * chunk;
      const int64_t len = std::min(chunk, L - j0);
      switch (W.kind) {
        case GemvMatrix::Kind::kPanels:
          for (int64_t p = 0; p * W.width < len; ++p)
            kn.gemv_rows(K, x, incx, W.w + (j0 / W.width + p) * K * W.width, W.width,
                         std::min<int64_t>(W.width, len - p * W.width), y + p * W.width);
          break;
        case GemvMatrix::Kind::kRows:
          kn.gemv_rows(K, x, incx, W.w + j0, W.ld, len, y);
          break;
        case GemvMatrix::Kind::kDots:
          kn.gemv_dots(K, W.w + j0 * W.ld, W.ld, len, x, y);
          break;
      }
      if (is_row)
        finish_span(isa, y, len, out + j0 * ostride, ostride, 0, 0, j0, 1, alpha, beta, ep);
      else
        finish_span(isa, y, len, out + j0 * ostride, ostride, j0, 1, 0, 0, alpha, beta, ep);
    }
  });
}

// The GEMV paths; false when the operand layout does not suit one (then the general path
// runs).
bool try_gemv(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K, float alpha,
              const GemmOperand& A, const GemmOperand& B, const float* pa, const float* pb,
              float beta, float* C, int64_t ldc, const GemmEpilogue& ep) {
  const Geometry g = geometry(isa);
  if (M == 1) {
    // y[n] = sum_k A(0, k) B(k, n).
    GemvMatrix W{};
    if (pb != nullptr) {
      W = {GemvMatrix::Kind::kPanels, pb, 0, g.nr};
    } else if (B.col_stride == 1) {
      W = {GemvMatrix::Kind::kRows, B.data, B.row_stride};
    } else if (B.row_stride == 1) {
      W = {GemvMatrix::Kind::kDots, B.data, B.col_stride};
    } else {
      return false;
    }
    const float* x = pa != nullptr ? pa : A.data;
    const int64_t incx = pa != nullptr ? g.mr : A.col_stride;
    gemv(isa, threads, N, K, x, incx, W, C, 1, true, alpha, beta, ep);
    return true;
  }
  if (N == 1) {
    // y[m] = sum_k B(k, 0) A(m, k): W(k, j) = A(j, k).
    GemvMatrix W{};
    if (pa != nullptr) {
      W = {GemvMatrix::Kind::kPanels, pa, 0, g.mr};
    } else if (A.row_stride == 1) {
      W = {GemvMatrix::Kind::kRows, A.data, A.col_stride};
    } else if (A.col_stride == 1) {
      W = {GemvMatrix::Kind::kDots, A.data, A.row_stride};
    } else {
      return false;
    }
    const float* x = pb != nullptr ? pb : B.data;
    const int64_t incx = pb != nullptr ? g.nr : B.row_stride;
    gemv(isa, threads, M, K, x, incx, W, C, ldc, false, alpha, beta, ep);
    return true;
  }
  return false;
}

}  // namespace

void sgemm(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K, float alpha,
           const GemmOperand& A, const GemmOperand& B, float beta, float* C, int64_t ldc,
           const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  if (!isa_supported(isa)) isa = Isa::kScalar;
  GemmPrecision prec_a = GemmPrecision::kFloat32, prec_b = GemmPrecision::kFloat32;
  const float* pa =
      A.packed != nullptr ? check_packed(A.packed, PackKind::kA, isa, M, K, &prec_a) : nullptr;
  const float* pb =
      B.packed != nullptr ? check_packed(B.packed, PackKind::kB, isa, K, N, &prec_b) : nullptr;
  if (pa != nullptr && pb != nullptr && prec_a != prec_b) {
    std::fprintf(stderr,
                 "infer cpu simd: sgemm: packed A is %s but packed B is %s: pack both operands "
                 "with the same precision\n",
                 gemm_precision_name(prec_a), gemm_precision_name(prec_b));
    std::abort();
  }
  // A bfloat16 packed operand makes the whole product bfloat16: the raw operand is
  // rounded while it is packed.
  const Bf16Kernels* bk = nullptr;
  if (prec_a == GemmPrecision::kBfloat16 || prec_b == GemmPrecision::kBfloat16) {
    bk = bf16_kernels(isa);
    if (bk == nullptr) {
      std::fprintf(stderr,
                   "infer cpu simd: sgemm: a bfloat16 packed operand, but isa %s has no "
                   "bfloat16 GEMM on this CPU\n",
                   isa_name(isa));
      std::abort();
    }
  }
  if (K <= 0) {
    scale_only(isa, threads, M, N, beta, C, ldc, ep);
    return;
  }
  if (A.source != nullptr) {
    std::fprintf(stderr, "infer cpu simd: sgemm: A cannot be a GemmBSource\n");
    std::abort();
  }
  // bfloat16 (bk != nullptr) has no GEMV: the general path with its 1-row (1-column) tiles
  // runs a 2048 -> 1000 classifier (prepacked weights, Zen 5, 1 thread) in 67 us as x * W
  // and 105 us as W * x, against 117 and 170 us for the float32 GEMV: half the bytes.
  if (bk == nullptr && (M == 1 || N == 1) && B.source == nullptr &&
      try_gemv(isa, threads, M, N, K, alpha, A, B, pa, pb, beta, C, ldc, ep))
    return;

  const Geometry g = geometry(isa);
  const Kernels& kn = kernels(isa);
  const int mr = g.mr, nr = g.nr;
  const GemmEpilogue* last_ep = has_epilogue(ep) ? &ep : nullptr;
  const TileFn tile = bk != nullptr ? bk->tile : kn.tile;
  // From here on K counts the K steps of the packed panels (gemm_kernels.hpp): floats, or
  // pairs of them in bfloat16; K_elems is the operands' own K.
  const int64_t K_elems = K;
  K = bk != nullptr ? (K + 1) / 2 : K;

  // Tiles of C: at most mc x nc, and (when parallel) enough of them for every thread and
  // a multiple of the thread count; split the longer side (in register panels) first.
  // The panels are dealt out evenly (tile sizes differ by at most one panel), so equal
  // shares of tiles are equal shares of work: 7 tiles on 2 threads (a 64 x 3136 1x1
  // convolution) or 13 tiles with a short last one (2048 x 49) left one thread idle for
  // up to a seventh of the GEMM.
  const int conc = threads.concurrency();
  const double flops =
      2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K_elems);
  const bool parallel = conc > 1 && flops >= kParallelFlops;
  const int64_t m_panels = ceil_div(M, mr), n_panels = ceil_div(N, nr);
  int64_t mt = std::min(ceil_div(M, g.mc), m_panels), nt = std::min(ceil_div(N, g.nc), n_panels);
  if (parallel) split_tiles(m_panels, n_panels, mr, nr, conc, mt, nt);
  // Tile i of mt covers row panels [i * m_panels / mt, (i + 1) * m_panels / mt).
  const int64_t tm = ceil_div(m_panels, mt) * mr, tn = ceil_div(n_panels, nt) * nr;  // largest
  // K blocks of (nearly) equal length.
  const int64_t kb = ceil_div(K, g.kc);
  const int64_t kc = ceil_div(K, kb);

  // A raw operand that several tiles would each pack is packed once for all of them
  // (SharedOperand). A: every column tile packed all of its rows again, 4 to 6 times for
  // BERT's activations times prepacked weights (M = 128, N = 768..3072), at 15% of the
  // GEMM. B: the row tiles of one column tile that run in one body call already share
  // its packed block (see below), so B is repacked only when the threads split those
  // row tiles (a 3x3 convolution's im2col over 49 output positions, gathered once per
  // row tile of the weights); on one thread sharing B would only trade that L2-hot block
  // for a whole packed B read back from L3.
  const bool share_a = pa == nullptr && nt > 1 && m_panels * mr * K <= kMaxSharedFloats;
  const bool share_b =
      pb == nullptr && parallel && mt > 1 && n_panels * nr * K <= kMaxSharedFloats;
  // The calling thread's scratch: the tiles on other threads read it while this thread
  // waits in parallel_for, which runs nothing else on it meanwhile (threads.hpp).
  const SharedOperand sa =
      share_a ? shared_operand(scratch_as<char>(ScratchSlot::kSharedA, shared_bytes(m_panels, mr, K, kb)),
                               m_panels, mr, K, kb, kc)
              : SharedOperand{};
  const SharedOperand sb =
      share_b ? shared_operand(scratch_as<char>(ScratchSlot::kSharedB, shared_bytes(n_panels, nr, K, kb)),
                               n_panels, nr, K, kb, kc)
              : SharedOperand{};
  // Pack rows [m0, m0 + rows) x K steps [k0, k0 + kcb) of raw A, and K steps [k0, k0 + kcb)
  // x columns [n0, n0 + cols) of raw B, into panels at dst.
  auto pack_a_rows = [&](int64_t m0, int64_t rows, int64_t k0, int64_t kcb, float* dst) {
    if (bk != nullptr)
      pack_a_block_bf16(A, K_elems, m0, rows, k0, kcb, mr, kn, *bk,
                        reinterpret_cast<uint32_t*>(dst));
    else
      pack_a_block(A, m0, rows, k0, kcb, mr, kn.pack_a_rows, dst);
  };
  auto pack_b_cols = [&](int64_t k0, int64_t kcb, int64_t n0, int64_t cols, float* dst) {
    if (bk != nullptr)
      pack_b_block_bf16(isa, B, K_elems, k0, kcb, n0, cols, nr, kn, *bk,
                        reinterpret_cast<uint32_t*>(dst));
    else if (B.source != nullptr)
      B.source->pack_block(isa, k0, kcb, n0, cols, nr, dst);
    else
      pack_b_block(B, k0, kcb, n0, cols, nr, kn.pack_b_rows, kn.pack_b_cols, dst);
  };
  auto pack_a_unit = [&](int64_t p, int64_t k0, int64_t kcb, float* dst) {
    pack_a_rows(p * mr, std::min<int64_t>(mr, M - p * mr), k0, kcb, dst);
  };
  auto pack_b_unit = [&](int64_t p, int64_t k0, int64_t kcb, float* dst) {
    pack_b_cols(k0, kcb, p * nr, std::min<int64_t>(nr, N - p * nr), dst);
  };

  // Task t is tile (t % mt, t / mt): column-major over the tiles, so the tasks one thread
  // runs back to back share their columns, and the packed B block of each K step is made
  // once for all of their rows (the row tiles used to pack it again each: 13 times for
  // a 2048-row 1x1 convolution).
  auto body = [&](size_t b, size_t e) {
    float* a_buf = pa == nullptr && !share_a
                       ? scratch_as<float>(ScratchSlot::kPackA, static_cast<size_t>(tm * kc))
                       : nullptr;
    float* b_buf = pb == nullptr && !share_b
                       ? scratch_as<float>(ScratchSlot::kPackB, static_cast<size_t>(kc * tn))
                       : nullptr;
    for (int64_t t = static_cast<int64_t>(b); t < static_cast<int64_t>(e);) {
      const int64_t ni = t / mt, mi0 = t % mt;
      const int64_t mi1 = std::min<int64_t>(mt, mi0 + static_cast<int64_t>(e) - t);
      t += mi1 - mi0;
      const int64_t n0 = ni * n_panels / nt * nr;
      const int64_t cols = std::min(N, (ni + 1) * n_panels / nt * nr) - n0;
      for (int64_t k0 = 0; k0 < K; k0 += kc) {
        const int64_t kcb = std::min(kc, K - k0);
        const float* bblk;
        int64_t b_step;  // floats between consecutive B panels
        if (pb != nullptr) {
          bblk = pb + (n0 / nr) * K * nr + k0 * nr;
          b_step = K * nr;
        } else if (share_b) {
          bblk = sb.ensure(n0 / nr, ceil_div(n0 + cols, nr), k0 / kc, pack_b_unit);
          b_step = K * nr;
        } else {
          pack_b_cols(k0, kcb, n0, cols, b_buf);
          bblk = b_buf;
          b_step = kcb * nr;
        }
        TileJob job;
        job.kc = kcb;
        job.ldc = ldc;
        job.alpha = alpha;
        job.beta = k0 == 0 ? beta : 1.0f;
        job.ep = k0 + kcb == K ? last_ep : nullptr;
        job.isa = isa;
        for (int64_t mi = mi0; mi < mi1; ++mi) {
          const int64_t m0 = mi * m_panels / mt * mr;
          const int64_t rows = std::min(M, (mi + 1) * m_panels / mt * mr) - m0;
          const float* ablk;
          int64_t a_step;  // floats between consecutive A panels
          if (pa != nullptr) {
            ablk = pa + (m0 / mr) * K * mr + k0 * mr;
            a_step = K * mr;
          } else if (share_a) {
            ablk = sa.ensure(m0 / mr, ceil_div(m0 + rows, mr), k0 / kc, pack_a_unit);
            a_step = K * mr;
          } else {
            pack_a_rows(m0, rows, k0, kcb, a_buf);
            ablk = a_buf;
            a_step = kcb * mr;
          }
          for (int64_t j = 0; j < cols; j += nr) {
            job.b = bblk + (j / nr) * b_step;
            job.nr = static_cast<int>(std::min<int64_t>(nr, cols - j));
            job.col0 = n0 + j;
            for (int64_t i = 0; i < rows; i += mr) {
              job.a = ablk + (i / mr) * a_step;
              // The next tile's A: the next row panel; after the last one, this block's
              // first (the next column panel's) or, after the last column panel, the
              // next K block of the first panel (where the layout keeps it there).
              if (i + mr < rows)
                job.a_next = job.a + a_step;
              else if (j + nr < cols || a_step == kcb * mr)
                job.a_next = ablk;
              else
                job.a_next = ablk + kcb * mr;
              job.mr = static_cast<int>(std::min<int64_t>(mr, rows - i));
              job.row0 = m0 + i;
              job.c = C + job.row0 * ldc + job.col0;
              tile(job);
            }
          }
        }
      }
    }
  };
  run_tasks(threads, parallel, static_cast<size_t>(mt * nt), body);
}

}  // namespace infer::cpu::simd
