// Elementwise unary math and activations whose output has the input's dtype. Each op is
// a small functor over the compute type (float for float16/bfloat16, else the element
// type itself); the kernel picks the instantiated loop for its op and the input's dtype
// once per run, so the inner loop has no per-element dispatch. Only the (op, dtype) pairs
// in an op's mask are instantiated. float32 inputs of the common activations and math
// functions take the vectorized kernels of the SIMD library instead (simd/vec.hpp, whose
// approximations are within a few ulp of std::).
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../host_threads.hpp"
#include "../node_util.hpp"
#include "math_common.hpp"
#include "simd/activation.hpp"
#include "simd/vec.hpp"

namespace infer::cpu::kernels {
namespace {

// Attribute values some activations take (ONNX float attributes are float32).
struct Params {
  float alpha = 0;
  float beta = 0;
  float gamma = 0;
};

using AnyLoop = void (*)(const void* x, void* y, int64_t n, const Params& p);

template <typename T, typename F>
void loop(const void* xv, void* yv, int64_t n, const Params& p) {
  const F f{p};
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  for (int64_t i = 0; i < n; ++i) y[i] = from_compute<T>(f(to_compute(x[i])));
}

template <typename C>
C wrap_neg(C v) {
  if constexpr (std::is_integral_v<C>) {
    return math::wrap_sub<C>(0, v);
  } else {
    return -v;
  }
}

// Functors: constructed from Params, called per element on the compute type C.
#define CPU_UNARY(NAME, EXPR) \
  struct NAME {               \
    const Params& p;          \
    template <typename C>     \
    C operator()(C x) const { \
      (void)p;                \
      return EXPR;            \
    }                         \
  };
CPU_UNARY(Neg, wrap_neg(x))
CPU_UNARY(Exp, std::exp(x))
CPU_UNARY(Log, std::log(x))
CPU_UNARY(Sqrt, std::sqrt(x))
CPU_UNARY(Reciprocal, C(1) / x)
CPU_UNARY(Floor, std::floor(x))
CPU_UNARY(Ceil, std::ceil(x))
CPU_UNARY(Round, std::nearbyint(x))  // the default rounding mode: half to even
CPU_UNARY(Erf, std::erf(x))
CPU_UNARY(Sin, std::sin(x))
CPU_UNARY(Cos, std::cos(x))
CPU_UNARY(Tan, std::tan(x))
CPU_UNARY(Asin, std::asin(x))
CPU_UNARY(Acos, std::acos(x))
CPU_UNARY(Atan, std::atan(x))
CPU_UNARY(Sinh, std::sinh(x))
CPU_UNARY(Cosh, std::cosh(x))
CPU_UNARY(Asinh, std::asinh(x))
CPU_UNARY(Acosh, std::acosh(x))
CPU_UNARY(Atanh, std::atanh(x))
CPU_UNARY(Relu, x > C(0) ? x : C(0))
CPU_UNARY(LeakyRelu, x >= C(0) ? x : static_cast<C>(C(p.alpha) * x))
CPU_UNARY(ThresholdedRelu, x > C(p.alpha) ? x : C(0))
CPU_UNARY(Sigmoid, C(1) / (C(1) + std::exp(-x)))
CPU_UNARY(Tanh, std::tanh(x))
CPU_UNARY(HardSigmoid, std::fmax(C(0), std::fmin(C(1), C(p.alpha) * x + C(p.beta))))
CPU_UNARY(HardSwish, x* std::fmax(C(0), std::fmin(C(1), x / C(6) + C(0.5))))
CPU_UNARY(Softplus, x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
CPU_UNARY(Softsign, x / (C(1) + std::fabs(x)))
CPU_UNARY(Elu, x >= C(0) ? x : static_cast<C>(C(p.alpha) * std::expm1(x)))
CPU_UNARY(Selu, static_cast<C>(C(p.gamma) * (x > C(0) ? x : C(p.alpha) * std::expm1(x))))
CPU_UNARY(Celu, std::fmax(C(0), x) + std::fmin(C(0), C(p.alpha) * std::expm1(x / C(p.alpha))))
CPU_UNARY(Not, static_cast<C>(x == C(0)))
#undef CPU_UNARY

struct Abs {
  const Params& p;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return x < C(0) ? wrap_neg(x) : x;
  }
};

// Sign of NaN is NaN, as in numpy.
struct Sign {
  const Params& p;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x > C(0) ? C(1) : C(0);
    } else if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
      return static_cast<C>((C(0) < x) - (x < C(0)));
    } else {
      return static_cast<C>((C(0) < x) - (x < C(0)));
    }
  }
};

