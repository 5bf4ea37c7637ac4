// Elementwise binary ops with numpy broadcasting: arithmetic (Add, Sub, Mul, Div, Pow),
// variadic Max/Min, comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual) and
// logic (And, Or, Xor). Integer arithmetic wraps around like the hardware does instead
// of being undefined, and integer division by zero is an error.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "broadcast.hpp"

namespace infer::cpu::kernels {
namespace {

enum class Op {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  kEq,
  kLt,
  kGt,
  kLe,
  kGe,
  kAnd,
  kOr,
  kXor
};

struct OpName {
  const char* name;
  Op op;
};
constexpr OpName kOps[] = {
    {"Add", Op::kAdd}, {"Sub", Op::kSub},    {"Mul", Op::kMul},        {"Div", Op::kDiv},
    {"Pow", Op::kPow}, {"Max", Op::kMax},    {"Min", Op::kMin},        {"Equal", Op::kEq},
    {"Less", Op::kLt}, {"Greater", Op::kGt}, {"LessOrEqual", Op::kLe}, {"GreaterOrEqual", Op::kGe},
    {"And", Op::kAnd}, {"Or", Op::kOr},      {"Xor", Op::kXor}};

bool lookup(const char* name, Op* op) {
  for (const auto& o : kOps)
    if (std::strcmp(o.name, name) == 0) {
      *op = o.op;
      return true;
    }
  return false;
}

bool is_compare(Op op) { return op >= Op::kEq && op <= Op::kGe; }
bool is_logic(Op op) { return op >= Op::kAnd; }
bool is_variadic(Op op) { return op == Op::kMax || op == Op::kMin; }

// Wrapping integer arithmetic through the unsigned type (signed overflow is UB in C++).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <typename T>
T safe_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // b != 0 was checked before the loop; MIN / -1 overflows, so wrap it.
    if (b == -1) return wrap_sub<T>(0, a);
    return a / b;
  } else {
    return a / b;
  }
}

// Integer power by squaring, wrapping; negative exponents truncate toward zero.
template <typename T>
T int_pow(T base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  T result = 1;
  while (e > 0) {
    if (e & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    e >>= 1;
  }
  return result;
}

template <typename TA, typename TB>
TA pow_value(TA a, TB b) {
  if constexpr (std::is_floating_point_v<TA>) {
    if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float>) {
      return std::pow(a, b);
    } else {
      return static_cast<TA>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  } else if constexpr (std::is_integral_v<TB>) {
    return int_pow<TA>(a, static_cast<int64_t>(b));
  } else {
    double r = std::pow(static_cast<double>(a), static_cast<double>(b));
    if (!(r >= static_cast<double>(std::numeric_limits<TA>::lowest())))
      return std::numeric_limits<TA>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<TA>::max()))
      return std::numeric_limits<TA>::max();
    return static_cast<TA>(r);
  }
}

// The loop every binary op shares: broadcast plan, output allocation and the segment
// walk, with the common stride patterns specialized so the compiler vectorizes them.
template <typename TA, typename TB, typename TO, typename F>
Status binary_loop(KernelContext& ctx, const Tensor& A, const Tensor& B, infer_dtype out_dtype, F f,
                   Tensor* into = nullptr) {
  BroadcastPlan p;
  Tensor* Y = into;
  if (into != nullptr) {
    CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan_to({&A.dims, &B.dims}, into->dims));
  } else {
    CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan({&A.dims, &B.dims}));
    CPU_ASSIGN_OR_RETURN(Y, ctx.allocate_output(0, out_dtype, p.out_dims));
  }
  const TA* a = A.as<TA>();
  const TB* b = B.as<TB>();
  TO* y = Y->mut<TO>();
  ctx.parallel_for(static_cast<size_t>(p.total), 16384, [&](size_t begin, size_t end) {
    for_each_segment(p, static_cast<int64_t>(begin), static_cast<int64_t>(end),
                     [&](int64_t o, const int64_t* offs, int64_t len) {
                       const TA* pa = a + offs[0];
                       const TB* pb = b + offs[1];
                       TO* py = y + o;
                       const bool sa = p.inner_step[0] != 0, sb = p.inner_step[1] != 0;
                       if (sa && sb) {
                         for (int64_t i = 0; i < len; ++i) py[i] = f(pa[i], pb[i]);
                       } else if (sa) {
                         const TB bv = *pb;
                         for (int64_t i = 0; i < len; ++i) py[i] = f(pa[i], bv);
                       } else if (sb) {
                         const TA av = *pa;
                         for (int64_t i = 0; i < len; ++i) py[i] = f(av, pb[i]);
                       } else {
                         const TO v = f(*pa, *pb);
                         for (int64_t i = 0; i < len; ++i) py[i] = v;
                       }
                     });
  });
  return Status::ok();
}

