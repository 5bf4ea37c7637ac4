// shape_folding: turns shape computations into constants where the shapes are known.
#pragma once

#include <string>

#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer {

// (a) Shape (with opset-15 start/end) and Size of a value whose needed dims are all known
//     become int64 constants, even when other dims are symbolic; not when the output is a
//     graph output or captured (the runtime serves node outputs, not constants).
// (b) A Reshape (allowzero absent or 0) whose shape is a Concat (axis 0) of pieces, each
//     a 1-D int constant, Unsqueeze(Gather(Shape(u), k)) with a scalar k (axes [0] as
//     attribute or input), Gather(Shape(u), [k]), or a Shape(u) slice - possibly behind
//     Casts to int64 - gets a constant shape. A piece naming dim k of u becomes that
//     dim's size when shape inference knows it, else 0 ("copy input dim i") when dim i of
//     the Reshape's data is provably dim k of u: data is u and i == k; data is a
//     Transpose(perm) of u' and (u', perm[i]) is provably (u, k); data is a unary
//     elementwise op (Relu, Erf, Tanh, Sigmoid, Neg, Sqrt, Cast) or Add/Sub/Mul/Div with
//     a constant of rank <= 1 (and one element, or i before the last dim) of u' and
//     (u', i) is provably (u, k); or both dims are the same known size or symbol. Only
//     positions i < rank(data) may be 0. If any piece cannot be resolved the Reshape is
//     left as it is. This is what lets exported transformers (BERT attention's
//     Reshape(q, Concat(batch, seq, 4, 16))) become static reshapes. The abandoned
//     Shape/Gather/Concat chain is left to dead_code_elimination.
// One rewrite per folded node or simplified Reshape.
class ShapeFolding final : public Pass {
 public:
  static constexpr const char* kName = "shape_folding";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
