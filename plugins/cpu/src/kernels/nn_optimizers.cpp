// The training-domain optimizers (domain "ai.onnx.preview.training", opset 1): Adagrad,
// Adam and Momentum. Inputs are the learning rate R (scalar), the update count T (int64
// scalar), then n tensors X, n gradients G and the n (Adagrad, Momentum) or 2n (Adam)
// accumulators; outputs are the n new X followed by the new accumulators. Every group
// must have matching shapes. Arithmetic is in double, rounded once on store; the update
// rules are those of the ONNX operator definitions:
//   Adagrad: r = R / (1 + T * decay_factor); g = norm_coefficient * X + G;
//            H' = H + g * g; X' = X - r * g / (sqrt(H') + epsilon)
//   Adam:    g = norm_coefficient * X + G; V' = alpha * V + (1 - alpha) * g;
//            H' = beta * H + (1 - beta) * g * g;
//            r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
//            X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon))
//   Momentum: g = norm_coefficient * X + G; b = T > 0 ? beta : 1; V' = alpha * V + b * g;
//            standard: X' = X - R * V';  nesterov: X' = X - R * (g + alpha * V')
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "nn_util.hpp"

namespace infer::cpu::kernels {
namespace {

enum class Algo { kAdagrad, kAdam, kMomentum, kNesterov };

struct Attrs {
  double decay_factor = 0, epsilon = 0, norm_coefficient = 0, norm_coefficient_post = 0;
  double alpha = 0, beta = 0;
};

// Accumulator tensors per optimized tensor.
size_t state_count(Algo a) { return a == Algo::kAdam ? 2 : 1; }

class OptimizerKernel final : public Kernel {
 public:
  OptimizerKernel(Algo algo, Attrs attrs) : algo_(algo), a_(attrs) {}

  Status run(KernelContext& ctx) const override {
    const size_t groups = 2 + state_count(algo_);  // X, G, then the accumulators
    const size_t n = (ctx.num_inputs() - 2) / groups;
    CPU_ASSIGN_OR_RETURN(double R, read_scalar(*ctx.input(0), "R (learning rate)"));
    const Tensor& Tt = *ctx.input(1);
    if (Tt.dtype != INFER_DTYPE_INT64 || Tt.numel() != 1)
      return invalid("T (update count) must be an int64 scalar");
    const int64_t T = *Tt.as<int64_t>();
    for (size_t i = 0; i < n; ++i) {
      const Tensor& X = *ctx.input(2 + i);
      for (size_t g = 1; g < groups; ++g) {
        const Tensor* t = ctx.input(2 + g * n + i);
        if (t == nullptr) return invalid("input ", 2 + g * n + i, " is required");
        if (t->dims != X.dims || t->dtype != X.dtype)
          return invalid("input ", 2 + g * n + i, " is ", dtype_name(t->dtype), dims_str(t->dims),
                         ", expected ", dtype_name(X.dtype), dims_str(X.dims), " like input ",
                         2 + i);
      }
      CPU_RETURN_IF_ERROR(update(ctx, i, n, R, T));
    }
    return Status::ok();
  }

