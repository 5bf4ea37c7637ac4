// Elementwise unary math and activations. Each op is a small functor; the kernel picks
// the instantiated loop for its op and dtype once, at compile time, so the inner loop
// has no per-element dispatch.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

// Attribute values some activations take.
struct Params {
  float alpha = 0;
  float beta = 0;
  float gamma = 0;
};

template <typename T>
using LoopFn = void (*)(const T* x, T* y, int64_t n, const Params& p);

template <typename T, typename F>
void loop(const T* x, T* y, int64_t n, const Params& p) {
  F f{p};
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <typename T>
T wrap_neg(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(v));
  } else {
    return -v;
  }
}

// Functors: constructed from Params, called per element.
#define CPU_UNARY(NAME, EXPR) \
  struct NAME {               \
    const Params& p;          \
    template <typename T>     \
    T operator()(T x) const { \
      (void)p;                \
      return EXPR;            \
    }                         \
  };
CPU_UNARY(Neg, wrap_neg(x))
CPU_UNARY(Abs, x < T(0) ? wrap_neg(x) : x)
CPU_UNARY(Sign, static_cast<T>((T(0) < x) - (x < T(0))))
CPU_UNARY(Exp, std::exp(x))
CPU_UNARY(Log, std::log(x))
CPU_UNARY(Sqrt, std::sqrt(x))
CPU_UNARY(Reciprocal, T(1) / x)
CPU_UNARY(Floor, std::floor(x))
CPU_UNARY(Ceil, std::ceil(x))
CPU_UNARY(Round, std::nearbyint(x))
CPU_UNARY(Erf, std::erf(x))
CPU_UNARY(Sin, std::sin(x))
CPU_UNARY(Cos, std::cos(x))
CPU_UNARY(Relu, x > T(0) ? x : T(0))
CPU_UNARY(LeakyRelu, x >= T(0) ? x : static_cast<T>(p.alpha * x))
CPU_UNARY(Sigmoid, T(1) / (T(1) + std::exp(-x)))
CPU_UNARY(Tanh, std::tanh(x))
CPU_UNARY(HardSigmoid, std::fmax(T(0), std::fmin(T(1), p.alpha* x + p.beta)))
CPU_UNARY(HardSwish, x* std::fmax(T(0), std::fmin(T(1), x / T(6) + T(0.5))))
CPU_UNARY(Softplus, x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
CPU_UNARY(Softsign, x / (T(1) + std::fabs(x)))
CPU_UNARY(Elu, x >= T(0) ? x : static_cast<T>(p.alpha * std::expm1(x)))
CPU_UNARY(Selu, static_cast<T>(p.gamma*(x > T(0) ? x : p.alpha * std::expm1(x))))
CPU_UNARY(Not, static_cast<T>(x == T(0)))
#undef CPU_UNARY

struct OpEntry {
  const char* name;
  LoopFn<float> f32;
  LoopFn<int32_t> i32;
  LoopFn<int64_t> i64;
  LoopFn<uint8_t> boolean;
};

#define F32_ONLY(NAME) \
  { #NAME, &loop < float, NAME>, nullptr, nullptr, nullptr }
#define NUMERIC(NAME) \
  { #NAME, &loop < float, NAME>, &loop < int32_t, NAME>, &loop < int64_t, NAME>, nullptr }
constexpr OpEntry kOps[] = {
    NUMERIC(Neg),         NUMERIC(Abs),
    NUMERIC(Sign),        F32_ONLY(Exp),
    F32_ONLY(Log),        F32_ONLY(Sqrt),
    F32_ONLY(Reciprocal), F32_ONLY(Floor),
    F32_ONLY(Ceil),       F32_ONLY(Round),
    F32_ONLY(Erf),        F32_ONLY(Sin),
    F32_ONLY(Cos),        F32_ONLY(Relu),
    F32_ONLY(LeakyRelu),  F32_ONLY(Sigmoid),
    F32_ONLY(Tanh),       F32_ONLY(HardSigmoid),
    F32_ONLY(HardSwish),  F32_ONLY(Softplus),
    F32_ONLY(Softsign),   F32_ONLY(Elu),
    F32_ONLY(Selu),       {"Not", nullptr, nullptr, nullptr, &loop<uint8_t, Not>},
};
#undef F32_ONLY
#undef NUMERIC

const OpEntry* lookup(const char* name) {
  for (const auto& e : kOps)
    if (std::strcmp(e.name, name) == 0) return &e;
  return nullptr;
}

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(const OpEntry* op, Params params) : op_(op), params_(params) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    if (X == nullptr) return invalid("input 0 is required");
    switch (X->dtype) {
      case INFER_DTYPE_FLOAT32:
        return apply(ctx, *X, op_->f32);
      case INFER_DTYPE_INT32:
        return apply(ctx, *X, op_->i32);
      case INFER_DTYPE_INT64:
        return apply(ctx, *X, op_->i64);
      case INFER_DTYPE_BOOL:
        return apply(ctx, *X, op_->boolean);
      default:
        return invalid("dtype ", dtype_name(X->dtype), " not supported");
    }
  }

 private:
  template <typename T>
  Status apply(KernelContext& ctx, const Tensor& X, LoopFn<T> fn) const {
    if (fn == nullptr) return invalid("dtype ", dtype_name(X.dtype), " not supported");
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    const T* x = X.as<T>();
    T* y = Y->mut<T>();
    const Params& p = params_;
    ctx.parallel_for(static_cast<size_t>(X.numel()), 16384,
                     [&](size_t b, size_t e) { fn(x + b, y + b, static_cast<int64_t>(e - b), p); });
    return Status::ok();
  }

  const OpEntry* op_;
  Params params_;
};

}  // namespace

Status unary_check(const infer_node_view& node) {
  const OpEntry* op = lookup(node.op_type);
  if (op == nullptr) return unsupported("no unary kernel for ", node.op_type);
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  const infer_value_view* x = node_input(node, 0);
  uint32_t mask = (op->f32 ? dtypes::kF32 : 0) | (op->i32 ? dtypes::kI32 : 0) |
                  (op->i64 ? dtypes::kI64 : 0) | (op->boolean ? dtypes::kBool : 0);
  return check_dtype(node, x, mask, "input 0");
}

Result<KernelPtr> unary_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const OpEntry* op = lookup(n.op_type);
  if (op == nullptr) return internal("no unary kernel for ", n.op_type);
  Params p;
  const std::string name = n.op_type;
  if (name == "LeakyRelu") p.alpha = static_cast<float>(attr_f(n, "alpha", 0.01));
  if (name == "Elu") p.alpha = static_cast<float>(attr_f(n, "alpha", 1.0));
  if (name == "HardSigmoid") {
    p.alpha = static_cast<float>(attr_f(n, "alpha", 0.2));
    p.beta = static_cast<float>(attr_f(n, "beta", 0.5));
  }
  if (name == "Selu") {
    p.alpha = static_cast<float>(attr_f(n, "alpha", 1.67326319217681884765625));
    p.gamma = static_cast<float>(attr_f(n, "gamma", 1.05070102214813232421875));
  }
  return KernelPtr(new UnaryKernel(op, p));
}

}  // namespace infer::cpu::kernels
