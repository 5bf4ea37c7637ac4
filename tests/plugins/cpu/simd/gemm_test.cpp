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
//
// The bfloat16 precision (GemmBf16Test, AVX-512 with AVX512_BF16 only; skipped elsewhere)
// is held to the same bound against the definition on operands rounded by bf16_bits, the
// rounding written here from vcvtneps2bf16's definition (measured worst 7.9e-8 of S:
// products of bfloat16 numbers are exact in float32). It must also differ from float32
// where the inputs are not bfloat16 numbers, and equal it bit for bit where they are and
// every sum is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "simd/gemm.hpp"
#include "simd/gemm_kernels.hpp"
#include "simd_test_util.hpp"

namespace infer::cpu::simd {
namespace testing {

// float -> bfloat16 bits as vcvtneps2bf16 rounds, written here from its definition as the
// reference: round to nearest, ties to even; a NaN stays a NaN (quieted, sign and top
// payload bits kept); an infinity stays one and a finite value past the largest bfloat16
// becomes one; a float32 subnormal becomes a zero of its sign (the instruction treats
// subnormal inputs as zero). Shared with conv_test.cpp.
uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float bf16_round(float f) {
  const uint32_t u = static_cast<uint32_t>(bf16_bits(f)) << 16;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

}  // namespace testing

namespace {

using testing::bf16_round;

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
  // kBfloat16: the packed operands are packed in bfloat16 (at least one must be, or the
  // product is float32), and the reference rounds both operands to bfloat16 first.
  GemmPrecision precision = GemmPrecision::kFloat32;
};

std::map<Isa, double>& worst_errors() {
  static std::map<Isa, double> m;
  return m;
}
double& worst_bf16_error() {
  static double w = 0;
  return w;
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
  const bool bf16 = c.precision == GemmPrecision::kBfloat16;
  auto A_at = [&](int64_t i, int64_t k) {
    const float v = c.trans_a ? a[k * lda + i] : a[i * lda + k];
    return bf16 ? bf16_round(v) : v;
  };
  auto B_at = [&](int64_t k, int64_t j) {
    const float v = c.trans_b ? b[j * ldb + k] : b[k * ldb + j];
    return bf16 ? bf16_round(v) : v;
  };

  GemmOperand A = c.trans_a ? GemmOperand::raw(a.data(), 1, lda) : GemmOperand::raw(a.data(), lda, 1);
  GemmOperand B = c.trans_b ? GemmOperand::raw(b.data(), 1, ldb) : GemmOperand::raw(b.data(), ldb, 1);
  const GemmPrecision prec = c.precision;
  AlignedBuffer pa(packed_a_bytes(isa, M, K, prec)), pb(packed_b_bytes(isa, K, N, prec));
  if (c.pack_a) {
    pack_a(isa, M, K, A, pa.p, prec);
    EXPECT_TRUE(packed_matches_a(pa.p, packed_a_bytes(isa, M, K, prec), isa, M, K, prec));
    A = GemmOperand::prepacked(pa.p);
  }
  if (c.pack_b) {
    pack_b(isa, K, N, B, pb.p, prec);
    EXPECT_TRUE(packed_matches_b(pb.p, packed_b_bytes(isa, K, N, prec), isa, K, N, prec));
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
        ADD_FAILURE() << isa_name(isa) << " " << gemm_precision_name(prec) << " M=" << M << " N=" << N << " K=" << K << " C(" << i
                      << "," << j << ") = " << got << ", expected " << want << " (allowed error "
                      << allowed << ")";
        return C;
      }
    }
  // Padding of C between rows is never written.
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = N; j < ldc; ++j) EXPECT_EQ(C[i * ldc + j], c0[i * ldc + j]) << "padding";
  double& w = bf16 ? worst_bf16_error() : worst_errors()[isa];
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

// The bfloat16 precision: sgemm on bfloat16-rounded operands, float32 accumulation. The
// reference rounds the operands with bf16_bits (above) and sums in double; their products
// are exact in float32, so the float32 tolerance of run_case applies unchanged.
class GemmBf16Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gemm_precision_supported(Isa::kAvx512, GemmPrecision::kBfloat16))
      GTEST_SKIP() << "this CPU lacks AVX512_BF16: the bfloat16 GEMM exists only on AVX-512 CPUs with it";
  }
  static void TearDownTestSuite() {
    std::printf("[ gemm ] bfloat16: worst |error| / sum|terms| = %.3g\n", worst_bf16_error());
  }
  static constexpr Isa kIsa = Isa::kAvx512;
  SerialThreads serial_;
};

