// reshape_transpose_merging: collapses back-to-back Reshapes and back-to-back Transposes.
#pragma once

#include <string>

#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer {

// - Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when the inner output has a single use
//   and s2 is a constant. A 0 in s2 copies a dim of the INTERMEDIATE tensor (allowzero
//   absent or 0), so with 0s the merge needs every such intermediate dim provably equal
//   to x's dim at that position; with allowzero=1 only s2 without 0s is merged (then
//   allowzero changes nothing). The outer node keeps its name and attributes.
// - Transpose(Transpose(x, p1), p2) -> Transpose(x, p) with p[i] = p1[p2[i]] when the
//   inner output has a single use; an identity result is removed at once (keeping the
//   outer output's name when it is a graph output, or else left as an identity
//   Transpose for noop_elimination).
// Chains collapse in one application (nodes are visited in topological order). The
// absorbed inner node is removed. One rewrite per merged pair.
class ReshapeTransposeMerging final : public Pass {
 public:
  static constexpr const char* kName = "reshape_transpose_merging";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
