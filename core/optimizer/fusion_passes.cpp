// Registers the fusion passes in pipeline order (see pass_registry.hpp).
//
// The order matters: a BatchNormalization folds into a plain Conv before anything turns
// that Conv into a FusedConv; bias and residual Adds are absorbed before the activation
// that follows them (FusedConv applies its activation after Z, as Add -> Relu did); a
// HardSwish chain becomes one activation before the activations are folded; and
// the layout pass runs last, on what the fusions left.
#include "optimizer/activation_fusion.hpp"
#include "optimizer/conv_add_fusion.hpp"
#include "optimizer/conv_bn_folding.hpp"
#include "optimizer/hardswish_fusion.hpp"
#include "optimizer/matmul_add_fusion.hpp"
#include "optimizer/pass_registry.hpp"
#include "optimizer/transpose_optimization.hpp"

namespace infer::optimizer {
namespace {

template <typename P>
PassEntry entry(int min_level) {
  return PassEntry{P::kName, min_level, [] { return std::make_unique<P>(); }};
}

}  // namespace

void register_fusion_passes(std::vector<PassEntry>& passes) {
  passes.push_back(entry<ConvBnFolding>(kLevelExtended));
  passes.push_back(entry<ConvAddFusion>(kLevelExtended));
  passes.push_back(entry<MatMulAddFusion>(kLevelExtended));
  passes.push_back(entry<HardSwishFusion>(kLevelExtended));
  passes.push_back(entry<ActivationFusion>(kLevelExtended));
  passes.push_back(entry<TransposeOptimization>(kLevelAll));
}

}  // namespace infer::optimizer