 private:
  Status update(KernelContext& ctx, size_t i, size_t n, double R, int64_t T) const {
    const Tensor& X = *ctx.input(2 + i);
    return dispatch_float(X.dtype, "X", [&]<typename E>(Tag<E>) -> Status {
      auto ld = [](const Tensor& t, int64_t k) {
        return static_cast<double>(to_compute(t.as<E>()[k]));
      };
      auto st = [](double v) { return from_compute<E>(static_cast<compute_t<E>>(v)); };
      const Tensor& G = *ctx.input(2 + n + i);
      const Tensor& S1 = *ctx.input(2 + 2 * n + i);
      const Tensor* S2 = algo_ == Algo::kAdam ? ctx.input(2 + 3 * n + i) : nullptr;
      E* xo = nullptr;
      E* s1o = nullptr;
      E* s2o = nullptr;
      if (ctx.has_output(i)) {
        CPU_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(i, X.dtype, X.dims));
        xo = t->mut<E>();
      }
      if (ctx.has_output(n + i)) {
        CPU_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(n + i, X.dtype, X.dims));
        s1o = t->mut<E>();
      }
      if (S2 != nullptr && ctx.has_output(2 * n + i)) {
        CPU_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(2 * n + i, X.dtype, X.dims));
        s2o = t->mut<E>();
      }
      const double Td = static_cast<double>(T);
      double r = R;
      if (algo_ == Algo::kAdagrad) r = R / (1 + Td * a_.decay_factor);
      if (algo_ == Algo::kAdam && T > 0)
        r = R * std::sqrt(1 - std::pow(a_.beta, Td)) / (1 - std::pow(a_.alpha, Td));
      const double beta_adj = T > 0 ? a_.beta : 1.0;
      for (int64_t k = 0; k < X.numel(); ++k) {
        const double x = ld(X, k);
        const double g = a_.norm_coefficient * x + ld(G, k);
        double x_new = 0, s1 = 0, s2 = 0;
        switch (algo_) {
          case Algo::kAdagrad:
            s1 = ld(S1, k) + g * g;
            x_new = x - r * g / (std::sqrt(s1) + a_.epsilon);
            break;
          case Algo::kAdam:
            s1 = a_.alpha * ld(S1, k) + (1 - a_.alpha) * g;
            s2 = a_.beta * ld(*S2, k) + (1 - a_.beta) * g * g;
            x_new = (1 - a_.norm_coefficient_post) * (x - r * s1 / (std::sqrt(s2) + a_.epsilon));
            break;
          case Algo::kMomentum:
            s1 = a_.alpha * ld(S1, k) + beta_adj * g;
            x_new = x - R * s1;
            break;
          case Algo::kNesterov:
            s1 = a_.alpha * ld(S1, k) + beta_adj * g;
            x_new = x - R * (g + a_.alpha * s1);
            break;
        }
        if (xo) xo[k] = st(x_new);
        if (s1o) s1o[k] = st(s1);
        if (s2o) s2o[k] = st(s2);
      }
      return Status::ok();
    });
  }

  Algo algo_;
  Attrs a_;
};

Result<Algo> algo_of(const infer_node_view& n) {
  if (std::strcmp(n.op_type, "Adagrad") == 0) return Algo::kAdagrad;
  if (std::strcmp(n.op_type, "Adam") == 0) return Algo::kAdam;
  const std::string mode = attr_s(n, "mode", "");
  if (mode == "standard") return Algo::kMomentum;
  if (mode == "nesterov") return Algo::kNesterov;
  return unsupported("Momentum mode '", mode, "' is not 'standard' or 'nesterov'");
}

}  // namespace

Status optimizer_check(const infer_node_view& node) {
  CPU_ASSIGN_OR_RETURN(Algo algo, algo_of(node));
  const size_t groups = 2 + state_count(algo);
  if (node.num_inputs < 2 + groups || (node.num_inputs - 2) % groups != 0)
    return unsupported(node.op_type, " takes R, T and ", groups,
                       " inputs per optimized tensor, got ", node.num_inputs, " inputs");
  for (size_t i = 0; i < node.num_inputs; ++i)
    if (node.inputs[i] == nullptr) return unsupported(node.op_type, " input ", i, " is required");
  const size_t n = (node.num_inputs - 2) / groups;
  if (node.num_outputs > n * (1 + state_count(algo)))
    return unsupported(node.op_type, " with ", n, " optimized tensors has at most ",
                       n * (1 + state_count(algo)), " outputs, got ", node.num_outputs);
  CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[0], dtypes::kAllFloat, "R"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[1], dtypes::kI64, "T"));
  for (size_t i = 2; i < node.num_inputs; ++i)
    CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[i], dtypes::kAllFloat, "its tensors"));
  if (algo == Algo::kMomentum || algo == Algo::kNesterov)
    for (const char* a : {"alpha", "beta", "norm_coefficient"})
      if (!has_attr(node, a)) return unsupported("Momentum needs the ", a, " attribute");
  return Status::ok();
}

Result<KernelPtr> optimizer_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  CPU_ASSIGN_OR_RETURN(Algo algo, algo_of(n));
  Attrs a;
  a.norm_coefficient = attr_f(n, "norm_coefficient", 0.0);
  switch (algo) {
    case Algo::kAdagrad:
      a.decay_factor = attr_f(n, "decay_factor", 0.0);
      a.epsilon = attr_f(n, "epsilon", 1e-6);
      break;
    case Algo::kAdam:
      a.alpha = attr_f(n, "alpha", 0.9);
      a.beta = attr_f(n, "beta", 0.999);
      a.epsilon = attr_f(n, "epsilon", 1e-6);
      a.norm_coefficient_post = attr_f(n, "norm_coefficient_post", 0.0);
      break;
    case Algo::kMomentum:
    case Algo::kNesterov:
      a.alpha = attr_f(n, "alpha", 0.0);
      a.beta = attr_f(n, "beta", 0.0);
      break;
  }
  return KernelPtr(new OptimizerKernel(algo, a));
}

}  // namespace infer::cpu::kernels
