// simd::sgemm against its definition, evaluated in double precision in this file:
//   C = act(alpha * A * B + beta * C0 + bias + residual)
// for every ISA this machine runs, over odd sizes (edges of the register tiles), sizes
// past the cache blocks (K > KC, M > MC, N > NC), strided and transposed raw operands,
// prepacked operands, alpha/beta variants, every epilogue, every bottom-edge row count,
// several thread counts (which must give bit-identical results to a serial run, also
// where the threads share the packing of an operand), a B that packs itself (packed once
// for all row tiles) and empty dims.
//
// The error allowed for an element is 1e-6 * sqrt(K + 1) * S, where S is the sum of the
// magnitudes of the terms (|alpha| sum_k |A B| + |beta C0| + |bias| + |residual|): a float
// sum of K terms typically errs by about sqrt(K) * 6e-8 * S. Measured worst err / S over
// this file (printed at the end of the suite; cases without an activation): scalar 2.5e-7,
// avx2 and avx512 (Zen 5) 2.4e-7 (neon under qemu measured 2.1e-7 before the bottom-edge
// and shared-operand cases were added), set by short-K cases where the terms cancel, i.e.
// within a few float roundings of S.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "simd/gemm.hpp"
#include "simd_test_util.hpp"

namespace infer::cpu::simd {
namespace {

using testing::StdThreads;
using testing::random_floats;

struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes) : p(std::aligned_alloc(64, (bytes + 63) / 64 * 64)) {}
  ~AlignedBuffer() { std::free(p); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  void* p;
};

struct Case {
  int64_t M = 1, N = 1, K = 1;
  bool trans_a = false, trans_b = false;
  int64_t pad = 0;  // extra elements per row of the raw operands and of C
  bool pack_a = false, pack_b = false;
  float alpha = 1.0f, beta = 0.0f;
  GemmEpilogue::Bias bias = GemmEpilogue::Bias::kNone;
  bool residual = false;
  Act act;
  uint32_t seed = 1;
};

std::map<Isa, double>& worst_errors() {
  static std::map<Isa, double> m;
  return m;
}

// Runs the case on `threads` and returns C (ldc = N + pad); checks it against the double
// reference when `check`.
std::vector<float> run_case(Isa isa, const Threads& threads, const Case& c, bool check = true) {
  const int64_t M = c.M, N = c.N, K = c.K;
  // Raw A is stored [M, K] (or [K, M] when transposed) with `pad` extra per row.
  const int64_t a_rows = c.trans_a ? K : M, a_cols = c.trans_a ? M : K;
  const int64_t b_rows = c.trans_b ? N : K, b_cols = c.trans_b ? K : N;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = N + c.pad;
  const auto a = random_floats(static_cast<size_t>(std::max<int64_t>(1, a_rows * lda)), c.seed);
  const auto b = random_floats(static_cast<size_t>(std::max<int64_t>(1, b_rows * ldb)), c.seed + 7);
  const auto c0 = random_floats(static_cast<size_t>(std::max<int64_t>(1, M * ldc)), c.seed + 13);
  const auto bias = random_floats(static_cast<size_t>(std::max(M, N)), c.seed + 17);
  const auto res = random_floats(static_cast<size_t>(std::max<int64_t>(1, M * ldc)), c.seed + 19);
  auto A_at = [&](int64_t i, int64_t k) { return c.trans_a ? a[k * lda + i] : a[i * lda + k]; };
  auto B_at = [&](int64_t k, int64_t j) { return c.trans_b ? b[j * ldb + k] : b[k * ldb + j]; };

  GemmOperand A = c.trans_a ? GemmOperand::raw(a.data(), 1, lda) : GemmOperand::raw(a.data(), lda, 1);
  GemmOperand B = c.trans_b ? GemmOperand::raw(b.data(), 1, ldb) : GemmOperand::raw(b.data(), ldb, 1);
  AlignedBuffer pa(packed_a_bytes(isa, M, K)), pb(packed_b_bytes(isa, K, N));
  if (c.pack_a) {
    pack_a(isa, M, K, A, pa.p);
    EXPECT_TRUE(packed_matches_a(pa.p, packed_a_bytes(isa, M, K), isa, M, K));
    A = GemmOperand::prepacked(pa.p);
  }
  if (c.pack_b) {
    pack_b(isa, K, N, B, pb.p);
    EXPECT_TRUE(packed_matches_b(pb.p, packed_b_bytes(isa, K, N), isa, K, N));
    B = GemmOperand::prepacked(pb.p);
  }
  GemmEpilogue ep;
  ep.bias_mode = c.bias;
  ep.bias = c.bias != GemmEpilogue::Bias::kNone ? bias.data() : nullptr;
  ep.residual = c.residual ? res.data() : nullptr;
  ep.ldr = ldc;
  ep.act = c.act;

  std::vector<float> C = c0;
  if (c.beta == 0.0f)  // C is write-only: fill it with NaN to prove it is never read
    for (int64_t i = 0; i < M; ++i) std::fill_n(C.begin() + i * ldc, N, std::nanf(""));
  sgemm(isa, threads, M, N, K, c.alpha, A, B, c.beta, C.data(), ldc, ep);
  if (!check) return C;

  double worst = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = static_cast<double>(A_at(i, k)) * B_at(k, j);
        acc += p;
        mag += std::fabs(p);
      }
      double v = c.alpha * acc;
      mag *= std::fabs(c.alpha);
      if (c.beta != 0.0f) {
        v += static_cast<double>(c.beta) * c0[i * ldc + j];
        mag += std::fabs(c.beta * c0[i * ldc + j]);
      }
      if (c.bias != GemmEpilogue::Bias::kNone) {
        const double bv = bias[c.bias == GemmEpilogue::Bias::kPerRow ? i : j];
        v += bv;
        mag += std::fabs(bv);
      }
      if (c.residual) {
        v += res[i * ldc + j];
        mag += std::fabs(res[i * ldc + j]);
      }
      const double want = testing::act_reference(c.act, v);
      const double got = C[i * ldc + j];
      const double err = std::fabs(got - want);
      // The activations' own float error (the vectorized exp/tanh/erf) on top.
      const double act_tol = c.act.kind == ActKind::kNone ? 0 : 2e-6 * std::fabs(want) + 1e-6;
      const double allowed = 1e-6 * std::sqrt(static_cast<double>(K) + 1) * mag + act_tol + 1e-30;
      if (c.act.kind == ActKind::kNone && mag > 0) worst = std::max(worst, err / mag);
      if (!(err <= allowed)) {
        ADD_FAILURE() << isa_name(isa) << " M=" << M << " N=" << N << " K=" << K << " C(" << i
                      << "," << j << ") = " << got << ", expected " << want << " (allowed error "
                      << allowed << ")";
        return C;
      }
    }
  // Padding of C between rows is never written.
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = N; j < ldc; ++j) EXPECT_EQ(C[i * ldc + j], c0[i * ldc + j]) << "padding";
  double& w = worst_errors()[isa];
  w = std::max(w, worst);
  return C;
}