TEST(GemmBf16Rounding, ReferenceRoutineRoundsToNearestEven) {
  auto bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return testing::bf16_bits(f);
  };
  EXPECT_EQ(bits(0x3f800000u), 0x3f80);  // 1
  EXPECT_EQ(bits(0x3f808000u), 0x3f80);  // tie: to the even 0x3f80
  EXPECT_EQ(bits(0x3f818000u), 0x3f82);  // tie: to the even 0x3f82
  EXPECT_EQ(bits(0x3f808001u), 0x3f81);  // just past the tie: up
  EXPECT_EQ(bits(0x3f807fffu), 0x3f80);  // just below it: down
  EXPECT_EQ(bits(0xbf818000u), 0xbf82);  // negative ties too
  EXPECT_EQ(bits(0x7f800000u), 0x7f80);  // +inf
  EXPECT_EQ(bits(0xff800000u), 0xff80);  // -inf
  EXPECT_EQ(bits(0x7f7fffffu), 0x7f80);  // the largest float rounds to inf
  EXPECT_EQ(bits(0x7f7f0000u), 0x7f7f);  // the largest bfloat16 stays
  EXPECT_EQ(bits(0x7fc00000u), 0x7fc0);  // quiet NaN
  EXPECT_EQ(bits(0x7f800001u), 0x7fc0);  // signaling NaN whose payload is in the low bits
  EXPECT_EQ(bits(0xffa00000u), 0xffe0);  // negative NaN keeps sign and payload, quieted
  EXPECT_EQ(bits(0x00800000u), 0x0080);  // the smallest normal stays
  EXPECT_EQ(bits(0x007fffffu), 0x0000);  // subnormals become zeros of their sign
  EXPECT_EQ(bits(0x80000001u), 0x8000);
  EXPECT_EQ(bits(0x00000000u), 0x0000);
  EXPECT_EQ(bits(0x80000000u), 0x8000);
  EXPECT_EQ(bf16_round(1.0f + 1.0f / 512), 1.0f);  // 1 + half an ulp of bfloat16: tie
}

// The packed layout (gemm_kernels.hpp) holds, for pair step s and column c of panel p of
// B, the unit bf16(B(2s, p * NR + c)) | bf16(B(2s + 1, p * NR + c)) << 16.
uint32_t packed_b_unit(const void* packed, int64_t K, int nr, int64_t s, int64_t n) {
  const auto* units = reinterpret_cast<const uint32_t*>(static_cast<const char*>(packed) + 64);
  return units[(n / nr) * ((K + 1) / 2) * nr + s * nr + n % nr];
}

TEST_F(GemmBf16Test, PackingRoundsLikeTheReferenceBitForBit) {
  // Random bit patterns (every exponent: NaNs, infinities, subnormals, ties) and the
  // special values, converted by pack_b from row-major B (the direct conversion) and from
  // transposed B (float32 panels, then converted), K odd so the last pair is half padding.
  const int64_t K = 301, N = 45;
  const int nr = gemm_detail::geometry(kIsa).nr;
  std::vector<float> b(static_cast<size_t>(K * N)), bt(b.size());
  std::mt19937 rng(11);
  const uint32_t specials[] = {0x3f808000u, 0x3f818000u, 0x7f800001u, 0xffa00000u, 0x007fffffu,
                               0x80000001u, 0x7f7fffffu, 0x7f800000u, 0xff800000u, 0x80000000u};
  for (size_t i = 0; i < b.size(); ++i) {
    uint32_t u = i < std::size(specials) ? specials[i] : static_cast<uint32_t>(rng());
    if (i % 3 == 1) u = (u & 0xffff0000u) | 0x8000u;  // many exact ties
    std::memcpy(&b[i], &u, sizeof u);
  }
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) bt[n * K + k] = b[k * N + n];
  const size_t bytes = packed_b_bytes(kIsa, K, N, GemmPrecision::kBfloat16);
  EXPECT_LT(bytes, packed_b_bytes(kIsa, K, N));
  AlignedBuffer p1(bytes), p2(bytes);
  pack_b(kIsa, K, N, GemmOperand::raw(b.data(), N), p1.p, GemmPrecision::kBfloat16);
  pack_b(kIsa, K, N, GemmOperand::raw(bt.data(), 1, K), p2.p, GemmPrecision::kBfloat16);
  for (int64_t s = 0; s < (K + 1) / 2; ++s)
    for (int64_t n = 0; n < N; ++n) {
      const uint32_t lo = testing::bf16_bits(b[(2 * s) * N + n]);
      const uint32_t hi = 2 * s + 1 < K ? testing::bf16_bits(b[(2 * s + 1) * N + n]) : 0u;
      const uint32_t want = lo | hi << 16;
      ASSERT_EQ(packed_b_unit(p1.p, K, nr, s, n), want) << "row-major, pair " << s << " col " << n;
      ASSERT_EQ(packed_b_unit(p2.p, K, nr, s, n), want) << "transposed, pair " << s << " col " << n;
    }
  // Columns past N in the last panel are zero.
  EXPECT_EQ(packed_b_unit(p1.p, K, nr, 0, N), 0u);
}

