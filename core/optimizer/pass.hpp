// The unit of graph optimization: a small class with a name and an apply step.
//
// Passes never name a backend (DESIGN.md §2): they rewrite the IR into an equivalent
// graph that every backend can still run. One pass per file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::optimizer {

// Computes the outputs of one node whose inputs are all constants. The optimizer does not
// implement operators itself: the session hands it an evaluator that runs the node on a
// backend's kernels (the CPU plugin), so folding and execution can never disagree.
class ConstantEvaluator {
 public:
  virtual ~ConstantEvaluator() = default;
  // `node` belongs to `graph`; every non-omitted input of it is a constant of `graph`.
  // Returns one tensor per node output (nullptr for an omitted output), Unsupported when
  // the evaluator has no kernel for the node (the pass then leaves the node alone), or
  // another error when the kernel itself fails (e.g. a Gather index out of range), which
  // the pass also treats as "leave it": the error will surface, with its node, at run
  // time exactly as it would without optimization.
  virtual Result<std::vector<ir::TensorDataPtr>> evaluate(const ir::Graph& graph,
                                                          const ir::Node& node) const = 0;
};

// Brings the values' shapes up to date after rewrites (the session gives the optimizer
// ONNX's shape inference). Fusion passes decide from shapes, and a folded Reshape shape
// often makes everything downstream sizeable for the first time. Best effort: a failure
// leaves the shapes as they were.
class ShapeRefiner {
 public:
  virtual ~ShapeRefiner() = default;
  virtual void refine(ir::Graph& graph) const = 0;
};

// What a pass may know about the model beyond the graph itself.
struct PassContext {
  // The model's opset imports (domain -> version; "" is the default ONNX domain).
  std::map<std::string, int64_t> opsets;
  // nullptr: no evaluator (constant folding then folds nothing).
  const ConstantEvaluator* evaluator = nullptr;
  // nullptr: shapes stay as loaded (plus what passes set themselves).
  const ShapeRefiner* shape_refiner = nullptr;

  int64_t opset(const std::string& domain = "") const {
    auto it = opsets.find(domain);
    return it == opsets.end() ? 0 : it->second;
  }
};

class Pass {
 public:
  virtual ~Pass() = default;

  // The name users type in --disable-pass and the YAML `disabled_passes` list.
  virtual std::string name() const = 0;

  // Rewrites `graph` in place and returns how many rewrites it made (0: the graph is
  // untouched), or an error (the pipeline adds the pass name as context). What counts as
  // one rewrite is the pass's natural unit: a node folded, a chain fused. A pass must
  // leave the graph valid (topologically ordered, links rebuilt) when it returns > 0.
  virtual Result<int> apply(ir::Graph& graph, const PassContext& context) = 0;

  // How many times in a row the pipeline may apply this pass while it keeps reporting
  // a change. Passes that reach their own fixed point in one application keep the
  // default; passes whose rewrites enable further rewrites of the same kind ask for more.
  virtual int max_iterations() const { return 1; }
};

}  // namespace infer::optimizer