class GemmTest : public ::testing::TestWithParam<Isa> {
 protected:
  static void TearDownTestSuite() {
    for (const auto& [isa, w] : worst_errors())
      std::printf("[ gemm ] %s: worst |error| / sum|terms| = %.3g\n", isa_name(isa), w);
  }
  SerialThreads serial_;
};

TEST_P(GemmTest, AllSmallSizeCombinations) {
  const int64_t sizes[] = {1, 2, 7, 17, 31, 33, 64};
  uint32_t seed = 1;
  for (int64_t M : sizes)
    for (int64_t N : sizes)
      for (int64_t K : sizes) {
        Case c;
        c.M = M, c.N = N, c.K = K, c.seed = seed++;
        run_case(GetParam(), serial_, c);
        if (::testing::Test::HasFailure()) return;
      }
}

TEST_P(GemmTest, LargerSizesCrossingTheCacheBlocks) {
  // 255 and 600 cross KC (256); 200 crosses MC; 600 and 1100 cross NC.
  // N = 35 and 196 end in 3- and 4-column panels, 49 and 784 in 17- and 16-column ones: the
  // AVX-512 tile has a narrow and a half-width variant for those right edges.
  const int64_t shapes[][3] = {{255, 255, 255}, {200, 33, 600}, {17, 1100, 300}, {255, 7, 513},
                               {1, 600, 700},   {600, 1, 513},  {64, 255, 1},   {33, 64, 2000},
                               {29, 35, 513},   {40, 196, 300}, {43, 49, 260},  {15, 784, 70}};
  for (const auto& s : shapes) {
    Case c;
    c.M = s[0], c.N = s[1], c.K = s[2];
    run_case(GetParam(), serial_, c);
  }
}

