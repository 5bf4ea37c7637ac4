// simd::qgemm against its definition (qgemm.hpp), evaluated in this file with int64
// accumulation and the documented float stage, compared for EXACT equality (every byte of
// C, including the elements it must not write): every ISA this machine runs, and on a CPU
// with VNNI / AVX-VNNI / the AArch64 dot product also the fallbacks of the same ISA
// ("_nodot": vpmaddwd, or scalar on AArch64). The cases
// cover the edges of every register tile (M, N, K of 1, 3, 4, 5, 15, 16, 17, 33, 64, 100,
// 577; K not a multiple of 4), extreme operands (A all -128 / 127, B all 0 / 255, zero
// points at the ends of their ranges), per-row A and scalar B zero points (zero and not),
// transposed and strided A, B and C, every output kind with and without bias, fbias and
// relu, output zero points at the ends of the range with saturation reached, rounding ties,
// the int32 wrap-around, K == 0, empty dims and several thread counts.
#include "simd/qgemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "simd/qgemm_kernels.hpp"
#include "simd_test_util.hpp"

namespace infer::cpu::simd {
namespace {

using Kind = QGemmOutput::Kind;
using testing::StdThreads;

struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes) : p(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64)) {}
  ~AlignedBuffer() { std::free(p); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  void* p;
};

struct QCase {
  int64_t M = 1, N = 1, K = 1;
  bool trans_a = false;    // A stored [K, M]
  bool trans_b = false;    // B stored [N, K] (b_rs = 1)
  bool strided_b = false;  // B(k, n) = b[k * rs + n * 3]: neither stride 1
  bool trans_c = false;    // C(m, n) at m + n * ldc
  bool row_table = false;  // qgemm_rows: B(k, n) = b[row_off[k] + n], rows shuffled and shifted
  int64_t pad = 0;         // extra elements per row (column when transposed) of A, B and C
  bool a_zero = false;     // per-row a_zero (random in [-128, 127] unless az_const)
  std::optional<int32_t> az_const;
  int32_t b_zero = 0;
  std::optional<int8_t> a_const;
  std::optional<uint8_t> b_const;
  Kind kind = Kind::kInt32;
  bool bias = false, fbias = false, relu = false;
  int32_t out_zero = 0;
  float scale_mul = 1.0f;            // times the automatic scale (outputs around +-100)
  std::optional<float> scale_const;  // every row's scale
  uint32_t seed = 1;
};

size_t elem_size(Kind k) { return k == Kind::kUint8 || k == Kind::kInt8 ? 1 : 4; }

// Counts of saturated outputs seen by the reference (int kinds), to prove the cases
// reach both ends.
struct Saturation {
  int64_t low = 0, high = 0;
};

// The definition: int64 sums, wrapped to int32, then the float stage with one rounding
// per operation (volatile stops any contraction into an FMA).
void reference_store(int32_t acc, int64_t m, const QCase& c, const std::vector<int32_t>& bias,
                     const std::vector<float>& scale, const std::vector<float>& fbias, uint8_t* dst,
                     Saturation* sat) {
  if (c.kind == Kind::kInt32) {
    std::memcpy(dst, &acc, 4);
    return;
  }
  const int32_t x = static_cast<int32_t>(static_cast<uint32_t>(acc) +
                                         static_cast<uint32_t>(c.bias ? bias[m] : 0));
  volatile float prod = static_cast<float>(x) * scale[m];
  float v = prod;
  if (c.kind == Kind::kFloat) {
    if (c.fbias) {
      volatile float sum = v + fbias[m];
      v = sum;
    }
    if (c.relu) v = v > 0.0f ? v : 0.0f;
    std::memcpy(dst, &v, 4);
    return;
  }
  const int64_t lo = c.kind == Kind::kUint8 ? 0 : -128, hi = c.kind == Kind::kUint8 ? 255 : 127;
  int64_t q = static_cast<int64_t>(std::nearbyint(v)) + c.out_zero;
  if (q < lo) ++sat->low;
  if (q > hi) ++sat->high;
  q = std::clamp(q, lo, hi);
  if (c.relu) q = std::max<int64_t>(q, c.out_zero);
  if (c.kind == Kind::kUint8)
    *dst = static_cast<uint8_t>(q);
  else
    *dst = static_cast<uint8_t>(static_cast<int8_t>(q));
}