TEST_F(GemmBf16Test, MatchesTheRoundedReference) {
  // Edges of the 14 x 32 tile (M = 1, 13, 14, 15, 29; N = 1..4 narrow, 16, 17, 20, 33, 49),
  // odd K (a half-padded last pair), K = 1 and 2, K past the cache block (512 pair steps),
  // with A or B or both prepacked and the other raw, plain or transposed.
  const int64_t shapes[][3] = {{1, 1, 1},    {1, 33, 300},  {40, 1, 17},   {13, 17, 1},
                               {14, 32, 2},  {15, 33, 3},   {29, 49, 257}, {7, 4, 64},
                               {30, 3, 31},  {17, 20, 600}, {200, 70, 1100}, {1, 1000, 513},
                               {100, 16, 99}, {64, 2, 33},  {31, 100, 1}};
  uint32_t seed = 3;
  for (const auto& sh : shapes)
    for (int which = 1; which < 4; ++which)
      for (int trans = 0; trans < 2; ++trans) {
        Case c;
        c.M = sh[0], c.N = sh[1], c.K = sh[2], c.seed = seed++;
        c.precision = GemmPrecision::kBfloat16;
        c.pack_a = which & 1, c.pack_b = (which & 2) != 0;
        c.trans_a = trans && !c.pack_a, c.trans_b = trans && !c.pack_b, c.pad = 3;
        run_case(kIsa, serial_, c);
        if (::testing::Test::HasFailure()) return;
      }
}

TEST_F(GemmBf16Test, AlphaBetaAndEpilogues) {
  const Act acts[] = {{ActKind::kNone}, {ActKind::kRelu}, {ActKind::kClip, -0.5f, 0.75f},
                      {ActKind::kGelu}};
  const GemmEpilogue::Bias biases[] = {GemmEpilogue::Bias::kNone, GemmEpilogue::Bias::kPerRow,
                                       GemmEpilogue::Bias::kPerCol};
  const int64_t shapes[][3] = {{17, 33, 300}, {1, 45, 17}, {45, 1, 17}, {30, 70, 600}};
  for (const auto& sh : shapes)
    for (const Act& act : acts)
      for (auto bias : biases)
        for (int residual = 0; residual < 2; ++residual) {
          Case c;
          c.M = sh[0], c.N = sh[1], c.K = sh[2], c.pad = 1, c.precision = GemmPrecision::kBfloat16;
          c.act = act, c.bias = bias, c.residual = residual;
          c.alpha = residual ? 1.5f : 1.0f, c.beta = bias == GemmEpilogue::Bias::kPerRow ? 0.75f : 0.0f;
          c.pack_a = residual == 0, c.pack_b = residual == 1;
          run_case(kIsa, serial_, c);
        }
  for (float beta : {1.0f, -1.5f}) {
    Case c;
    c.M = 31, c.N = 40, c.K = 77, c.beta = beta, c.alpha = -0.5f, c.pack_b = true;
    c.precision = GemmPrecision::kBfloat16;
    run_case(kIsa, serial_, c);
  }
}

TEST_F(GemmBf16Test, DiffersFromFloat32WhereInputsAreNotBfloat16) {
  // Random floats are not bfloat16 numbers: the bfloat16 result must miss the float32 one
  // by far more than float32 rounding (else the operands were not rounded), while
  // run_case checks it against the rounded reference.
  const int64_t M = 20, N = 40, K = 256;
  Case c;
  c.M = M, c.N = N, c.K = K, c.pack_a = true, c.precision = GemmPrecision::kBfloat16;
  const auto got = run_case(kIsa, serial_, c);
  c.precision = GemmPrecision::kFloat32;
  const auto f32 = run_case(kIsa, serial_, c);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - f32[i]));
  // The float32 result is allowed 1e-6 * sqrt(K + 1) * S (S = sum |a b|, about K / 4 here);
  // rounding the operands to bfloat16 (a relative 2^-9 each) moves the sums by about
  // 2^-9 * sqrt(K) / 4, 6e-3, twenty times that allowance at its largest over C.
  const double float32_allowance = 1e-6 * std::sqrt(K + 1.0) * (K / 4.0);
  EXPECT_GT(worst, float32_allowance) << "bfloat16 and float32 results agree to " << worst;
}