TEST_P(GemmTest, TransposedAndStridedRawOperands) {
  const int64_t shapes[][3] = {{7, 17, 31}, {33, 1, 64}, {1, 33, 17}, {31, 40, 300}, {64, 64, 7}};
  for (const auto& s : shapes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        Case c;
        c.M = s[0], c.N = s[1], c.K = s[2];
        c.trans_a = ta, c.trans_b = tb, c.pad = 5;
        run_case(GetParam(), serial_, c);
      }
}

TEST_P(GemmTest, PrepackedOperands) {
  const int64_t shapes[][3] = {{1, 1, 1},  {7, 17, 31},   {33, 1, 64},    {1, 33, 300},
                               {64, 255, 17}, {200, 70, 600}, {31, 600, 257}};
  for (const auto& s : shapes)
    for (int which = 1; which < 4; ++which)
      for (int tb = 0; tb < 2; ++tb) {
        Case c;
        c.M = s[0], c.N = s[1], c.K = s[2];
        c.pack_a = which & 1, c.pack_b = (which & 2) != 0, c.trans_b = tb, c.pad = 3;
        c.beta = 0.5f;
        run_case(GetParam(), serial_, c);
      }
}

TEST_P(GemmTest, AlphaAndBeta) {
  const float alphas[] = {1.0f, -0.5f, 2.0f, 0.0f};
  const float betas[] = {0.0f, 1.0f, -1.5f};
  const int64_t shapes[][3] = {{17, 33, 31}, {1, 40, 17}, {40, 1, 17}, {30, 70, 600}, {17, 36, 300}};
  for (const auto& s : shapes)
    for (float alpha : alphas)
      for (float beta : betas) {
        Case c;
        c.M = s[0], c.N = s[1], c.K = s[2], c.alpha = alpha, c.beta = beta, c.pad = 2;
        run_case(GetParam(), serial_, c);
      }
}

TEST_P(GemmTest, EveryEpilogue) {
  const Act acts[] = {{ActKind::kNone},        {ActKind::kRelu},
                      {ActKind::kTanh},        {ActKind::kSigmoid},
                      {ActKind::kLeakyRelu, 0.1f}, {ActKind::kClip, -0.5f, 0.75f},
                      {ActKind::kHardSigmoid, 0.2f, 0.5f}, {ActKind::kHardSwish},
                      {ActKind::kGelu},        {ActKind::kGeluTanh}};
  const GemmEpilogue::Bias biases[] = {GemmEpilogue::Bias::kNone, GemmEpilogue::Bias::kPerRow,
                                       GemmEpilogue::Bias::kPerCol};
  // General path (with a K split), and both GEMV paths, raw and packed.
  const int64_t shapes[][3] = {{17, 33, 300}, {1, 45, 17}, {45, 1, 17}};
  for (const auto& s : shapes)
    for (const Act& act : acts)
      for (auto bias : biases)
        for (int residual = 0; residual < 2; ++residual)
          for (int packed = 0; packed < 2; ++packed) {
            Case c;
            c.M = s[0], c.N = s[1], c.K = s[2], c.pad = 1;
            c.act = act, c.bias = bias, c.residual = residual, c.beta = packed ? 0.0f : 0.75f;
            c.pack_a = packed, c.pack_b = packed, c.alpha = 1.5f;
            run_case(GetParam(), serial_, c);
          }
}

