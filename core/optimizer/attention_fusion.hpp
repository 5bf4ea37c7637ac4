// attention_fusion: the multi-head scaled-dot-product attention chain exporters write
// becomes one ai.infer Attention node (sdk/FUSED_OPS.md).
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Matches, for q, k, v of rank 3 and one float dtype,
//   q4 = Transpose(Reshape(q, [0|B, 0|S, H, D|-1]), perm [0,2,1,3])
//   kT = Transpose(Reshape(k, ...), perm [0,2,3,1])
//        or Transpose(Transpose(Reshape(k, ...), [0,2,1,3]), [0,1,3,2])
//   v4 = Transpose(Reshape(v, ...), perm [0,2,1,3])
//   s  = MatMul(q4, kT)
//   s2 = Div(s, c) | Mul(s, c) | Mul(c, s) | s       c: one-element constant
//   s3 = Add(s2, mask) | Add(mask, s2) | s2
//   p  = Softmax(s3, axis -1 or 3)
//   y  = Reshape(Transpose(MatMul(p, v4), [0,2,1,3]), [0|B, 0|Sq, H·Dv|-1])
// and rewrites it as y = Attention(q, k, v, mask?; num_heads = H, scale = 1/c, c or 1).
// Refused unless: every Reshape shape is a constant and allowzero is absent or 0; the 0s
// and known sizes in the shapes describe the input's own batch/sequence dims; H·D equals
// the known hidden size; q, k and v have provably equal batch dims (MatMul would
// otherwise broadcast them); every intermediate has a single use; the mask has q's dtype,
// a known rank <= 4 and, right-aligned to the score shape [B, H, Sq, Sk], each of its
// dims but the last is 1 or provably equal to the score dim (so the mask never broadcasts
// the scores to a larger shape). y keeps its name; the fused node takes the name of the
// MatMul computing Q·Kᵀ. Fires only at default-domain opset >= 13.
class AttentionFusion final : public Pass {
 public:
  static constexpr const char* kName = "attention_fusion";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
