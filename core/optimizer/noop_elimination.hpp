// noop_elimination: removes nodes that forward their input unchanged.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "optimizer/pass.hpp"
#include "optimizer/rewrite.hpp"

namespace infer::optimizer {

// Removes, keeping graph-output and captured names (a node is kept when that is
// impossible, e.g. a graph input forwarded to a graph output):
// - Identity;
// - Dropout whose mask output is unused, when it runs in inference mode: always before
//   opset 12 (is_test and ratio do not matter once training is off), and from opset 12
//   when training_mode is omitted or a constant false;
// - Cast to the input's own dtype;
// - Reshape and Expand whose output shape is statically the input's (same_shape: every
//   dim the same known size or the same symbol);
// - Transpose with the identity permutation;
// - Pad whose pads are all zero (constant input, or attribute before opset 11), any mode;
// - Slice that provably takes everything: constant starts/ends/axes/steps (attributes
//   before opset 10), on each sliced axis step 1, a start that clamps to 0 and an end
//   that clamps to the dim (known, or INT64_MAX for a dim that is not).
// One rewrite per removed node.
class NoopElimination final : public Pass {
 public:
  static constexpr const char* kName = "noop_elimination";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
