// dead_code_elimination: removes nodes none of whose outputs can be observed.
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// A node is dead when none of its outputs is a graph output, read by a live node, or
// captured (by name) by a subgraph of a live node. Liveness is propagated backwards
// from the graph outputs in one sweep over the topological order, so a whole dead chain
// goes in a single application. Subgraph bodies (If/Loop/Scan) are cleaned the same way,
// with their own outputs as roots, before the enclosing graph. Graph inputs are never
// removed (they are the model's signature); constants nothing reads any more (no node,
// capture, graph output or quantization descriptor) keep their value entry but release
// their data (e.g. the weights conv_bn_folding replaced).
class DeadCodeElimination final : public Pass {
 public:
  static constexpr const char* kName = "dead_code_elimination";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
