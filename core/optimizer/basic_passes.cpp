// Registers the basic passes in pipeline order (see pass_registry.hpp). They are exact
// rewrites: folding first (so that shapes and constants are as concrete as they get),
// then the eliminations and merges that folding exposes, then CSE over the result.
// dead_code_elimination follows them (registered by pass_registry.cpp) and removes what
// they abandon.
#include <memory>

#include "optimizer/common_subexpression_elimination.hpp"
#include "optimizer/constant_folding.hpp"
#include "optimizer/noop_elimination.hpp"
#include "optimizer/pass_registry.hpp"
#include "optimizer/reshape_transpose_merging.hpp"
#include "optimizer/shape_folding.hpp"

namespace infer::optimizer {
namespace {

template <typename P>
PassEntry basic_entry() {
  return PassEntry{P::kName, kLevelBasic, [] { return std::make_unique<P>(); }};
}

}  // namespace

void register_basic_passes(std::vector<PassEntry>& passes) {
  passes.push_back(basic_entry<ConstantFolding>());
  passes.push_back(basic_entry<ShapeFolding>());
  passes.push_back(basic_entry<NoopElimination>());
  passes.push_back(basic_entry<ReshapeTransposeMerging>());
  passes.push_back(basic_entry<CommonSubexpressionElimination>());
}

}  // namespace infer::optimizer