// Runs the case on `threads` and checks every byte of C against the reference. Returns
// the saturation counts of the reference.
Saturation run_case(Isa isa, const Threads& threads, const QCase& c) {
  const int64_t M = c.M, N = c.N, K = c.K;
  std::mt19937 rng(c.seed);
  std::uniform_int_distribution<int> i8(-128, 127), u8(0, 255);
  // A: [M, K] or [K, M], with `pad` extra per row.
  const int64_t a_ld = (c.trans_a ? M : K) + c.pad;
  const int64_t a_rs = c.trans_a ? 1 : a_ld, a_cs = c.trans_a ? a_ld : 1;
  std::vector<int8_t> a(static_cast<size_t>(std::max<int64_t>(1, (c.trans_a ? K : M) * a_ld)));
  for (auto& v : a) v = c.a_const ? *c.a_const : static_cast<int8_t>(i8(rng));
  // B: [K, N], [N, K] or [K, 3N].
  int64_t b_rs, b_cs, b_size;
  if (c.trans_b) {
    b_rs = 1, b_cs = K + c.pad, b_size = N * b_cs;
  } else if (c.strided_b) {
    b_cs = 3, b_rs = 3 * N + c.pad, b_size = K * b_rs;
  } else {
    b_cs = 1, b_rs = N + c.pad, b_size = K * b_rs;
  }
  std::vector<uint8_t> b(static_cast<size_t>(std::max<int64_t>(1, b_size)));
  for (auto& v : b) v = c.b_const ? *c.b_const : static_cast<uint8_t>(u8(rng));
  // qgemm_rows: row k is stored row (7k + 3) mod K, shifted right by k mod (pad + 1).
  std::vector<int64_t> row_off(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) row_off[k] = (k * 7 + 3) % K * b_rs + k % (c.pad + 1);
  auto b_at = [&](int64_t k, int64_t n) {
    return c.row_table ? b[row_off[k] + n] : b[k * b_rs + n * b_cs];
  };
  std::vector<int32_t> az(static_cast<size_t>(M));
  for (auto& v : az) v = c.az_const ? *c.az_const : i8(rng);
  // Scales that put most outputs within +-100 (times scale_mul), biases of the size of
  // the sums.
  const double typical = std::sqrt(static_cast<double>(K) + 1) * 1e4;
  std::uniform_real_distribution<float> sdist(0.3f, 3.0f);
  std::vector<float> scale(static_cast<size_t>(M)), fbias(static_cast<size_t>(M));
  std::vector<int32_t> bias(static_cast<size_t>(M));
  for (int64_t m = 0; m < M; ++m) {
    scale[m] = c.scale_const ? *c.scale_const
                             : static_cast<float>(sdist(rng) * c.scale_mul * 100 / typical);
    bias[m] = static_cast<int32_t>(std::uniform_real_distribution<double>(-typical, typical)(rng));
    fbias[m] = std::uniform_real_distribution<float>(-50.0f, 50.0f)(rng);
  }
  // C: [M, ldc] or [N, ldc], every byte preset, so that a write outside C shows.
  const size_t es = elem_size(c.kind);
  const int64_t c_ld = (c.trans_c ? M : N) + c.pad;
  const int64_t c_rs = c.trans_c ? 1 : c_ld, c_cs = c.trans_c ? c_ld : 1;
  const size_t c_bytes = static_cast<size_t>((c.trans_c ? N : M) * c_ld) * es;
  std::vector<uint8_t> got(c_bytes + 64, 0xA5), want(c_bytes + 64, 0xA5);

  Saturation sat;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t av = a[m * a_rs + k * a_cs] - (c.a_zero ? az[m] : 0);
        const int64_t bv = b_at(k, n) - c.b_zero;
        acc += av * bv;
      }
      const int32_t acc32 = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc)));
      reference_store(acc32, m, c, bias, scale, fbias,
                      want.data() + static_cast<size_t>(m * c_rs + n * c_cs) * es, &sat);
    }

  const size_t pbytes = qpacked_a_bytes(isa, M, K);
  AlignedBuffer pa(pbytes);
  qpack_a(isa, M, K, a.data(), a_rs, a_cs, pa.p);
  QGemmOutput out;
  out.kind = c.kind;
  out.c = got.data();
  out.rs = c_rs;
  out.cs = c_cs;
  out.bias = c.bias ? bias.data() : nullptr;
  out.scale = scale.data();
  out.fbias = c.fbias ? fbias.data() : nullptr;
  out.out_zero = c.out_zero;
  out.relu = c.relu;
  if (c.row_table)
    qgemm_rows(isa, threads, M, N, K, pa.p, c.a_zero ? az.data() : nullptr, b.data(),
               row_off.data(), c.b_zero, out);
  else
    qgemm(isa, threads, M, N, K, pa.p, c.a_zero ? az.data() : nullptr, b.data(), b_rs, b_cs,
          c.b_zero, out);

  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      const int64_t e = static_cast<int64_t>(i / es);
      const int64_t outer = e / c_ld, inner = e % c_ld;
      const int64_t m = c.trans_c ? inner : outer, n = c.trans_c ? outer : inner;
      std::string gv, wv;
      const size_t at = i / es * es;
      if (es == 1) {
        gv = std::to_string(got[at]);
        wv = std::to_string(want[at]);
      } else if (c.kind == Kind::kFloat) {
        float g, w;
        std::memcpy(&g, &got[at], 4);
        std::memcpy(&w, &want[at], 4);
        gv = std::to_string(g);
        wv = std::to_string(w);
      } else {
        int32_t g, w;
        std::memcpy(&g, &got[at], 4);
        std::memcpy(&w, &want[at], 4);
        gv = std::to_string(g);
        wv = std::to_string(w);
      }
      ADD_FAILURE() << qgemm_variant(isa) << " M=" << M << " N=" << N << " K=" << K
                    << " kind=" << static_cast<int>(c.kind) << " trans_a=" << c.trans_a
                    << " trans_b=" << c.trans_b << " strided_b=" << c.strided_b
                    << " trans_c=" << c.trans_c << " a_zero=" << c.a_zero << " b_zero=" << c.b_zero
                    << " bias=" << c.bias << " fbias=" << c.fbias << " relu=" << c.relu
                    << " out_zero=" << c.out_zero << " seed=" << c.seed << ": byte " << i
                    << " (element " << e << ", "
                    << (m < M && n < N && inner < (c.trans_c ? M : N)
                            ? "C(" + std::to_string(m) + "," + std::to_string(n) + ")"
                            : std::string("outside C"))
                    << ") is " << gv << ", expected " << wv;
      break;
    }
  return sat;
}

