// Iteration over the output of an elementwise op with numpy broadcasting. Dimensions
// are first collapsed (dropping size-1 output dims and merging neighbours that every
// input either broadcasts or reads fully), so that the innermost loop is as long as
// possible; the output index space is then walked as "segments" along the innermost
// dim, where each input advances by 0 (broadcast) or 1 element per step.
#pragma once

#include <algorithm>
#include <vector>

#include "../status.hpp"
#include "../tensor.hpp"

namespace infer::cpu {

struct BroadcastPlan {
  Dims out_dims;                    // the broadcast output shape
  Dims shape;                       // collapsed shape, rank >= 1
  std::vector<Dims> strides;        // per input, per collapsed dim: element stride (0: broadcast)
  std::vector<int64_t> inner_step;  // per input: stride along the innermost collapsed dim
  int64_t total = 0;                // number of output elements
  int64_t inner() const { return shape.back(); }
};

// Fails with "incompatible broadcast shapes ..." when the shapes do not broadcast.
Result<BroadcastPlan> make_broadcast_plan(const std::vector<const Dims*>& inputs);
// Same, with the output shape imposed (each input must broadcast to it).
Result<BroadcastPlan> make_broadcast_plan_to(const std::vector<const Dims*>& inputs,
                                             const Dims& out_dims);

// Calls f(out_offset, in_offsets, len) for each innermost segment of the output range
// [begin, end); input k's elements for the segment start at in_offsets[k] and step by
// plan.inner_step[k].
template <typename F>
void for_each_segment(const BroadcastPlan& p, int64_t begin, int64_t end, F&& f) {
  const size_t n_in = p.strides.size();
  const size_t rank = p.shape.size();
  const int64_t inner = p.inner();
  int64_t offs[8];
  int64_t pos = begin;
  while (pos < end) {
    int64_t row = pos / inner;
    int64_t col = pos % inner;
    for (size_t k = 0; k < n_in; ++k) offs[k] = col * p.inner_step[k];
    int64_t r = row;
    for (size_t d = rank - 1; d-- > 0;) {
      int64_t idx = r % p.shape[d];
      r /= p.shape[d];
      for (size_t k = 0; k < n_in; ++k) offs[k] += idx * p.strides[k][d];
    }
    int64_t len = std::min(inner - col, end - pos);
    f(pos, static_cast<const int64_t*>(offs), len);
    pos += len;
  }
}

}  // namespace infer::cpu
