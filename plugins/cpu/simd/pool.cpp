// pool2d: splits each output row into border columns (a tap may fall in the horizontal
// padding: the scalar loop below, shared by every ISA) and one run of interior columns
// (every tap inside the input row: the per-ISA row kernel, or the scalar reference of
// pool_kernels.hpp). Rows in the vertical padding are simply left out of the row list.
#include "pool.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "pool_kernels.hpp"

namespace infer::cpu::simd {
namespace {

using RowFn = void (*)(const PoolRow&);

void pool_max_row_scalar(const PoolRow& r) { pool_max_row_ref(r, 0); }
void pool_avg_row_scalar(const PoolRow& r) { pool_avg_row_ref(r, 0); }

RowFn row_kernel(Isa isa, PoolKind kind) {
  const bool max = kind == PoolKind::kMax;
  if (isa_supported(isa)) {
    switch (isa) {
#if defined(__x86_64__)
      case Isa::kAvx2:
        return max ? pool_max_row_avx2 : pool_avg_row_avx2;
      case Isa::kAvx512:
        return max ? pool_max_row_avx512 : pool_avg_row_avx512;
#endif
#if defined(__aarch64__)
      case Isa::kNeon:
        return max ? pool_max_row_neon : pool_avg_row_neon;
#endif
      default:
        break;
    }
  }
  return max ? pool_max_row_scalar : pool_avg_row_scalar;
}

// Output column `ow` of a row whose window rows inside the plane are rows[0, nrows):
// its taps inside the row are the run [klo, khi) (tap columns grow with k). `row_count`
// is the vertical part of the average's count.
float border_column(const Pool2dShape& s, const float* const* rows, int64_t nrows,
                    int64_t row_count, int64_t ow) {
  const int64_t start = ow * s.s_w - s.pad_left;
  int64_t klo = 0;
  while (klo < s.k_w && start + klo * s.d_w < 0) ++klo;
  int64_t khi = klo;
  while (khi < s.k_w && start + khi * s.d_w < s.in_w) ++khi;
  if (s.kind == PoolKind::kMax) {
    if (nrows == 0 || klo == khi) return std::numeric_limits<float>::lowest();
    // Seeded with the first tap inside the plane, as the row kernels are.
    float best = rows[0][start + klo * s.d_w];
    for (int64_t i = 0; i < nrows; ++i)
      for (int64_t k = (i == 0 ? klo + 1 : klo); k < khi; ++k) {
        const float v = rows[i][start + k * s.d_w];
        best = v > best ? v : best;
      }
    return best;
  }
  int64_t cols = khi - klo;
  if (s.count_include_pad) {
    cols = 0;
    for (int64_t k = 0; k < s.k_w; ++k) {
      const int64_t c = start + k * s.d_w;
      cols += (c >= -s.pad_left && c < s.in_w + s.pad_right) ? 1 : 0;
    }
  }
  float sum = 0;
  for (int64_t i = 0; i < nrows; ++i)
    for (int64_t k = klo; k < khi; ++k) sum += rows[i][start + k * s.d_w];
  // count == 0 (nothing to average) gives NaN, as the generic kernel's 0 / 0 does.
  return sum / static_cast<float>(row_count * cols);
}

}  // namespace

bool pool2d_supports(const Pool2dShape& s) {
  return s.in_h >= 0 && s.in_w >= 0 && s.out_h >= 0 && s.out_w >= 0 && s.k_h >= 1 && s.k_w >= 1 &&
         s.s_h >= 1 && s.s_w >= 1 && s.d_h >= 1 && s.d_w >= 1 && s.pad_top >= 0 && s.pad_left >= 0 &&
         s.pad_bottom >= 0 && s.pad_right >= 0;
}

void pool2d(Isa isa, const Threads& threads, const Pool2dShape& s, const float* x, float* y,
            size_t planes) {
  const RowFn row_fn = row_kernel(isa, s.kind);
  const int64_t in_n = s.in_h * s.in_w, out_n = s.out_h * s.out_w;
  // Interior output columns [c0, c1): every tap's column lies in [0, in_w). A window's
  // columns only move right as the output column grows, so they form one run.
  int64_t c0 = 0;
  while (c0 < s.out_w && c0 * s.s_w - s.pad_left < 0) ++c0;
  int64_t c1 = c0;
  while (c1 < s.out_w && c1 * s.s_w - s.pad_left + (s.k_w - 1) * s.d_w < s.in_w) ++c1;
  // Parallel over (plane, output row), in ranges of at least ~32k taps.
  const size_t rows_total = planes * static_cast<size_t>(s.out_h);
  const int64_t row_work = std::max<int64_t>(1, s.out_w * s.k_h * s.k_w);
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, 32768 / row_work));
  threads.run(rows_total, grain, [&](size_t b, size_t e) {
    constexpr int64_t kStackRows = 16;
    const float* stack_rows[kStackRows];
    std::vector<const float*> heap_rows;
    const float** rows = stack_rows;
    if (s.k_h > kStackRows) {
      heap_rows.resize(static_cast<size_t>(s.k_h));
      rows = heap_rows.data();
    }
    for (size_t t = b; t < e; ++t) {
      const int64_t p = static_cast<int64_t>(t) / s.out_h, oh = static_cast<int64_t>(t) % s.out_h;
      const float* xp = x + p * in_n;
      float* yr = y + p * out_n + oh * s.out_w;
      int64_t nrows = 0, padded_rows = 0;
      for (int64_t k = 0; k < s.k_h; ++k) {
        const int64_t ih = oh * s.s_h - s.pad_top + k * s.d_h;
        if (ih >= 0 && ih < s.in_h) rows[nrows++] = xp + ih * s.in_w;
        padded_rows += (ih >= -s.pad_top && ih < s.in_h + s.pad_bottom) ? 1 : 0;
      }
      const int64_t row_count = s.count_include_pad ? padded_rows : nrows;
      // A row with no input row in its window has no interior: all of it is border.
      const int64_t i0 = nrows > 0 ? c0 : s.out_w, i1 = nrows > 0 ? c1 : s.out_w;
      for (int64_t ow = 0; ow < i0; ++ow) yr[ow] = border_column(s, rows, nrows, row_count, ow);
      if (i1 > i0) {
        PoolRow r;
        r.rows = rows;
        r.nrows = nrows;
        r.start = i0 * s.s_w - s.pad_left;
        r.kw = s.k_w;
        r.sw = s.s_w;
        r.dw = s.d_w;
        r.avail = s.in_w - r.start;
        r.divisor = static_cast<float>(row_count * s.k_w);
        r.out = yr + i0;
        r.count = i1 - i0;
        row_fn(r);
      }
      for (int64_t ow = std::max(i0, i1); ow < s.out_w; ++ow)
        yr[ow] = border_column(s, rows, nrows, row_count, ow);
    }
  });
}

}  // namespace infer::cpu::simd
