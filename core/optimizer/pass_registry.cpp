#include "optimizer/pass_registry.hpp"

#include "optimizer/dead_code_elimination.hpp"
#include "optimizer/matmul_integer_to_float_fusion.hpp"
#include "optimizer/qdq_binary_fusion.hpp"
#include "optimizer/qdq_conv_fusion.hpp"
#include "optimizer/qdq_gemm_fusion.hpp"
#include "optimizer/qdq_lookup_fusion.hpp"
#include "optimizer/qdq_passthrough.hpp"

namespace infer::optimizer {

const std::vector<PassEntry>& pass_registry() {
  static const std::vector<PassEntry> kPasses = [] {
    std::vector<PassEntry> passes;
    // Before constant folding, which would turn the DequantizeLinear of quantized weights
    // into float weights and hide the QDQ pattern. The convolutions first: they take the
    // Relu after a Conv; then the matrix products; the others keep the activations between
    // them 8-bit.
    passes.push_back({QdqConvFusion::kName, kLevelExtended,
                      [] { return std::make_unique<QdqConvFusion>(); }});
    passes.push_back({QdqGemmFusion::kName, kLevelExtended,
                      [] { return std::make_unique<QdqGemmFusion>(); }});
    passes.push_back({QdqBinaryFusion::kName, kLevelExtended,
                      [] { return std::make_unique<QdqBinaryFusion>(); }});
    passes.push_back({QdqLookupFusion::kName, kLevelExtended,
                      [] { return std::make_unique<QdqLookupFusion>(); }});
    passes.push_back({QdqPassthrough::kName, kLevelExtended,
                      [] { return std::make_unique<QdqPassthrough>(); }});
    passes.push_back({MatMulIntegerToFloatFusion::kName, kLevelExtended,
                      [] { return std::make_unique<MatMulIntegerToFloatFusion>(); }});
    register_basic_passes(passes);
    passes.push_back({DeadCodeElimination::kName, kLevelBasic,
                      [] { return std::make_unique<DeadCodeElimination>(); }});
    register_transformer_passes(passes);
    register_fusion_passes(passes);
    return passes;
  }();
  return kPasses;
}

std::vector<std::string> known_pass_names() {
  std::vector<std::string> names;
  for (const PassEntry& e : pass_registry()) names.push_back(e.name);
  return names;
}

}  // namespace infer::optimizer
