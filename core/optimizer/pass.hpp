// The unit of graph optimization: a small class with a name and an apply step.
//
// Passes never name a backend (DESIGN.md §2): they rewrite the IR into an equivalent
// graph that every backend can still run. One pass per file.
#pragma once

#include <string>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::optimizer {

class Pass {
 public:
  virtual ~Pass() = default;

  // The name users type in --disable-pass and the YAML `disabled_passes` list.
  virtual std::string name() const = 0;

  // Rewrites `graph` in place. Returns true when the graph changed, false when it was
  // left untouched, or an error (the pipeline adds the pass name as context). A pass
  // must leave the graph valid (topologically ordered, links rebuilt) when it returns
  // true.
  virtual Result<bool> apply(ir::Graph& graph) = 0;

  // How many times in a row the pipeline may apply this pass while it keeps reporting
  // a change. Passes that reach their own fixed point in one application keep the
  // default; passes whose rewrites enable further rewrites of the same kind ask for more.
  virtual int max_iterations() const { return 1; }
};

}  // namespace infer::optimizer