// A variant to test: an ISA, and whether its dot-product instructions are switched off.
struct Variant {
  Isa isa;
  bool no_dot;
};

void PrintTo(const Variant& v, std::ostream* os) {
  *os << isa_name(v.isa) << (v.no_dot ? " without dot products" : "");
}

std::vector<Variant> test_variants() {
  std::vector<Variant> v;
  for (Isa isa : testing::test_isas()) {
    v.push_back({isa, false});
    if ((isa == Isa::kAvx512 && cpu_has_avx512_vnni()) ||
        (isa == Isa::kAvx2 && cpu_has_avx_vnni()) || (isa == Isa::kNeon && cpu_has_neon_dotprod()))
      v.push_back({isa, true});
  }
  return v;
}

std::string variant_name(const ::testing::TestParamInfo<Variant>& info) {
  return std::string(isa_name(info.param.isa)) + (info.param.no_dot ? "_nodot" : "");
}

class QGemmTest : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override { qgemm_detail::set_disable_dot_products(GetParam().no_dot); }
  void TearDown() override { qgemm_detail::set_disable_dot_products(false); }
  Isa isa() const { return GetParam().isa; }
  SerialThreads serial_;
};

TEST_P(QGemmTest, VariantName) {
  const std::string name = qgemm_variant(isa());
  switch (isa()) {
    case Isa::kScalar:
      EXPECT_EQ(name, "scalar");
      break;
    case Isa::kNeon:
      EXPECT_EQ(name, !GetParam().no_dot && cpu_has_neon_dotprod() ? "neon-dotprod" : "scalar");
      break;
    case Isa::kAvx2:
      EXPECT_EQ(name, !GetParam().no_dot && cpu_has_avx_vnni() ? "avx-vnni" : "avx2");
      break;
    case Isa::kAvx512:
      EXPECT_EQ(name, !GetParam().no_dot && cpu_has_avx512_vnni() ? "avx512-vnni" : "avx512bw");
      break;
  }
}

