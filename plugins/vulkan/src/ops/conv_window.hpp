// Window geometry shared by the Vulkan Conv and pooling kernels (conv_ops.cpp,
// pool_ops.cpp): the attributes kernel_shape, strides, dilations, pads, auto_pad and
// ceil_mode, checked on a node view at partition time and resolved to concrete 2-D
// windows at plan time. 1-D windows are 2-D windows with a height of one, which is how
// the shaders run them. The output-size rules are the CPU plugin's (and ONNX Runtime's),
// so both backends agree on every shape.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {

// A 2-D window over concrete input sizes.
struct Window2 {
  int64_t in_h = 1, in_w = 1;
  int64_t k_h = 1, k_w = 1;
  int64_t s_h = 1, s_w = 1;
  int64_t d_h = 1, d_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_h = 1, out_w = 1;
};

// Partition-time check of the window attributes for `spatial_rank` spatial dims (-1 when
// the input rank is unknown: lengths are then only checked against each other). False
// with *reason set for values the kernels do not take.
inline bool check_window_view(const infer_node_view& node, int64_t spatial_rank,
                              std::string* reason) {
  const std::string auto_pad = sdk::attr_string(&node, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID") {
    *reason = "unsupported attribute auto_pad=" + auto_pad;
    return false;
  }
  struct Field {
    const char* name;
    size_t per_dim;  // values per spatial dim
    int64_t min;
  };
  const Field fields[] = {
      {"kernel_shape", 1, 1}, {"strides", 1, 1}, {"dilations", 1, 1}, {"pads", 2, 0}};
  for (const Field& f : fields) {
    const std::span<const int64_t> v = sdk::attr_ints(&node, f.name);
    if (v.empty()) continue;
    if (spatial_rank >= 0 && v.size() != f.per_dim * static_cast<size_t>(spatial_rank)) {
      *reason = std::string(f.name) + " has " + std::to_string(v.size()) + " values, expected " +
                std::to_string(f.per_dim * static_cast<size_t>(spatial_rank));
      return false;
    }
    for (int64_t x : v) {
      if (x < f.min) {
        *reason = std::string(f.name) + " must be >= " + std::to_string(f.min) + ", got " +
                  std::to_string(x);
        return false;
      }
    }
  }
  return true;
}

// One window axis: output size and resolved pads, as the CPU plugin's plan_window.
inline bool window_axis(const std::string& auto_pad, bool ceil_mode, int64_t in, int64_t k,
                        int64_t s, int64_t d, int64_t* pb, int64_t* pe, int64_t* out) {
  const int64_t span = d * (k - 1) + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    *out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (*out - 1) * s + span - in);
    *pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    *pe = total - *pb;
  } else if (auto_pad == "VALID") {
    *pb = *pe = 0;
    *out = in >= span ? (in - span) / s + 1 : 0;
  } else {
    const int64_t padded = in + *pb + *pe;
    if (padded < span) {
      *out = 0;
    } else if (ceil_mode) {
      *out = (padded - span + s - 1) / s + 1;
      // A last window that would start in the end padding is dropped.
      if ((*out - 1) * s >= in + *pb) --*out;
    } else {
      *out = (padded - span) / s + 1;
    }
  }
  return *out > 0;
}

// Plan-time geometry for input spatial sizes `in` (1 or 2 dims) and kernel sizes
// `kernel` (same count). False with *error set (prefixed by the node) on bad attributes
// or a window larger than the padded input.
inline bool plan_window2(const NodeInfo& node, std::span<const int64_t> in,
                         std::span<const int64_t> kernel, bool ceil_mode, Window2* w,
                         std::string* error) {
  const size_t r = in.size();
  if (r < 1 || r > 2 || kernel.size() != r) {
    *error = node.describe() + ": expected 1 or 2 spatial dims, got input " + dims_text(in) +
             " and kernel " + dims_text(kernel);
    return false;
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const std::vector<int64_t> strides = node.attr_ints("strides", {});
  const std::vector<int64_t> dilations = node.attr_ints("dilations", {});
  const std::vector<int64_t> pads = node.attr_ints("pads", {});
  auto bad_len = [&](const std::vector<int64_t>& v, size_t expect, const char* name) {
    if (v.empty() || v.size() == expect) return false;
    *error = node.describe() + ": " + name + " has " + std::to_string(v.size()) +
             " values, expected " + std::to_string(expect);
    return true;
  };
  if (bad_len(strides, r, "strides") || bad_len(dilations, r, "dilations") ||
      bad_len(pads, 2 * r, "pads"))
    return false;
  int64_t res[2][5];  // per axis: in, k, s, d, out; pads below
  int64_t pb[2] = {0, 0}, pe[2] = {0, 0};
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = strides.empty() ? 1 : strides[i];
    const int64_t d = dilations.empty() ? 1 : dilations[i];
    if (s < 1 || d < 1 || kernel[i] < 1 || in[i] < 1) {
      *error = node.describe() + ": strides, dilations, kernel and input sizes must be >= 1";
      return false;
    }
    pb[i] = pads.empty() ? 0 : pads[i];
    pe[i] = pads.empty() ? 0 : pads[i + r];
    if (pb[i] < 0 || pe[i] < 0) {
      *error = node.describe() + ": pads must be >= 0, got " + dims_text(pads);
      return false;
    }
    int64_t out = 0;
    if (!window_axis(auto_pad, ceil_mode, in[i], kernel[i], s, d, &pb[i], &pe[i], &out)) {
      *error = node.describe() + ": spatial dim " + std::to_string(i) + " of size " +
               std::to_string(in[i]) + " is smaller than the window (kernel " +
               std::to_string(kernel[i]) + ", dilation " + std::to_string(d) + ", pads " +
               std::to_string(pb[i]) + "+" + std::to_string(pe[i]) + ")";
      return false;
    }
    res[i][0] = in[i];
    res[i][1] = kernel[i];
    res[i][2] = s;
    res[i][3] = d;
    res[i][4] = out;
  }
  // A 1-D window is the width axis of a 2-D one of height 1.
  const size_t hw = r == 2 ? 0 : 2;  // index of the height axis in res, or 2 for "none"
  const size_t ww = r - 1;
  *w = Window2{};
  if (hw == 0) {
    w->in_h = res[0][0];
    w->k_h = res[0][1];
    w->s_h = res[0][2];
    w->d_h = res[0][3];
    w->out_h = res[0][4];
    w->pad_top = pb[0];
    w->pad_bottom = pe[0];
  }
  w->in_w = res[ww][0];
  w->k_w = res[ww][1];
  w->s_w = res[ww][2];
  w->d_w = res[ww][3];
  w->out_w = res[ww][4];
  w->pad_left = pb[ww];
  w->pad_right = pe[ww];
  return true;
}

// Whether every value fits the shaders' 32-bit (signed, for positions) arithmetic.
inline bool fits_i32(std::initializer_list<int64_t> values) {
  for (int64_t v : values)
    if (v < 0 || v > 0x7fffffff) return false;
  return true;
}

}  // namespace infer::vk