template <typename T>
Status arith(KernelContext& ctx, Op op, const Tensor& A, const Tensor& B, Tensor* into) {
  const infer_dtype dt = A.dtype;
  switch (op) {
    case Op::kAdd:
      return binary_loop<T, T, T>(
          ctx, A, B, dt, [](T a, T b) { return wrap_add(a, b); }, into);
    case Op::kSub:
      return binary_loop<T, T, T>(
          ctx, A, B, dt, [](T a, T b) { return wrap_sub(a, b); }, into);
    case Op::kMul:
      return binary_loop<T, T, T>(
          ctx, A, B, dt, [](T a, T b) { return wrap_mul(a, b); }, into);
    case Op::kDiv:
      if constexpr (std::is_integral_v<T>) {
        const T* b = B.as<T>();
        for (int64_t i = 0, n = B.numel(); i < n; ++i)
          if (b[i] == 0) return invalid("integer division by zero (divisor element ", i, ")");
      }
      return binary_loop<T, T, T>(
          ctx, A, B, dt, [](T a, T b) { return safe_div(a, b); }, into);
    case Op::kMax:
      return binary_loop<T, T, T>(
          ctx, A, B, dt,
          [](T a, T b) {
            if constexpr (std::is_floating_point_v<T>)
              if (std::isnan(a) || std::isnan(b)) return a + b;
            return a < b ? b : a;
          },
          into);
    case Op::kMin:
      return binary_loop<T, T, T>(
          ctx, A, B, dt,
          [](T a, T b) {
            if constexpr (std::is_floating_point_v<T>)
              if (std::isnan(a) || std::isnan(b)) return a + b;
            return b < a ? b : a;
          },
          into);
    default:
      return internal("bad arithmetic op");
  }
}

template <typename T>
Status compare(KernelContext& ctx, Op op, const Tensor& A, const Tensor& B) {
  constexpr infer_dtype kBool = INFER_DTYPE_BOOL;
  switch (op) {
    case Op::kEq:
      return binary_loop<T, T, uint8_t>(ctx, A, B, kBool,
                                        [](T a, T b) -> uint8_t { return a == b; });
    case Op::kLt:
      return binary_loop<T, T, uint8_t>(ctx, A, B, kBool,
                                        [](T a, T b) -> uint8_t { return a < b; });
    case Op::kGt:
      return binary_loop<T, T, uint8_t>(ctx, A, B, kBool,
                                        [](T a, T b) -> uint8_t { return a > b; });
    case Op::kLe:
      return binary_loop<T, T, uint8_t>(ctx, A, B, kBool,
                                        [](T a, T b) -> uint8_t { return a <= b; });
    case Op::kGe:
      return binary_loop<T, T, uint8_t>(ctx, A, B, kBool,
                                        [](T a, T b) -> uint8_t { return a >= b; });
    default:
      return internal("bad comparison op");
  }
}

template <typename TA>
Status power(KernelContext& ctx, const Tensor& A, const Tensor& B) {
  switch (B.dtype) {
    case INFER_DTYPE_FLOAT32:
      return binary_loop<TA, float, TA>(ctx, A, B, A.dtype, pow_value<TA, float>);
    case INFER_DTYPE_INT32:
      return binary_loop<TA, int32_t, TA>(ctx, A, B, A.dtype, pow_value<TA, int32_t>);
    case INFER_DTYPE_INT64:
      return binary_loop<TA, int64_t, TA>(ctx, A, B, A.dtype, pow_value<TA, int64_t>);
    default:
      return invalid("Pow exponent dtype ", dtype_name(B.dtype), " not supported");
  }
}