// Shrink (lambd in alpha, bias in beta). Integers compute in double and saturate back,
// so x - bias below an unsigned type's range gives 0 instead of undefined behaviour.
struct Shrink {
  const Params& p;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      const double v = static_cast<double>(x), l = p.alpha, b = p.beta;
      return math::saturate_cast<C>(v < -l ? v + b : v > l ? v - b : 0.0);
    } else {
      const C l = C(p.alpha), b = C(p.beta);
      return x < -l ? x + b : x > l ? x - b : C(0);
    }
  }
};

// The loop for functor F and dtype `dt`, or nullptr when `dt` is not in kMask.
template <typename F, uint32_t kMask>
AnyLoop pick(infer_dtype dt) {
  AnyLoop fn = nullptr;
  (void)dispatch(dt, kMask, "", [&]<typename T>(Tag<T>) -> Status {
    if constexpr (std::is_same_v<T, bool>) {
      if constexpr ((kMask & dtypes::kBool) != 0) fn = &loop<uint8_t, F>;  // bools as bytes
    } else if constexpr (math::in_mask<T>(kMask)) {
      fn = &loop<T, F>;
    }
    return Status::ok();
  });
  return fn;
}

struct OpEntry {
  const char* name;
  uint32_t mask;
  AnyLoop (*pick)(infer_dtype);
};

constexpr uint32_t kFloat = dtypes::kAllFloat;
constexpr uint32_t kNum = dtypes::kAllNum;
constexpr uint32_t kFloatSigned = math::kFloatSigned;

