// The scalar reference of the integer GEMM kernels: plain loops over the packed layout of
// qgemm_kernels.hpp (4 x 16 tiles), the portable B packer, and the output stage of
// qgemm_kernels.hpp element by element. Every SIMD variant is tested bit for bit against
// it (through the tests' own reference).
#include "qgemm_kernels.hpp"

namespace infer::cpu::simd::qgemm_detail {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 16;

void tile(const QTileJob& t) {
  // Unsigned: the sum wraps modulo 2^32 (qgemm.hpp) without undefined behavior.
  uint32_t acc[kMr * kNr] = {};
  const int8_t* a = t.a;
  const uint8_t* b = t.b;
  for (int64_t g = 0; g < t.kg; ++g, a += kMr * 4, b += kNr * 4)
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j) {
        int32_t s = 0;
        for (int q = 0; q < 4; ++q) s += int32_t{a[r * 4 + q]} * int32_t{b[j * 4 + q]};
        acc[r * kNr + j] += static_cast<uint32_t>(s);
      }
  char* c = static_cast<char*>(t.c);
  const size_t elem = t.st->elem;
  for (int r = 0; r < t.rows; ++r)
    for (int j = 0; j < t.cols; ++j) {
      int32_t v = wrap_add(static_cast<int32_t>(acc[r * kNr + j]), t.row_add[r]);
      if (t.neg_az != nullptr) v = wrap_add(v, wrap_mul(t.neg_az[r], t.col_sum[j]));
      store_one(v, r, t,
                c + static_cast<ptrdiff_t>((r * t.rs + j * t.cs) * static_cast<int64_t>(elem)));
    }
}

// dst(r, j) = src[r * ldsrc + j] for r < rows, j < cols; dst(r, j) is dst[r * rs + j * cs].
template <typename T>
void copy_strided(const T* src, int64_t ldsrc, int rows, int cols, T* dst, int64_t rs, int64_t cs) {
  if (rs == 1) {
    // C transposed (Y^T of a MatMul): each column's rows are contiguous.
    for (int j = 0; j < cols; ++j)
      for (int r = 0; r < rows; ++r) dst[r + j * cs] = src[r * ldsrc + j];
  } else {
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < cols; ++j) dst[r * rs + j * cs] = src[r * ldsrc + j];
  }
}

}  // namespace

namespace {

// B(k, n) = *at(k, n), packed as qgemm's B panel (nr columns, 4-byte K groups).
template <typename At>
void pack_panel(At at, int64_t K, int cols, int nr, uint8_t* dst, int32_t* col_sum) {
  const int64_t groups = (K + 3) / 4;
  if (col_sum != nullptr)
    for (int j = 0; j < nr; ++j) col_sum[j] = 0;
  for (int64_t g = 0; g < groups; ++g) {
    uint8_t* d = dst + g * nr * 4;
    const int kq = static_cast<int>(K - 4 * g < 4 ? K - 4 * g : 4);
    for (int j = 0; j < nr; ++j) {
      int32_t s = 0;
      for (int q = 0; q < 4; ++q) {
        const uint8_t v = j < cols && q < kq ? *at(4 * g + q, j) : uint8_t{0};
        d[j * 4 + q] = v;
        s += v;
      }
      if (col_sum != nullptr) col_sum[j] += s;
    }
  }
}

}  // namespace

void pack_b_generic(const uint8_t* b, int64_t rs, int64_t cs, int64_t K, int cols, int nr,
                    uint8_t* dst, int32_t* col_sum) {
  pack_panel([=](int64_t k, int j) { return b + k * rs + j * cs; }, K, cols, nr, dst, col_sum);
}

void pack_b_rows_generic(const uint8_t* b, const int64_t* row_off, int64_t K, int cols, int nr,
                         uint8_t* dst, int32_t* col_sum) {
  pack_panel([=](int64_t k, int j) { return b + row_off[k] + j; }, K, cols, nr, dst, col_sum);
}

void store_strided(const void* buf, int64_t ldbuf, int rows, int cols, const QTileJob& t) {
  if (t.st->elem == 1)
    copy_strided(static_cast<const uint8_t*>(buf), ldbuf, rows, cols, static_cast<uint8_t*>(t.c),
                 t.rs, t.cs);
  else
    copy_strided(static_cast<const uint32_t*>(buf), ldbuf, rows, cols, static_cast<uint32_t*>(t.c),
                 t.rs, t.cs);
}

const QKernels& qkernels_scalar() {
  static const QKernels k{Variant::kScalar, "scalar", kMr, kNr, tile, pack_b_generic};
  return k;
}

}  // namespace infer::cpu::simd::qgemm_detail