class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(Op op) : op_(op) {}

  Status run(KernelContext& ctx) const override {
    if (is_variadic(op_)) return run_variadic(ctx);
    const Tensor* A = ctx.input(0);
    const Tensor* B = ctx.input(1);
    if (A == nullptr || B == nullptr) return invalid("two inputs are required");
    if (op_ == Op::kPow) {
      switch (A->dtype) {
        case INFER_DTYPE_FLOAT32:
          return power<float>(ctx, *A, *B);
        case INFER_DTYPE_INT32:
          return power<int32_t>(ctx, *A, *B);
        case INFER_DTYPE_INT64:
          return power<int64_t>(ctx, *A, *B);
        default:
          return unsupported_dtype(*A);
      }
    }
    if (A->dtype != B->dtype)
      return invalid("input dtypes differ: ", dtype_name(A->dtype), " and ", dtype_name(B->dtype));
    if (is_logic(op_)) {
      if (A->dtype != INFER_DTYPE_BOOL) return unsupported_dtype(*A);
      switch (op_) {
        case Op::kAnd:
          return binary_loop<uint8_t, uint8_t, uint8_t>(
              ctx, *A, *B, A->dtype, [](uint8_t a, uint8_t b) -> uint8_t { return a && b; });
        case Op::kOr:
          return binary_loop<uint8_t, uint8_t, uint8_t>(
              ctx, *A, *B, A->dtype, [](uint8_t a, uint8_t b) -> uint8_t { return a || b; });
        default:
          return binary_loop<uint8_t, uint8_t, uint8_t>(
              ctx, *A, *B, A->dtype,
              [](uint8_t a, uint8_t b) -> uint8_t { return (a != 0) != (b != 0); });
      }
    }
    if (is_compare(op_)) {
      switch (A->dtype) {
        case INFER_DTYPE_FLOAT32:
          return compare<float>(ctx, op_, *A, *B);
        case INFER_DTYPE_INT32:
          return compare<int32_t>(ctx, op_, *A, *B);
        case INFER_DTYPE_INT64:
          return compare<int64_t>(ctx, op_, *A, *B);
        case INFER_DTYPE_BOOL:
          if (op_ == Op::kEq) return compare<uint8_t>(ctx, op_, *A, *B);
          return unsupported_dtype(*A);
        default:
          return unsupported_dtype(*A);
      }
    }
    return dispatch_arith(ctx, *A, *B, nullptr);
  }

 private:
  Status dispatch_arith(KernelContext& ctx, const Tensor& A, const Tensor& B, Tensor* into) const {
    switch (A.dtype) {
      case INFER_DTYPE_FLOAT32:
        return arith<float>(ctx, op_, A, B, into);
      case INFER_DTYPE_INT32:
        return arith<int32_t>(ctx, op_, A, B, into);
      case INFER_DTYPE_INT64:
        return arith<int64_t>(ctx, op_, A, B, into);
      default:
        return unsupported_dtype(A);
    }
  }

  static Status unsupported_dtype(const Tensor& t) {
    return invalid("dtype ", dtype_name(t.dtype), " not supported");
  }

  // Max/Min over 1..N inputs: the output takes the broadcast of all shapes, starts as
  // op(in0, in1) written straight into it, and folds the other inputs in place.
  Status run_variadic(KernelContext& ctx) const {
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.input(i) != nullptr) ins.push_back(ctx.input(i));
    if (ins.empty()) return invalid("at least one input is required");
    std::vector<const Dims*> shapes;
    for (const Tensor* t : ins) {
      if (t->dtype != ins[0]->dtype)
        return invalid("input dtypes differ: ", dtype_name(ins[0]->dtype), " and ",
                       dtype_name(t->dtype));
      shapes.push_back(&t->dims);
    }
    CPU_ASSIGN_OR_RETURN(Dims out_dims, broadcast_shapes(shapes));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, ins[0]->dtype, out_dims));
    // Folding in place reads and writes the same output element, which is safe.
    const Tensor* second = ins.size() > 1 ? ins[1] : ins[0];
    CPU_RETURN_IF_ERROR(dispatch_arith(ctx, *ins[0], *second, Y));
    for (size_t i = 2; i < ins.size(); ++i)
      CPU_RETURN_IF_ERROR(dispatch_arith(ctx, *Y, *ins[i], Y));
    return Status::ok();
  }

  Op op_;
};

}  // namespace

Status binary_check(const infer_node_view& node) {
  Op op;
  if (!lookup(node.op_type, &op)) return unsupported("no binary kernel for ", node.op_type);
  if (is_variadic(op)) {
    CPU_RETURN_IF_ERROR(check_input_count(node, 1, 64));
  } else {
    CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  }
  const infer_value_view* a = node_input(node, 0);
  if (op == Op::kPow) {
    return check_dtype(node, node_input(node, 1), dtypes::kNum, "the exponent");
  }
  for (size_t i = 1; i < node.num_inputs; ++i) {
    const infer_value_view* b = node.inputs[i];
    if (a && b && a->dtype != b->dtype)
      return unsupported(node.op_type, " inputs have different dtypes ", dtype_name(a->dtype),
                         " and ", dtype_name(b->dtype));
  }
  if (op != Op::kEq && !is_logic(op) && a && a->dtype == INFER_DTYPE_BOOL)
    return unsupported(node.op_type, " does not support dtype bool");
  return Status::ok();
}

Result<KernelPtr> binary_create(const KernelInit& init) {
  Op op;
  if (!lookup(init.node->op_type, &op))
    return internal("no binary kernel for ", init.node->op_type);
  return KernelPtr(new BinaryKernel(op));
}

}  // namespace infer::cpu::kernels