// Every combination of the edge sizes up to 100, each with its own mix of layouts, zero
// points and output stage.
TEST_P(QGemmTest, EdgeSizeCombinations) {
  const int64_t sizes[] = {1, 3, 4, 5, 15, 16, 17, 33, 64, 100};
  uint32_t i = 0;
  for (int64_t M : sizes)
    for (int64_t N : sizes)
      for (int64_t K : sizes) {
        ++i;
        QCase c;
        c.M = M, c.N = N, c.K = K, c.seed = i;
        std::mt19937 rng(i);
        auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
        const int b_layout = pick(4);
        c.trans_b = b_layout == 1;
        c.strided_b = b_layout == 2;
        c.trans_c = pick(3) == 0;
        c.trans_a = pick(4) == 0;
        c.pad = pick(2);
        c.kind = static_cast<Kind>(pick(4));
        c.a_zero = pick(3) != 0;
        c.b_zero = pick(3) != 0 ? pick(256) : 0;
        c.bias = pick(2);
        c.fbias = pick(2);
        c.relu = pick(2);
        c.out_zero =
            c.kind == Kind::kUint8 ? pick(256) : (c.kind == Kind::kInt8 ? pick(256) - 128 : 0);
        run_case(isa(), serial_, c);
        if (HasFailure()) return;
      }
}

// Every bottom edge of every register tile (MR <= 8) and the right edges of each vector
// count (NR <= 48), for each output kind and both layouts of C.
TEST_P(QGemmTest, EveryBottomAndRightEdge) {
  uint32_t seed = 500;
  for (int64_t M = 1; M <= 17; ++M)
    for (int64_t N : {1, 7, 8, 9, 16, 17, 24, 31, 32, 33, 47, 48, 49}) {
      QCase c;
      c.M = M, c.N = N, c.K = 9, c.seed = seed++;
      c.kind = static_cast<Kind>(seed % 4);
      c.trans_c = seed / 4 % 2;
      c.a_zero = true;
      c.b_zero = 5;
      c.bias = true;
      c.out_zero = c.kind == Kind::kUint8 ? 77 : 0;
      run_case(isa(), serial_, c);
      if (HasFailure()) return;
    }
}

TEST_P(QGemmTest, SizesUpTo577) {
  const int64_t shapes[][3] = {{577, 33, 577}, {64, 577, 100}, {17, 100, 577}, {100, 577, 17},
                               {577, 5, 64},   {3, 577, 33},   {33, 64, 577}};
  uint32_t seed = 100;
  for (const auto& s : shapes)
    for (int layout = 0; layout < 2; ++layout) {
      QCase c;
      c.M = s[0], c.N = s[1], c.K = s[2], c.seed = seed++;
      c.trans_b = layout == 1;
      c.trans_c = layout == 1;
      c.a_zero = true;
      c.b_zero = 131;
      c.kind = layout == 0 ? Kind::kUint8 : Kind::kInt32;
      c.bias = true;
      c.out_zero = 100;
      run_case(isa(), serial_, c);
    }
}

