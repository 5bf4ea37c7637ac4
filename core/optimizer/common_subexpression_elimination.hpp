// common_subexpression_elimination: merges nodes that compute the same thing, and
// identical small constants.
#pragma once

#include <cstddef>
#include <string>

#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer {

// First, constants of the same dtype, dims and bytes (up to kMaxConstantBytes each, not
// quantized, not graph inputs) are merged: node inputs reading a duplicate read the first
// such constant instead (exporters repeat scalar constants a lot, and the node merge
// below compares inputs by identity). Then, in topological order, a node with the same
// domain, op_type, inputs (the same values in the same slots) and attributes (the same
// names, types and exact values, in any order) as an earlier node is removed, its
// outputs replaced by the earlier node's; a graph-output or captured output name moves
// onto the earlier node's output (bypass semantics), and the node stays when that is
// impossible (both outputs must keep their names, or the earlier node omits an output the
// later one has). Never merged: nodes with subgraphs, random operators, Dropout, nodes
// without inputs, and operators outside the ONNX and ai.infer domains (a custom op may
// be nondeterministic). One rewrite per merged node or redirected constant use group.
class CommonSubexpressionElimination final : public Pass {
 public:
  static constexpr const char* kName = "common_subexpression_elimination";
  static constexpr size_t kMaxConstantBytes = 4096;
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
  // A merge that renames an earlier node's output can hide a duplicate among nodes
  // already visited; a further application finds it.
  int max_iterations() const override { return 4; }
};

}  // namespace infer::optimizer