#define ENTRY(NAME, MASK) \
  { #NAME, MASK, &pick<NAME, MASK> }
constexpr OpEntry kUnaryOps[] = {
    ENTRY(Neg, kFloatSigned),
    ENTRY(Abs, kNum),
    ENTRY(Sign, kNum),
    ENTRY(Exp, kFloat),
    ENTRY(Log, kFloat),
    ENTRY(Sqrt, kFloat),
    ENTRY(Reciprocal, kFloat),
    ENTRY(Floor, kFloat),
    ENTRY(Ceil, kFloat),
    ENTRY(Round, kFloat),
    ENTRY(Erf, kFloat),
    ENTRY(Sin, kFloat),
    ENTRY(Cos, kFloat),
    ENTRY(Tan, kFloat),
    ENTRY(Asin, kFloat),
    ENTRY(Acos, kFloat),
    ENTRY(Atan, kFloat),
    ENTRY(Sinh, kFloat),
    ENTRY(Cosh, kFloat),
    ENTRY(Asinh, kFloat),
    ENTRY(Acosh, kFloat),
    ENTRY(Atanh, kFloat),
    ENTRY(Relu, kFloatSigned),
    ENTRY(LeakyRelu, kFloat),
    ENTRY(ThresholdedRelu, kFloat),
    ENTRY(Sigmoid, kFloat),
    ENTRY(Tanh, kFloat),
    ENTRY(HardSigmoid, kFloat),
    ENTRY(HardSwish, kFloat),
    ENTRY(Softplus, kFloat),
    ENTRY(Softsign, kFloat),
    ENTRY(Elu, kFloat),
    ENTRY(Selu, kFloat),
    ENTRY(Celu, kFloat),
    ENTRY(Shrink, kNum),
    ENTRY(Not, dtypes::kBool),
};
#undef ENTRY

const OpEntry* lookup_unary(const char* name) {
  for (const auto& e : kUnaryOps)
    if (std::strcmp(e.name, name) == 0) return &e;
  return nullptr;
}

// The vectorized float32 form of an op, if it has one: a simd::UnaryOp, or an
// activation applied in place (after a copy) for the parameterized ones.
struct Float32Fast {
  enum class Kind { kNone, kUnary, kActivation } kind = Kind::kNone;
  simd::UnaryOp op = simd::UnaryOp::kExp;
  simd::Act act;
};

Float32Fast float32_fast(const std::string& name, const Params& p) {
  using U = simd::UnaryOp;
  struct Named {
    const char* name;
    U op;
  };
  static constexpr Named kUnary[] = {{"Exp", U::kExp},   {"Tanh", U::kTanh}, {"Sigmoid", U::kSigmoid},
                                     {"Erf", U::kErf},   {"Relu", U::kRelu}, {"Abs", U::kAbs},
                                     {"Neg", U::kNeg},   {"Sqrt", U::kSqrt}, {"Reciprocal", U::kReciprocal}};
  Float32Fast f;
  for (const Named& u : kUnary)
    if (name == u.name) {
      f.kind = Float32Fast::Kind::kUnary;
      f.op = u.op;
      return f;
    }
  if (name == "LeakyRelu") f.act = {simd::ActKind::kLeakyRelu, p.alpha, 0.0f};
  if (name == "HardSigmoid") f.act = {simd::ActKind::kHardSigmoid, p.alpha, p.beta};
  if (name == "HardSwish") f.act = {simd::ActKind::kHardSwish, 0.0f, 0.0f};
  if (f.act.kind != simd::ActKind::kNone) f.kind = Float32Fast::Kind::kActivation;
  return f;
}

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(const OpEntry* op, Params params)
      : op_(op), params_(params), fast_(float32_fast(op->name, params)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    if (X == nullptr) return invalid("input 0 is required");
    if (X->dtype == INFER_DTYPE_FLOAT32 && fast_.kind != Float32Fast::Kind::kNone)
      return run_float32(ctx, *X);
    AnyLoop fn = op_->pick(X->dtype);
    if (fn == nullptr) return invalid(op_->name, " does not support dtype ", dtype_name(X->dtype));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X->dtype, X->dims));
    const size_t esize = sdk::dtype_size(X->dtype);
    const char* x = static_cast<const char*>(X->data);
    char* y = static_cast<char*>(Y->data);
    const Params& p = params_;
    ctx.parallel_for(static_cast<size_t>(X->numel()), 16384, [&](size_t b, size_t e) {
      fn(x + b * esize, y + b * esize, static_cast<int64_t>(e - b), p);
    });
    return Status::ok();
  }

 private:
  Status run_float32(KernelContext& ctx, const Tensor& X) const {
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    const float* x = X.as<float>();
    float* y = Y->mut<float>();
    const simd::Isa isa = kernel_isa();
    const Float32Fast& f = fast_;
    ctx.parallel_for(static_cast<size_t>(X.numel()), 16384, [&](size_t b, size_t e) {
      if (f.kind == Float32Fast::Kind::kUnary) {
        simd::vec_unary(isa, f.op, x + b, y + b, e - b);
      } else {
        if (y != x) std::memcpy(y + b, x + b, (e - b) * sizeof(float));
        simd::apply_activation(isa, f.act, y + b, e - b);
      }
    });
    return Status::ok();
  }

  const OpEntry* op_;
  Params params_;
  Float32Fast fast_;
};

}  // namespace

Status unary_check(const infer_node_view& node) {
  const OpEntry* op = lookup_unary(node.op_type);
  if (op == nullptr) return unsupported("no unary kernel for ", node.op_type);
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), op->mask, "input 0"));
  if (std::strcmp(node.op_type, "Celu") == 0 && attr_f(node, "alpha", 1.0) == 0.0)
    return unsupported("Celu alpha must not be 0");
  return Status::ok();
}

Result<KernelPtr> unary_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const OpEntry* op = lookup_unary(n.op_type);
  if (op == nullptr) return internal("no unary kernel for ", n.op_type);
  Params p;
  const std::string name = n.op_type;
  auto f = [&](const char* attr, double fallback) {
    return static_cast<float>(attr_f(n, attr, fallback));
  };
  if (name == "LeakyRelu") p.alpha = f("alpha", 0.01);
  if (name == "Elu" || name == "Celu" || name == "ThresholdedRelu") p.alpha = f("alpha", 1.0);
  if (name == "HardSigmoid") {
    p.alpha = f("alpha", 0.2);
    p.beta = f("beta", 0.5);
  }
  if (name == "Selu") {
    // Selu-1's defaults were the constants rounded to 5 digits.
    const bool v1 = n.opset < 6;
    p.alpha = f("alpha", v1 ? 1.6732 : 1.67326319217681884765625);
    p.gamma = f("gamma", v1 ? 1.0507 : 1.05070102214813232421875);
  }
  if (name == "Shrink") {
    p.alpha = f("lambd", 0.5);
    p.beta = f("bias", 0.0);
  }
  return KernelPtr(new UnaryKernel(op, p));
}

}  // namespace infer::cpu::kernels