// Saturated operands and zero points at the ends of their ranges: the largest sums the
// int32 accumulation holds at this K, of both signs.
TEST_P(QGemmTest, ExtremeValues) {
  const int8_t a_vals[] = {-128, 127};
  const uint8_t b_vals[] = {0, 255};
  const int32_t az_vals[] = {0, -128, 127};
  const int32_t bz_vals[] = {0, 255, 128};
  uint32_t seed = 1000;
  for (int8_t av : a_vals)
    for (uint8_t bv : b_vals)
      for (int32_t az : az_vals)
        for (int32_t bz : bz_vals)
          for (int trans = 0; trans < 2; ++trans) {
            QCase c;
            c.M = 17, c.N = 49, c.K = 577, c.seed = seed++;
            c.a_const = av, c.b_const = bv;
            c.a_zero = az != 0, c.az_const = az, c.b_zero = bz;
            c.trans_b = trans, c.trans_c = trans;
            run_case(isa(), serial_, c);
            c.kind = Kind::kFloat;
            c.bias = true;
            run_case(isa(), serial_, c);
          }
  // Random operands with extreme zero points.
  for (int32_t az : az_vals)
    for (int32_t bz : bz_vals) {
      QCase c;
      c.M = 33, c.N = 100, c.K = 100, c.seed = seed++;
      c.a_zero = true, c.az_const = az, c.b_zero = bz;
      run_case(isa(), serial_, c);
    }
}

// The sum wraps modulo 2^32 (qgemm.hpp), like ONNX Runtime's int32 accumulation.
TEST_P(QGemmTest, AccumulationWrapsModulo2To32) {
  QCase c;
  c.M = 9, c.N = 17, c.K = 70001;
  c.a_const = -128, c.b_const = 255, c.a_zero = true, c.az_const = 127, c.b_zero = 0;
  run_case(isa(), serial_, c);  // -255 * 255 * 70001 = -4.55e9
  c.trans_b = true;
  c.b_zero = 1;
  c.az_const = -128;
  c.a_const = 127;
  run_case(isa(), serial_, c);
}

// Each output kind with and without bias, fbias and relu, output zero points at the ends
// of the range (and within), with saturation reached at both ends where it can be.
TEST_P(QGemmTest, EveryOutputStage) {
  uint32_t seed = 2000;
  for (Kind kind : {Kind::kInt32, Kind::kFloat, Kind::kUint8, Kind::kInt8}) {
    std::vector<int32_t> zeros = {0};
    if (kind == Kind::kUint8) zeros = {0, 255, 128};
    if (kind == Kind::kInt8) zeros = {-128, 127, 0};
    for (int32_t oz : zeros)
      for (int flags = 0; flags < 8; ++flags)
        for (int trans = 0; trans < 2; ++trans) {
          QCase c;
          c.M = 33, c.N = 50, c.K = 65, c.seed = seed++;
          c.kind = kind;
          c.out_zero = oz;
          c.bias = flags & 1;
          c.fbias = flags & 2;
          c.relu = flags & 4;
          c.a_zero = true;
          c.b_zero = 7;
          c.scale_mul = 3.0f;
          c.trans_c = trans;
          const Saturation sat = run_case(isa(), serial_, c);
          if (kind == Kind::kUint8 || kind == Kind::kInt8) {
            const int32_t lo = kind == Kind::kUint8 ? 0 : -128;
            const int32_t hi = kind == Kind::kUint8 ? 255 : 127;
            if (oz != hi) {
              EXPECT_GT(sat.high, 0) << "oz " << oz;
            }
            if (oz != lo) {
              EXPECT_GT(sat.low, 0) << "oz " << oz;
            }
          }
        }
  }
}

// Scales of 0.5 and 0.25 make exact halves: nearbyint must round them to even.
TEST_P(QGemmTest, RoundingTiesToEven) {
  for (float s : {0.5f, 0.25f, 1.5f})
    for (Kind kind : {Kind::kUint8, Kind::kInt8}) {
      QCase c;
      c.M = 16, c.N = 48, c.K = 1;
      c.kind = kind;
      c.scale_const = s;
      c.a_zero = true, c.az_const = 0, c.b_zero = 128;
      c.out_zero = kind == Kind::kUint8 ? 128 : 0;
      c.seed = 7;
      run_case(isa(), serial_, c);
    }
}

