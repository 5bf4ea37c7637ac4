// transpose_optimization: sinks Transposes through layout-agnostic operators until they
// meet and cancel (the NHWC <-> NCHW pairs exporters leave around elementwise code).
#pragma once

#include <string>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Rewrites, repeated until none applies (each one removes a Transpose or moves one
// strictly towards the graph outputs, so the number of Transposes never grows):
//
// 1. Transpose(Transpose(x, p1), p2) becomes Transpose(x, q) with q[j] = p1[p2[j]], or
//    vanishes when q is the identity (its readers read x; a graph-output name survives by
//    renaming x's producer's output, else the node becomes an Identity). The inner
//    Transpose stays only while something else reads it. A lone identity Transpose
//    vanishes the same way.
// 2. Sinking through a unary elementwise operator U (Relu, Sigmoid, Tanh, Neg, Abs, Exp,
//    Log, Sqrt, Erf, Cast, Clip with constant or omitted bounds, LeakyRelu, ...):
//    U(Transpose(x, p)) becomes Transpose(U(x), p) when the Transpose's output is read by
//    U alone. U keeps its name and the Transpose writes U's old output value.
// 3. Sinking through a binary elementwise operator B (Add, Sub, Mul, Div, Pow, Max, Min)
//    whose inputs are, in either order:
//    - two Transposes with the same perm, each read by B alone: one Transpose after B;
//    - a Transpose read by B alone and a value whose shape makes it layout-free (rank no
//      larger than the perm's, every dim 1, e.g. a scalar): B reads it unchanged;
//    - a Transpose read by B alone and a constant of the perm's rank: B reads the constant
//      transposed by the inverse perm, computed at optimization time through the
//      context's evaluator (the backend's own Transpose kernel); without an evaluator, or
//      when it fails, this case is left alone rather than add a run-time Transpose.
//
// A Transpose's perm must be a valid permutation (or absent with a known input rank).
// Layout rewrites keep every value's meaning, so they fire at any opset and dtype.
class TransposeOptimization final : public Pass {
 public:
  static constexpr const char* kName = "transpose_optimization";
  std::string name() const override { return kName; }
  Result<int> apply(ir::Graph& graph, const PassContext& context) override;
};

}  // namespace infer::optimizer
