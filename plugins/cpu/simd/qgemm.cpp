// The integer GEMM driver: C is cut into tiles of whole register panels, spread over the
// threads (column-major, so the tasks one thread runs back to back share their columns
// and pack their B block once); a task packs its B block (K x its columns, with the
// column sums when A has zero points) into thread-local scratch and runs the variant's
// register tile over every MR x NR micro-tile, B micro-panel outermost (it stays in L1
// while the prepacked A streams from L2). K is not blocked: each register tile runs the
// whole K and finishes its outputs (zero-point corrections, output stage) in registers.
// A C of at most a few columns (a GEMV: one token through a MatMul, a classifier at batch
// 1) takes the variant's narrow tile where it has one, which puts the rows along the
// vectors instead of mostly padding columns.
#include "qgemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "qgemm_kernels.hpp"
#include "scratch.hpp"

namespace infer::cpu::simd {
namespace qgemm_detail {
namespace {

std::atomic<bool> g_disable_dot{false};

}  // namespace

void set_disable_dot_products(bool disable) { g_disable_dot.store(disable); }

const QKernels& qkernels(Isa isa) {
  switch (isa) {
#if defined(__x86_64__) || defined(_M_X64)
    case Isa::kAvx512:
      return qkernels_avx512(!g_disable_dot.load() && cpu_has_avx512_vnni());
    case Isa::kAvx2:
      return qkernels_avx2(!g_disable_dot.load() && cpu_has_avx_vnni());
#endif
#if defined(__aarch64__)
    case Isa::kNeon:
      if (!g_disable_dot.load() && cpu_has_neon_dotprod()) return qkernels_neon_dot();
      break;
#endif
    default:
      break;
  }
  return qkernels_scalar();
}

}  // namespace qgemm_detail

namespace {

using namespace qgemm_detail;

// Below this many multiply-adds (about 6 us of one Zen 5 core on VNNI) the threads cost
// more than they save.
constexpr double kParallelMacs = 1 << 21;
// A GEMV streams A once at memory speed, some 20x slower per multiply-add: from this many
// bytes of A (about 10 us on a Zen 4 core) its rows are split over the threads.
constexpr double kParallelGemvBytes = 1 << 17;
// Bytes of a task's packed B block (K4 x its columns) and of the A rows of one task: both
// stay in the L2 (1 MiB on Zen 4 / Zen 5) while the task runs.
constexpr int64_t kBBlockBytes = 256 << 10;
constexpr int64_t kABlockBytes = 256 << 10;
// The most rows of a register tile (MR or QKernels::narrow_rows) of any variant.
constexpr int kMaxRows = 32;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

struct ALayout {
  int64_t panels;      // ceil(M / MR)
  int64_t k4;          // K rounded up to a multiple of 4
  size_t panel_bytes;  // of all the panels, rounded up to 64
  size_t total_bytes;  // header + panels + row sums
};

ALayout a_layout(const QKernels& kn, int64_t M, int64_t K) {
  ALayout l;
  l.panels = ceil_div(std::max<int64_t>(M, 0), kn.mr);
  l.k4 = round_up(std::max<int64_t>(K, 0), 4);
  l.panel_bytes = static_cast<size_t>(round_up(l.panels * kn.mr * l.k4, 64));
  l.total_bytes = kQPackHeaderBytes + l.panel_bytes + static_cast<size_t>(l.panels * kn.mr) * 4;
  return l;
}

[[noreturn]] void fail(const char* msg) {
  std::fprintf(stderr, "infer cpu simd: qgemm: packed A %s\n", msg);
  std::abort();
}

// The packed A after checking its header against this call (a mismatch is a caller's
// bug: it aborts naming both sides rather than computing garbage).
void check_packed(const void* packed, const QKernels& kn, Isa isa, int64_t M, int64_t K) {
  QPackHeader h;
  std::memcpy(&h, packed, sizeof h);
  char msg[200];
  if (h.magic != kQPackMagic) fail("is not a buffer made by qpack_a");
  if (h.variant != static_cast<uint32_t>(kn.variant) || h.isa != static_cast<uint32_t>(isa)) {
    std::snprintf(msg, sizeof msg, "was packed for isa %s (mr %u) but qgemm runs isa %s, %s",
                  isa_name(static_cast<Isa>(h.isa)), h.mr, isa_name(isa), kn.name);
    fail(msg);
  }
  if (h.M != M || h.K != K) {
    std::snprintf(msg, sizeof msg, "was packed for %lld x %lld but qgemm needs %lld x %lld",
                  static_cast<long long>(h.M), static_cast<long long>(h.K),
                  static_cast<long long>(M), static_cast<long long>(K));
    fail(msg);
  }
}

// Runs body(b, e) over [0, n) tasks, on the threads when `parallel`.
template <typename F>
void run_tasks(const Threads& threads, bool parallel, size_t n, F&& body) {
  if (parallel && n > 1)
    threads.run(n, 1, body);
  else
    body(0, n);
}

}  // namespace

size_t qpacked_a_bytes(Isa isa, int64_t M, int64_t K) {
  if (!isa_supported(isa)) isa = Isa::kScalar;
  return a_layout(qkernels(isa), M, K).total_bytes;
}

void qpack_a(Isa isa, int64_t M, int64_t K, const int8_t* a, int64_t rs, int64_t cs, void* dst) {
  if (!isa_supported(isa)) isa = Isa::kScalar;
  const QKernels& kn = qkernels(isa);
  const ALayout l = a_layout(kn, M, K);
  QPackHeader h{};
  h.magic = kQPackMagic;
  h.variant = static_cast<uint32_t>(kn.variant);
  h.isa = static_cast<uint32_t>(isa);
  h.mr = static_cast<uint32_t>(kn.mr);
  h.M = M;
  h.K = K;
  char* base = static_cast<char*>(dst);
  std::memset(base, 0, kQPackHeaderBytes);
  std::memcpy(base, &h, sizeof h);
  int8_t* panels = reinterpret_cast<int8_t*>(base + kQPackHeaderBytes);
  int32_t* sums = reinterpret_cast<int32_t*>(base + kQPackHeaderBytes + l.panel_bytes);
  const int mr = kn.mr;
  for (int64_t p = 0; p < l.panels; ++p) {
    int8_t* d = panels + p * mr * l.k4;
    for (int r = 0; r < mr; ++r) {
      const int64_t m = p * mr + r;
      int32_t s = 0;
      for (int64_t k = 0; k < l.k4; ++k) {
        const int8_t v = m < M && k < K ? a[m * rs + k * cs] : int8_t{0};
        d[(k / 4 * mr + r) * 4 + k % 4] = v;
        s += v;
      }
      sums[m] = s;
    }
  }
  // The tail of the last 64 bytes of panels, so the buffer is fully defined.
  const size_t used = static_cast<size_t>(l.panels * mr * l.k4);
  std::memset(reinterpret_cast<char*>(panels) + used, 0, l.panel_bytes - used);
}

const char* qgemm_variant(Isa isa) {
  if (!isa_supported(isa)) isa = Isa::kScalar;
  return qkernels(isa).name;
}

namespace {

// Where B's elements are: B(k, n) = b[k * rs + n * cs], or b[row_off[k] + n].
struct BSource {
  const uint8_t* b = nullptr;
  int64_t rs = 0, cs = 1;
  const int64_t* row_off = nullptr;
};

// Packs columns [n0, n0 + cols) of B into one panel of the variant's layout.
void pack_panel(const QKernels& kn, const BSource& src, int64_t n0, int64_t K, int cols,
                uint8_t* dst, int32_t* col_sum) {
  if (src.row_off == nullptr)
    kn.pack_b(src.b + n0 * src.cs, src.rs, src.cs, K, cols, kn.nr, dst, col_sum);
  else if (kn.pack_b_rows != nullptr)
    kn.pack_b_rows(src.b + n0, src.row_off, K, cols, kn.nr, dst, col_sum);
  else
    pack_b_rows_generic(src.b + n0, src.row_off, K, cols, kn.nr, dst, col_sum);
}

void run_qgemm(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K,
               const void* packed_a, const int32_t* a_zero, const BSource& src, int32_t b_zero,
               const QGemmOutput& out) {
  if (M <= 0 || N <= 0) return;
  if (K < 0) K = 0;
  if (!isa_supported(isa)) isa = Isa::kScalar;
  const QKernels& kn = qkernels(isa);
  check_packed(packed_a, kn, isa, M, K);
  const ALayout l = a_layout(kn, M, K);
  const int8_t* pa = static_cast<const int8_t*>(packed_a) + kQPackHeaderBytes;
  const int32_t* rowsum = reinterpret_cast<const int32_t*>(static_cast<const char*>(packed_a) +
                                                           kQPackHeaderBytes + l.panel_bytes);
  const int mr = kn.mr, nr = kn.nr;
  const int64_t k4 = l.k4;

  OutStage st;
  st.kind = out.kind;
  st.elem = out.kind == QGemmOutput::Kind::kUint8 || out.kind == QGemmOutput::Kind::kInt8 ? 1 : 4;
  const bool quantized_out = out.kind != QGemmOutput::Kind::kInt32;
  if (quantized_out) {
    st.scale = out.scale;
    if (out.kind == QGemmOutput::Kind::kFloat) {
      st.fbias = out.fbias;
      st.relu = out.relu;
    } else {
      st.out_zero = out.out_zero;
      st.lo = out.kind == QGemmOutput::Kind::kUint8 ? 0 : -128;
      st.hi = out.kind == QGemmOutput::Kind::kUint8 ? 255 : 127;
      if (out.relu) st.lo = std::max(st.lo, out.out_zero);
      st.flo = static_cast<float>(st.lo - out.out_zero);
      st.fhi = static_cast<float>(st.hi - out.out_zero);
    }
  }
  const int32_t* bias = quantized_out ? out.bias : nullptr;
  bool use_az = false;
  if (a_zero != nullptr)
    for (int64_t m = 0; m < M && !use_az; ++m) use_az = a_zero[m] != 0;
  // K * b_zero, modulo 2^32 like everything else.
  const int32_t kbz = wrap_mul(static_cast<int32_t>(static_cast<uint32_t>(K)), b_zero);

  // The multiplier of rowsumA: -b_zero, plus the shift of a packed B that holds B - shift.
  const int32_t row_mul = wrap_add(kn.b_shift, wrap_mul(-1, b_zero));
  // The per-row terms of every row, computed once (0 past the last row, up to a whole
  // register tile): the bias (past kInt32), (b_shift - b_zero) * rowsum, K * a_zero *
  // b_zero, and -a_zero for the column term. A tile reads them from its first row on.
  const size_t rows_padded = static_cast<size_t>(round_up(M, kMaxRows) + kMaxRows);
  std::vector<int32_t> row_add_all(rows_padded, 0), neg_az_all(use_az ? rows_padded : 0, 0);
  for (int64_t m = 0; m < M; ++m) {
    int32_t v = bias != nullptr ? bias[m] : 0;
    if (row_mul != 0) v = wrap_add(v, wrap_mul(row_mul, rowsum[m]));
    if (use_az) {
      v = wrap_add(v, wrap_mul(kbz, a_zero[m]));
      neg_az_all[static_cast<size_t>(m)] = wrap_mul(-1, a_zero[m]);
    }
    row_add_all[static_cast<size_t>(m)] = v;
  }
  const int32_t* const row_add = row_add_all.data();
  const int32_t* const neg_az = use_az ? neg_az_all.data() : nullptr;
  const int conc = threads.concurrency();
  const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const bool parallel = conc > 1 && macs >= kParallelMacs;
  char* const c_base = static_cast<char*>(out.c);
  const size_t b_panel_bytes = static_cast<size_t>(k4 * nr);

  // A C of a few columns (a GEMV): the narrow tile, over row blocks of narrow_rows.
  if (kn.narrow != nullptr && N <= kn.narrow_cols) {
    const int nrows = kn.narrow_rows;
    const int64_t blocks = ceil_div(M, nrows);
    // Ranges of at least a quarter of a thread's share: each packs B (one panel) again.
    const size_t grain = static_cast<size_t>(std::max<int64_t>(1, blocks / (4 * conc)));
    auto body = [&](size_t tb, size_t te) {
      char* buf =
          scratch_as<char>(ScratchSlot::kPackB, b_panel_bytes + static_cast<size_t>(nr) * 4);
      uint8_t* bpanel = reinterpret_cast<uint8_t*>(buf);
      int32_t* col_sum = reinterpret_cast<int32_t*>(buf + b_panel_bytes);
      pack_panel(kn, src, 0, K, static_cast<int>(N), bpanel, use_az ? col_sum : nullptr);
      QTileJob job;
      job.kg = k4 / 4;
      job.a_stride = k4 * mr;
      job.b = bpanel;
      job.col_sum = col_sum;
      job.cols = static_cast<int>(N);
      job.rs = out.rs;
      job.cs = out.cs;
      job.st = &st;
      for (size_t i = tb; i < te; ++i) {
        const int64_t m0 = static_cast<int64_t>(i) * nrows;
        job.rows = static_cast<int>(std::min<int64_t>(nrows, M - m0));
        job.row_add = row_add + m0;
        job.neg_az = neg_az != nullptr ? neg_az + m0 : nullptr;
        job.a = pa + m0 * k4;
        if (quantized_out) {
          job.scale = out.scale + m0;
          job.fbias = st.fbias != nullptr ? st.fbias + m0 : nullptr;
        }
        job.c = c_base + m0 * out.rs * static_cast<int64_t>(st.elem);
        kn.narrow(job);
      }
    };
    const bool split = conc > 1 && (parallel || static_cast<double>(M) * k4 >= kParallelGemvBytes);
    if (split && blocks > 1)
      threads.run(static_cast<size_t>(blocks), grain, body);
    else
      body(0, static_cast<size_t>(blocks));
    return;
  }

  // Tiles of C: at most mc x nc, and (when parallel) enough of them for every thread and a
  // multiple of the thread count; the longer side (in register panels) is split first.
  const int64_t kdiv = std::max<int64_t>(k4, 4);
  const int64_t mc = std::max<int64_t>(mr, kABlockBytes / kdiv / mr * mr);
  const int64_t nc = std::max<int64_t>(nr, kBBlockBytes / kdiv / nr * nr);
  const int64_t m_panels = l.panels, n_panels = ceil_div(N, nr);
  int64_t mt = std::min(ceil_div(M, mc), m_panels), nt = std::min(ceil_div(N, nc), n_panels);
  if (parallel) split_tiles(m_panels, n_panels, mr, nr, conc, mt, nt);
  // Tile i of mt covers row panels [i * m_panels / mt, (i + 1) * m_panels / mt); the
  // largest tile has tn columns.
  const int64_t tn = ceil_div(n_panels, nt) * nr;
  const size_t b_block_bytes = static_cast<size_t>(tn / nr) * b_panel_bytes;

  auto body = [&](size_t tb, size_t te) {
    char* buf = scratch_as<char>(ScratchSlot::kPackB, b_block_bytes + static_cast<size_t>(tn) * 4);
    uint8_t* bblk = reinterpret_cast<uint8_t*>(buf);
    int32_t* col_sum = reinterpret_cast<int32_t*>(buf + b_block_bytes);
    int64_t packed_ni = -1;
    QTileJob job;
    job.kg = k4 / 4;
    job.st = &st;
    job.rs = out.rs;
    job.cs = out.cs;
    for (size_t t = tb; t < te; ++t) {
      const int64_t ni = static_cast<int64_t>(t) / mt, mi = static_cast<int64_t>(t) % mt;
      const int64_t n0 = ni * n_panels / nt * nr;
      const int64_t cols = std::min(N, (ni + 1) * n_panels / nt * nr) - n0;
      if (ni != packed_ni) {
        for (int64_t j = 0; j < cols; j += nr)
          pack_panel(kn, src, n0 + j, K, static_cast<int>(std::min<int64_t>(nr, cols - j)),
                     bblk + (j / nr) * b_panel_bytes, use_az ? col_sum + j : nullptr);
        packed_ni = ni;
      }
      const int64_t p0 = mi * m_panels / mt, p1 = (mi + 1) * m_panels / mt;
      for (int64_t j = 0; j < cols; j += nr) {
        job.b = bblk + (j / nr) * b_panel_bytes;
        job.col_sum = col_sum + j;
        job.cols = static_cast<int>(std::min<int64_t>(nr, cols - j));
        if (kn.narrow != nullptr && job.cols <= kn.narrow_cols) {
          // A last panel of a few columns (a 7x7 or 14x14 image: 49 = 48 + 1, 196 = 192 +
          // 4): the narrow tile puts the rows along the vectors, where the regular tile
          // would run whole vectors for one or a few live columns.
          const int64_t step = kn.narrow_rows / mr;
          QTileJob nj = job;
          nj.a_stride = k4 * mr;
          for (int64_t p = p0; p < p1; p += step) {
            const int64_t m0 = p * mr;
            nj.rows = static_cast<int>(std::min<int64_t>(std::min(p1 - p, step) * mr, M - m0));
            nj.row_add = row_add + m0;
            nj.neg_az = neg_az != nullptr ? neg_az + m0 : nullptr;
            nj.a = pa + m0 * k4;
            if (quantized_out) {
              nj.scale = out.scale + m0;
              nj.fbias = st.fbias != nullptr ? st.fbias + m0 : nullptr;
            }
            nj.c = c_base + (m0 * out.rs + (n0 + j) * out.cs) * static_cast<int64_t>(st.elem);
            kn.narrow(nj);
          }
          continue;
        }
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t m0 = p * mr;
          const int rows = static_cast<int>(std::min<int64_t>(mr, M - m0));
          job.row_add = row_add + m0;
          job.neg_az = neg_az != nullptr ? neg_az + m0 : nullptr;
          job.a = pa + p * mr * k4;
          job.rows = rows;
          if (quantized_out) {
            job.scale = out.scale + m0;
            job.fbias = st.fbias != nullptr ? st.fbias + m0 : nullptr;
          }
          job.c = c_base + (m0 * out.rs + (n0 + j) * out.cs) * static_cast<int64_t>(st.elem);
          kn.tile(job);
        }
      }
    }
  };
  run_tasks(threads, parallel, static_cast<size_t>(mt * nt), body);
}

}  // namespace

void qgemm(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K, const void* packed_a,
           const int32_t* a_zero, const uint8_t* b, int64_t b_rs, int64_t b_cs, int32_t b_zero,
           const QGemmOutput& out) {
  BSource src;
  src.b = b;
  src.rs = b_rs;
  src.cs = b_cs;
  run_qgemm(isa, threads, M, N, K, packed_a, a_zero, src, b_zero, out);
}

void qgemm_rows(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K,
                const void* packed_a, const int32_t* a_zero, const uint8_t* b,
                const int64_t* b_row_offsets, int32_t b_zero, const QGemmOutput& out) {
  BSource src;
  src.b = b;
  src.row_off = b_row_offsets;
  run_qgemm(isa, threads, M, N, K, packed_a, a_zero, src, b_zero, out);
}

}  // namespace infer::cpu::simd