TEST_F(GemmBf16Test, EqualsFloat32ExactlyOnBfloat16Inputs) {
  // Small integers are bfloat16 numbers and their sums are exact in float32: both
  // precisions must give the same bits, epilogue included, serial and threaded.
  const int64_t shapes[][3] = {{29, 49, 257}, {1, 70, 33}, {50, 1, 64}, {200, 300, 600}};
  for (const auto& sh : shapes) {
    const int64_t M = sh[0], N = sh[1], K = sh[2];
    std::mt19937 rng(static_cast<uint32_t>(M + N + K));
    std::uniform_int_distribution<int> dist(-8, 8);
    std::vector<float> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N));
    std::vector<float> bias(static_cast<size_t>(M)), c0(static_cast<size_t>(M * N));
    for (auto* v : {&a, &b, &bias, &c0})
      for (float& x : *v) x = static_cast<float>(dist(rng));
    GemmEpilogue ep;
    ep.bias_mode = GemmEpilogue::Bias::kPerRow;
    ep.bias = bias.data();
    ep.act = {ActKind::kRelu};
    std::vector<float> results[3];
    for (int run = 0; run < 3; ++run) {
      const GemmPrecision prec = run == 0 ? GemmPrecision::kFloat32 : GemmPrecision::kBfloat16;
      AlignedBuffer pa(packed_a_bytes(kIsa, M, K, prec));
      pack_a(kIsa, M, K, GemmOperand::raw(a.data(), K), pa.p, prec);
      results[run] = c0;
      sgemm(kIsa, run == 2 ? static_cast<const Threads&>(StdThreads(2)) : serial_, M, N, K, 1.0f,
            GemmOperand::prepacked(pa.p), GemmOperand::raw(b.data(), N), 2.0f,
            results[run].data(), N, ep);
    }
    EXPECT_EQ(0, std::memcmp(results[1].data(), results[0].data(), results[0].size() * 4))
        << "M=" << M << " N=" << N << " K=" << K;
    EXPECT_EQ(0, std::memcmp(results[2].data(), results[0].data(), results[0].size() * 4))
        << "threaded, M=" << M << " N=" << N << " K=" << K;
  }
}

TEST_F(GemmBf16Test, ThreadCountsGiveTheSerialResultBitForBit) {
  const int64_t shapes[][3] = {{200, 130, 300}, {64, 600, 64}, {500, 49, 64}, {1, 3000, 200},
                               {3000, 1, 200}, {128, 1100, 70}};
  for (const auto& sh : shapes)
    for (int packed_b = 0; packed_b < 2; ++packed_b) {
      Case c;
      c.M = sh[0], c.N = sh[1], c.K = sh[2], c.pack_a = !packed_b, c.pack_b = packed_b, c.pad = 1;
      c.bias = GemmEpilogue::Bias::kPerCol, c.act = {ActKind::kGelu};
      c.precision = GemmPrecision::kBfloat16;
      const auto serial = run_case(kIsa, serial_, c, false);
      for (int workers : {2, 3, 8}) {
        const auto threaded = run_case(kIsa, StdThreads(workers), c, false);
        EXPECT_EQ(0, std::memcmp(threaded.data(), serial.data(), serial.size() * sizeof(float)))
            << "M=" << c.M << " N=" << c.N << " K=" << c.K << " with " << workers << " threads";
      }
      run_case(kIsa, StdThreads(3), c);
    }
}

TEST_F(GemmBf16Test, SourceOperandIsRoundedToo) {
  // A GemmBSource (a convolution's implicit im2col) packs float32 panels; with a bfloat16
  // A they are converted before the tile reads them. K odd and past the conversion chunk.
  const int64_t M = 45, N = 70, K = 601;
  const auto a = random_floats(static_cast<size_t>(M * K), 5);
  const auto b = random_floats(static_cast<size_t>(K * N), 6);
  AlignedBuffer pa(packed_a_bytes(kIsa, M, K, GemmPrecision::kBfloat16));
  pack_a(kIsa, M, K, GemmOperand::raw(a.data(), K), pa.p, GemmPrecision::kBfloat16);
  for (int workers : {1, 3}) {
    const MatrixSource source(b.data(), N);
    std::vector<float> C(static_cast<size_t>(M * N), std::nanf(""));
    sgemm(kIsa, StdThreads(workers), M, N, K, 1.0f, GemmOperand::prepacked(pa.p),
          GemmOperand::from_source(&source), 0.0f, C.data(), N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = static_cast<double>(bf16_round(a[i * K + k])) * bf16_round(b[k * N + j]);
          acc += p;
          mag += std::fabs(p);
        }
        ASSERT_LE(std::fabs(C[i * N + j] - acc), 1e-6 * std::sqrt(K + 1.0) * mag + 1e-30)
            << "C(" << i << "," << j << ") with " << workers << " threads";
      }
  }
}