TEST_P(GemmTest, ThreadCountsGiveTheSerialResultBitForBit) {
  // Sized to split into several tiles (M > MC or N > NC, or > 1 MFLOP) while keeping the
  // double reference cheap enough for qemu.
  const int64_t shapes[][3] = {{200, 130, 300}, {64, 600, 64}, {500, 49, 64}, {1, 3000, 200},
                               {3000, 1, 200}, {128, 300, 96}};
  for (const auto& s : shapes)
    for (int packed = 0; packed < 2; ++packed) {
      Case c;
      c.M = s[0], c.N = s[1], c.K = s[2], c.pack_b = packed, c.pad = 1;
      c.bias = GemmEpilogue::Bias::kPerCol, c.act = {ActKind::kGelu};
      const auto serial = run_case(GetParam(), serial_, c, false);
      for (int workers : {1, 2, 3, 8}) {
        const auto threaded = run_case(GetParam(), StdThreads(workers), c, false);
        ASSERT_EQ(threaded.size(), serial.size());
        EXPECT_EQ(0, std::memcmp(threaded.data(), serial.data(), serial.size() * sizeof(float)))
            << "M=" << c.M << " N=" << c.N << " K=" << c.K << " with " << workers << " threads";
      }
      run_case(GetParam(), StdThreads(3), c);  // and the threaded result is right
    }
}

TEST_P(GemmTest, EveryBottomEdgeRowCount) {
  // M = 28 + r: two full 14-row panels (AVX-512; 4 and 6 on the other ISAs) and a bottom
  // edge of every height, each with its own register tile; N = 16, 32 and 49 give the
  // half-width, full and mixed column panels; odd K covers the tiles that split K into
  // even and odd steps.
  for (int64_t r = 1; r <= 14; ++r)
    for (int64_t N : {16, 32, 49})
      for (int64_t K : {1, 2, 3, 257}) {
        Case c;
        c.M = 28 + r, c.N = N, c.K = K, c.seed = static_cast<uint32_t>(r * 100 + N + K);
        c.bias = GemmEpilogue::Bias::kPerRow, c.beta = 0.5f;
        run_case(GetParam(), serial_, c);
        if (::testing::Test::HasFailure()) return;
      }
}

TEST_P(GemmTest, OperandsSharedBetweenTilesOnManyThreads) {
  // Raw A over several column tiles (N > NC: each tile used to pack A itself, now the tiles
  // pack it once between them) and raw B over several row tiles (M > MC), row-major and
  // transposed, on 1..8 threads racing to pack the same blocks; BERT's shape (M = 128)
  // scaled down in K.
  const int64_t shapes[][3] = {{128, 1100, 70}, {400, 45, 300}, {300, 700, 40}, {128, 768, 260}};
  for (const auto& s : shapes)
    for (int tb = 0; tb < 2; ++tb) {
      Case c;
      c.M = s[0], c.N = s[1], c.K = s[2], c.trans_b = tb, c.pad = 3;
      c.bias = GemmEpilogue::Bias::kPerCol;
      const auto serial = run_case(GetParam(), serial_, c);
      for (int workers : {2, 3, 8}) {
        const auto threaded = run_case(GetParam(), StdThreads(workers), c, false);
        EXPECT_EQ(0, std::memcmp(threaded.data(), serial.data(), serial.size() * sizeof(float)))
            << "M=" << c.M << " N=" << c.N << " K=" << c.K << " with " << workers << " threads";
      }
    }
}

// A B operand that packs itself: element (k, n) of a row-major matrix, packed with plain
// loops here (the layout gemm_kernels.hpp documents), as a convolution's implicit im2col
// does. Counts the elements it packs.
class MatrixSource final : public GemmBSource {
 public:
  MatrixSource(const float* b, int64_t ldb) : b_(b), ldb_(ldb) {}
  void pack_block(Isa, int64_t k0, int64_t kc, int64_t n0, int64_t cols, int nr,
                  float* dst) const override {
    for (int64_t p0 = 0; p0 < cols; p0 += nr, dst += kc * nr)
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = 0; j < nr; ++j)
          dst[k * nr + j] = p0 + j < cols ? b_[(k0 + k) * ldb_ + n0 + p0 + j] : 0.0f;
    packed_ += kc * cols;
  }
  int64_t packed() const { return packed_.load(); }

 private:
  const float* b_;
  int64_t ldb_;
  mutable std::atomic<int64_t> packed_{0};
};

