// constant_folding: evaluates nodes whose inputs are all constants and replaces their
// outputs by constants.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer {

// True for operators whose outputs differ between runs with the same inputs (the ONNX
// random generators), which no pass may evaluate ahead of time or deduplicate.
bool is_random_op(const ir::Node& node);

// The truth of a one-element constant: bool (ONNX's type for flags such as Dropout's
// training_mode, which scalar_constant() does not read) or any number (non-zero is
// true). nullopt when `v` is not a one-element constant.
std::optional<bool> bool_constant(const ir::Graph& graph, ir::ValueId v);

// Every node whose non-omitted inputs are all constants (and that has at least one) is
// run through PassContext::evaluator, and its outputs become constants; the node goes.
// Nodes are visited in topological order and a folded output counts as a constant for
// the nodes after it, so a whole constant chain folds in one application.
//
// Left alone: everything when there is no evaluator; nodes with subgraphs; random
// operators; Dropout with a constant true training_mode; nodes with an output that is a
// graph output or read by a subgraph (the runtime serves outputs computed by nodes, not
// constants); nodes whose results would take more than max(64 KiB, 4 x their constant
// inputs' bytes), so that folding an Expand, Tile or ConstantOfShape cannot bloat the
// model; and nodes the evaluator cannot or fails to run (the error, if real, surfaces at
// run time exactly as without optimization).
class ConstantFolding final : public Pass {
 public:
  static constexpr const char* kName = "constant_folding";
  // Results may grow to this many bytes regardless of the inputs' size.
  static constexpr size_t kMinSizeCap = 64 * 1024;
  // ... and to this multiple of the node's constant input bytes.
  static constexpr size_t kGrowthFactor = 4;

  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
