// Shared pieces of the fused kernels of the ai.infer domain (sdk/FUSED_OPS.md):
//   - the activation every FusedConv/FusedGemm/FusedMatMul ends with (attributes
//     `activation` and `activation_params`), its check-time validation and the epilogue
//     that adds a residual or a row bias and applies it in place;
//   - the two Gelu forms (also the standalone Gelu kernel);
//   - InnerContext, which lets a fused kernel run the plain Conv/Gemm/MatMul kernel on its
//     own inputs and then find the output that kernel allocated, so the product itself is
//     computed by exactly the code the unfused op uses;
//   - inner_view(), a copy of a node view restricted to the inputs and opset the plain
//     op's check function expects.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "simd/activation.hpp"

namespace infer::cpu::kernels {

struct Activation {
  enum class Kind {
    kNone,
    kRelu,
    kTanh,
    kSigmoid,
    kLeakyRelu,
    kClip,
    kHardSigmoid,
    kHardSwish,
    kGelu,
    kGeluTanh
  };
  Kind kind = Kind::kNone;
  // LeakyRelu: p0 = alpha; Clip: p0 = min, p1 = max; HardSigmoid: p0 = alpha, p1 = beta.
  // Kept as given: LeakyRelu and HardSigmoid round them to float32 as their ONNX
  // attributes are, Clip converts them to the element type as its bound inputs are.
  double p0 = 0;
  double p1 = 0;
};

// The same activation for the SIMD library's float32 epilogues (parameters rounded to
// float32, as the float32 kernels of the unfused ops use them).
simd::Act to_simd_act(const Activation& act);

// Validates `activation` (a known name) and `activation_params` (the count that name
// takes) of a node; the message names the attribute, the value and what was expected.
Status check_activation(const infer_node_view& node);
// Reads the activation of a node that passed check_activation.
Activation read_activation(const infer_node_view& node);

// Y = act(Y + residual + row_bias), elementwise and in place. `residual` (may be null)
// has Y's shape; `row_bias` (may be null) has Y's last dim and repeats over the rows. Y
// and both extras have the same float dtype (checked by the callers). Does nothing when
// there is no extra and no activation.
Status apply_epilogue(KernelContext& ctx, Tensor& Y, const Tensor* residual, const Tensor* row_bias,
                      const Activation& act);

// Gelu(x) = 0.5·x·(1 + erf(x/√2)), written as the decomposition computes it.
template <typename C>
C gelu_erf(C x) {
  return C(0.5) * x * (C(1) + std::erf(x / static_cast<C>(1.4142135623730951)));
}
// GeluTanh(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
template <typename C>
C gelu_tanh(C x) {
  const C k = static_cast<C>(0.7978845608028654);  // sqrt(2 / pi)
  return C(0.5) * x * (C(1) + std::tanh(k * (x + static_cast<C>(0.044715) * x * x * x)));
}

// A KernelContext over the first `num_inputs` inputs of `outer` and its output 0, for
// running a plain kernel inside a fused one. The plain kernel allocates the fused node's
// output 0 through it; output() returns that tensor afterwards (null if none was made).
class InnerContext final : public KernelContext {
 public:
  InnerContext(KernelContext& outer, size_t num_inputs);
  bool has_output(size_t i) const override { return i == 0 && outer_.has_output(0); }
  Result<Tensor*> allocate_output(size_t i, infer_dtype dtype, const Dims& dims) override;
  Tensor* output() const { return output_; }

 private:
  KernelContext& outer_;
  Tensor* output_ = nullptr;
};

// A copy of `node` that shows only its first `num_inputs` inputs and claims `opset` for
// the default domain, so the plain op's check function (which counts inputs and reads
// opset-dependent rules) can validate the shared part of a fused node. The copy points
// into `node`, so it is valid only as long as `node` is.
infer_node_view inner_view(const infer_node_view& node, size_t num_inputs, int64_t opset);

// "node 'name'" for check-time messages (which the capability query reports without the
// executable's node prefix).
std::string node_label(const infer_node_view& node);

}  // namespace infer::cpu::kernels
