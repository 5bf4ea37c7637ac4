// 2-D max and average pooling over float32 NCHW planes, vectorized along the output
// width: kernel, strides, dilations, begin/end pads (auto_pad and ceil_mode already
// resolved into pads and output sizes by the caller) and count_include_pad. The plugin's
// generic pooling kernel keeps what this does not cover (MaxPool's Indices output, other
// dtypes, 1-D and 3-D windows, LpPool). Parallel over (plane, output row).
#pragma once

#include <cstddef>
#include <cstdint>

#include "isa.hpp"
#include "threads.hpp"

namespace infer::cpu::simd {

enum class PoolKind { kMax, kAverage };

struct Pool2dShape {
  PoolKind kind = PoolKind::kMax;
  int64_t in_h = 0, in_w = 0;    // input plane
  int64_t out_h = 0, out_w = 0;  // output plane (ceil_mode already applied)
  int64_t k_h = 1, k_w = 1;      // kernel
  int64_t s_h = 1, s_w = 1;      // strides
  int64_t d_h = 1, d_w = 1;      // dilations
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_include_pad = false;  // average only
};

// Whether pool2d runs `s`: every size non-negative, kernel/strides/dilations >= 1 and
// pads >= 0 (what the plugin's attribute checks already guarantee).
bool pool2d_supports(const Pool2dShape& s);

// For each of `planes` planes of in_h x in_w floats at x, writes out_h x out_w floats at y.
//
// Max: the padding never wins, as if it held -inf. The max is seeded with the window's
// first tap inside the plane (row-major tap order) and a later tap v replaces it only
// when v > best, so a NaN is kept only when it is that first tap (the generic kernel's
// rule, bit for bit); a window with no tap inside the plane gives the lowest float.
//
// Average: the float sum of the taps inside the plane (kernel row by row), divided by
// the number of those taps, or with count_include_pad by the number of taps inside the
// padded plane [-pad_begin, in + pad_end) (a ceil_mode window hanging past the end
// padding does not count the part beyond it). A window with nothing to count gives NaN.
//
// Every ISA variant gives the same bits as the scalar one (the same float operations in
// the same order, lane by lane).
void pool2d(Isa isa, const Threads& threads, const Pool2dShape& s, const float* x, float* y,
            size_t planes);

}  // namespace infer::cpu::simd
