// Registers the transformer passes in pipeline order (see pass_registry.hpp).
//
// They run before the generic fusions because they match raw Add/Mul/MatMul chains that
// the bias/activation fusions would otherwise absorb piecemeal. Layer normalization goes
// first; Gelu next; attention last, as it spans the most nodes and none of its nodes is
// one the other two match.
#include "optimizer/attention_fusion.hpp"
#include "optimizer/gelu_fusion.hpp"
#include "optimizer/layer_norm_fusion.hpp"
#include "optimizer/pass_registry.hpp"

namespace infer::optimizer {

void register_transformer_passes(std::vector<PassEntry>& passes) {
  passes.push_back(
      {LayerNormFusion::kName, kLevelExtended, [] { return std::make_unique<LayerNormFusion>(); }});
  passes.push_back(
      {GeluFusion::kName, kLevelExtended, [] { return std::make_unique<GeluFusion>(); }});
  passes.push_back(
      {AttentionFusion::kName, kLevelExtended, [] { return std::make_unique<AttentionFusion>(); }});
}

}  // namespace infer::optimizer