TEST_P(GemmTest, SourceOperandIsPackedOnceForAllRowTiles) {
  // M = 700 spans several row tiles; the source's blocks must still be gathered exactly
  // once each (the im2col of a 3x3 convolution costs a gather per element), on any thread
  // count, and give the definition's result.
  const Isa isa = GetParam();
  const int64_t M = 700, N = 49, K = 300;
  const auto a = random_floats(static_cast<size_t>(M * K), 5);
  const auto b = random_floats(static_cast<size_t>(K * N), 6);
  for (int workers : {1, 2, 3}) {
    const MatrixSource source(b.data(), N);
    std::vector<float> C(static_cast<size_t>(M * N), std::nanf(""));
    const StdThreads threads(workers);
    sgemm(isa, threads, M, N, K, 1.0f, GemmOperand::raw(a.data(), K),
          GemmOperand::from_source(&source), 0.0f, C.data(), N);
    EXPECT_EQ(source.packed(), K * N) << workers << " threads";
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          acc += static_cast<double>(a[i * K + k]) * b[k * N + j];
          mag += std::fabs(static_cast<double>(a[i * K + k]) * b[k * N + j]);
        }
        ASSERT_LE(std::fabs(C[i * N + j] - acc), 1e-6 * std::sqrt(K + 1.0) * mag + 1e-30)
            << isa_name(isa) << " C(" << i << "," << j << ") with " << workers << " threads";
      }
  }
}

TEST_P(GemmTest, EmptyDims) {
  // K == 0: C = beta * C, then the epilogue.
  for (float beta : {0.0f, 2.0f}) {
    Case c;
    c.M = 5, c.N = 9, c.K = 0, c.beta = beta, c.bias = GemmEpilogue::Bias::kPerRow;
    c.residual = true, c.act = {ActKind::kRelu};
    run_case(GetParam(), serial_, c);
    c.pack_a = c.pack_b = true;
    run_case(GetParam(), StdThreads(2), c);
  }
  // M == 0 or N == 0: nothing to do, nothing touched.
  float sentinel = 42.0f;
  const float one = 1.0f;
  sgemm(GetParam(), serial_, 0, 5, 3, 1.0f, GemmOperand::raw(&one, 3), GemmOperand::raw(&one, 5),
        0.0f, &sentinel, 5);
  sgemm(GetParam(), serial_, 5, 0, 3, 1.0f, GemmOperand::raw(&one, 3), GemmOperand::raw(&one, 0),
        0.0f, &sentinel, 1);
  EXPECT_EQ(sentinel, 42.0f);
}

TEST_P(GemmTest, PackedMatchesRejectsOtherIsaOrDims) {
  const Isa isa = GetParam();
  const auto b = random_floats(6 * 10, 3);
  AlignedBuffer pb(packed_b_bytes(isa, 6, 10));
  pack_b(isa, 6, 10, GemmOperand::raw(b.data(), 10), pb.p);
  const size_t bytes = packed_b_bytes(isa, 6, 10);
  EXPECT_TRUE(packed_matches_b(pb.p, bytes, isa, 6, 10));
  EXPECT_FALSE(packed_matches_b(pb.p, bytes, isa, 10, 6));
  EXPECT_FALSE(packed_matches_b(pb.p, bytes - 1, isa, 6, 10));
  EXPECT_FALSE(packed_matches_a(pb.p, bytes, isa, 6, 10));
  for (Isa other : supported_isas()) {
    if (other != isa) {
      EXPECT_FALSE(packed_matches_b(pb.p, bytes, other, 6, 10));
    }
  }
  EXPECT_FALSE(packed_matches_b(b.data(), 64, isa, 6, 10));  // no header at all
}

INSTANTIATE_TEST_SUITE_P(Isas, GemmTest, ::testing::ValuesIn(testing::test_isas()),
                         testing::isa_param_name);

}  // namespace
}  // namespace infer::cpu::simd