TEST_P(QGemmTest, TransposedAndStridedOperands) {
  const int64_t shapes[][3] = {{7, 17, 31},   {33, 1, 64}, {1, 33, 17},
                               {31, 40, 300}, {64, 64, 7}, {9, 100, 130}};
  uint32_t seed = 3000;
  for (const auto& s : shapes)
    for (int layout = 0; layout < 16; ++layout) {
      QCase c;
      c.M = s[0], c.N = s[1], c.K = s[2], c.seed = seed++;
      c.trans_a = layout & 1;
      c.trans_b = (layout & 6) == 2;
      c.strided_b = (layout & 6) == 4;
      c.trans_c = layout & 8;
      c.pad = 3;
      c.a_zero = true;
      c.b_zero = 200;
      c.kind = static_cast<Kind>(layout % 4);
      c.bias = true;
      run_case(isa(), serial_, c);
    }
}

TEST_P(QGemmTest, RowsFromAnOffsetTable) {
  // Shuffled and shifted rows (qgemm_rows, the in-place convolution's B), over the
  // regular tiles, the narrow tile, edges, zero points and the 8-bit output stage.
  uint32_t seed = 900;
  for (auto s : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {8, 48, 4}, {17, 49, 9}, {33, 100, 65}, {64, 3, 577}, {9, 200, 3}}) {
    for (Kind kind : {Kind::kInt32, Kind::kUint8}) {
      QCase c;
      c.M = s[0], c.N = s[1], c.K = s[2], c.seed = seed++;
      c.row_table = true;
      c.pad = 3;
      c.a_zero = true;
      c.b_zero = 17;
      c.kind = kind;
      c.bias = kind != Kind::kInt32;
      c.out_zero = 9;
      run_case(isa(), serial_, c);
    }
  }
  StdThreads four(4);
  QCase big;
  big.M = 40, big.N = 1000, big.K = 100, big.row_table = true, big.kind = Kind::kUint8;
  run_case(isa(), four, big);
}

TEST_P(QGemmTest, ThreadCounts) {
  // All above qgemm's threshold for threads (2^21 multiply-adds); the last two take the
  // narrow tile where the variant has one.
  const int64_t shapes[][3] = {{100, 577, 64}, {577, 100, 65}, {64, 3136, 27},
                               {256, 49, 576}, {2000, 3, 600}, {577, 1, 4096}};
  uint32_t seed = 4000;
  for (int workers : {2, 3, 4}) {
    StdThreads threads(workers);
    for (const auto& s : shapes) {
      QCase c;
      c.M = s[0], c.N = s[1], c.K = s[2], c.seed = seed++;
      c.a_zero = true;
      c.b_zero = 3;
      c.kind = static_cast<Kind>(seed % 4);
      c.bias = true;
      c.trans_b = workers == 3;
      c.trans_c = workers == 4;
      run_case(isa(), threads, c);
    }
  }
}

TEST_P(QGemmTest, KZeroAndEmptyDims) {
  for (Kind kind : {Kind::kInt32, Kind::kFloat, Kind::kUint8, Kind::kInt8}) {
    for (int64_t N : {1, 17}) {
      QCase c;
      c.M = 5, c.N = N, c.K = 0;
      c.kind = kind;
      c.bias = true;
      c.fbias = true;
      c.out_zero = kind == Kind::kUint8 ? 3 : 0;
      c.a_zero = true, c.b_zero = 9;
      run_case(isa(), serial_, c);
    }
  }
  // M == 0 or N == 0: nothing is written (run_case checks every byte of C).
  for (int64_t mn : {0, 1}) {
    QCase c;
    c.M = mn, c.N = 1 - mn, c.K = 5;
    run_case(isa(), serial_, c);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, QGemmTest, ::testing::ValuesIn(test_variants()), variant_name);

}  // namespace
}  // namespace infer::cpu::simd
