// The broadcasting rule of binary ops before opset 7 (Add, Sub, Mul, Div, Pow, And, Or,
// Xor, Equal, Less, Greater): shapes must be equal unless the `broadcast` attribute is
// 1, and then B (a contiguous piece of A's shape) is aligned with A's trailing dims, or
// with the dims starting at `axis` when that attribute is set. The output has A's shape.
// From opset 7 the ops follow numpy broadcasting and these attributes are gone.
#pragma once

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "math_common.hpp"

namespace infer::cpu::kernels::math {

class LegacyBroadcast {
 public:
  static LegacyBroadcast from_node(const infer_node_view& n) {
    LegacyBroadcast l;
    l.legacy_ = n.opset < 7;
    l.broadcast_ = attr_i(n, "broadcast", 0) != 0;
    l.has_axis_ = has_attr(n, "axis");
    l.axis_ = attr_i(n, "axis", 0);
    return l;
  }

  // Rewrites B's dims (appending 1s when `axis` leaves trailing dims of A) and imposes
  // A's shape on the output. A no-op from opset 7.
  Status apply(const Tensor& A, Tensor* B, OutSpec* out) const {
    if (!legacy_) return Status::ok();
    out->dims = &A.dims;
    if (!broadcast_) {
      if (A.dims != B->dims)
        return invalid("input shapes ", dims_str(A.dims), " and ", dims_str(B->dims),
                       " differ and the broadcast attribute is 0");
      return Status::ok();
    }
    if (!has_axis_) return Status::ok();  // trailing alignment is numpy's rule
    const auto rank_a = static_cast<int64_t>(A.rank());
    const auto rank_b = static_cast<int64_t>(B->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank_a : axis_;
    if (axis < 0 || axis + rank_b > rank_a)
      return invalid("broadcast axis ", axis_, " does not fit B of shape ", dims_str(B->dims),
                     " into A of shape ", dims_str(A.dims));
    B->dims.resize(static_cast<size_t>(rank_a - axis), 1);
    return Status::ok();
  }

 private:
  bool legacy_ = false;
  bool broadcast_ = false;
  bool has_axis_ = false;
  int64_t axis_ = 0;
};

}  // namespace infer::cpu::kernels::math