TEST_F(GemmBf16Test, PackedMatchesChecksThePrecision) {
  const auto a = random_floats(20 * 9, 3);
  const size_t bytes = packed_a_bytes(kIsa, 20, 9, GemmPrecision::kBfloat16);
  EXPECT_EQ(bytes, packed_a_bytes(kIsa, 20, 10, GemmPrecision::kBfloat16));  // K padded to even
  AlignedBuffer pa(bytes);
  pack_a(kIsa, 20, 9, GemmOperand::raw(a.data(), 9), pa.p, GemmPrecision::kBfloat16);
  EXPECT_TRUE(packed_matches_a(pa.p, bytes, kIsa, 20, 9, GemmPrecision::kBfloat16));
  EXPECT_FALSE(packed_matches_a(pa.p, bytes, kIsa, 20, 9));
  EXPECT_FALSE(packed_matches_a(pa.p, bytes, kIsa, 20, 10, GemmPrecision::kBfloat16));
  AlignedBuffer pf(packed_a_bytes(kIsa, 20, 9));
  pack_a(kIsa, 20, 9, GemmOperand::raw(a.data(), 9), pf.p);
  EXPECT_FALSE(packed_matches_a(pf.p, packed_a_bytes(kIsa, 20, 9), kIsa, 20, 9,
                                GemmPrecision::kBfloat16));
}

TEST_F(GemmBf16Test, MixedPrecisionOperandsAbort) {
  GTEST_FLAG_SET(death_test_style, testing::kDeathTestStyle);
  const auto a = random_floats(8 * 8, 3);
  AlignedBuffer pa(packed_a_bytes(kIsa, 8, 8, GemmPrecision::kBfloat16));
  AlignedBuffer pb(packed_b_bytes(kIsa, 8, 8));
  pack_a(kIsa, 8, 8, GemmOperand::raw(a.data(), 8), pa.p, GemmPrecision::kBfloat16);
  pack_b(kIsa, 8, 8, GemmOperand::raw(a.data(), 8), pb.p);
  std::vector<float> C(64);
  EXPECT_DEATH(sgemm(kIsa, serial_, 8, 8, 8, 1.0f, GemmOperand::prepacked(pa.p),
                     GemmOperand::prepacked(pb.p), 0.0f, C.data(), 8),
               "packed A is bfloat16 but packed B is float32");
}

TEST(GemmPrecision, NamesAndSupport) {
  EXPECT_STREQ(gemm_precision_name(GemmPrecision::kFloat32), "float32");
  EXPECT_STREQ(gemm_precision_name(GemmPrecision::kBfloat16), "bfloat16");
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
    EXPECT_TRUE(gemm_precision_supported(isa, GemmPrecision::kFloat32)) << isa_name(isa);
    EXPECT_EQ(gemm_precision_supported(isa, GemmPrecision::kBfloat16),
              isa == Isa::kAvx512 && isa_supported(isa) && cpu_has_avx512_bf16())
        << isa_name(isa);
  }
}

TEST(GemmPrecision, PackingBfloat16WhereUnsupportedAborts) {
  GTEST_FLAG_SET(death_test_style, testing::kDeathTestStyle);
  const float a[4] = {1, 2, 3, 4};
  alignas(64) static unsigned char buf[4096];
  for (Isa isa : {Isa::kScalar, Isa::kAvx2}) {
    ASSERT_FALSE(gemm_precision_supported(isa, GemmPrecision::kBfloat16));
    EXPECT_DEATH(pack_a(isa, 2, 2, GemmOperand::raw(a, 2), buf, GemmPrecision::kBfloat16),
                 "no bfloat16 GEMM");
    EXPECT_DEATH(pack_b(isa, 2, 2, GemmOperand::raw(a, 2), buf, GemmPrecision::kBfloat16),
                 "no bfloat16 GEMM");
  }
}

}  // namespace
}  // namespace infer::cpu::simd
