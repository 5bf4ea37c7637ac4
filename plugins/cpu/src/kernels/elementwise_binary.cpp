// Elementwise binary arithmetic with numpy broadcasting: Add, Sub, Mul, Div, Mod,
// BitShift, PRelu, and the logic ops And, Or, Xor. Every numeric dtype is handled;
// float16/bfloat16 compute in float32 and round once on store. Integer arithmetic wraps
// around like the hardware does instead of being undefined, and integer division or
// modulo by zero is an error (never a SIGFPE). Pow, comparisons and the variadic ops
// live in math_pow.cpp, math_compare.cpp and math_variadic.cpp.
// float32 Add/Sub/Mul/Div run the SIMD library's vector loops on each contiguous segment
// of the broadcast (same shape, a scalar, a per-row bias along the last axis or a
// per-channel bias over a plane all become segments of one of two forms).
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../host_threads.hpp"
#include "../node_util.hpp"
#include "broadcast.hpp"
#include "float32_binary.hpp"
#include "math_common.hpp"
#include "math_legacy_broadcast.hpp"
#include "simd/vec.hpp"

namespace infer::cpu::kernels {
namespace {

using math::binary_loop;
using math::in_mask;
using math::OutSpec;

enum class ElementwiseOp { kAdd, kSub, kMul, kDiv, kMod, kBitShift, kPRelu, kAnd, kOr, kXor };

constexpr uint32_t kNumMask = dtypes::kAllNum;

struct ElementwiseOpInfo {
  const char* name;
  ElementwiseOp op;
  uint32_t mask;  // dtypes of input 0 the kernel accepts
};
constexpr ElementwiseOpInfo kBinaryOps[] = {
    {"Add", ElementwiseOp::kAdd, kNumMask},
    {"Sub", ElementwiseOp::kSub, kNumMask},
    {"Mul", ElementwiseOp::kMul, kNumMask},
    {"Div", ElementwiseOp::kDiv, kNumMask},
    {"Mod", ElementwiseOp::kMod, kNumMask},
    {"BitShift", ElementwiseOp::kBitShift, dtypes::kUnsignedInt},
    {"PRelu", ElementwiseOp::kPRelu, kNumMask},
    {"And", ElementwiseOp::kAnd, dtypes::kBool},
    {"Or", ElementwiseOp::kOr, dtypes::kBool},
    {"Xor", ElementwiseOp::kXor, dtypes::kBool},
};

const ElementwiseOpInfo* lookup_binary(const char* name) {
  for (const auto& o : kBinaryOps)
    if (std::strcmp(o.name, name) == 0) return &o;
  return nullptr;
}

// Lifts a computation on compute_t<T> to storage type T (float16/bfloat16 are widened to
// float and rounded back; other types pass through).
template <typename T, typename F>
auto lifted(F f) {
  return [f](T a, T b) -> T { return from_compute<T>(f(to_compute(a), to_compute(b))); };
}

// Integer division truncating toward zero. The divisor is non-zero (checked before the
// loop); MIN / -1 overflows, so it wraps like the hardware would without trapping.
template <typename T>
T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return math::wrap_sub<T>(0, a);
  }
  return static_cast<T>(a / b);
}

// Integer remainder: with fmod, the sign of the dividend (C's %); without, the sign of
// the divisor (Python's %). MIN % -1 would trap, and is 0.
template <typename T>
T int_mod(T a, T b, bool fmod) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    (void)fmod;
    return static_cast<T>(a % b);
  }
}

template <typename C>
C float_mod(C a, C b, bool fmod) {
  C r = std::fmod(a, b);
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

// y = a op b for float32 with numpy broadcasting: the broadcast plan collapses the shapes
// so every innermost segment is contiguous in each input or repeats one of its values.
Status float32_binary(KernelContext& ctx, const Tensor& A, const Tensor& B, simd::BinaryOp op,
                      const math::OutSpec& out) {
  BroadcastPlan p;
  Tensor* Y = out.into;
  if (Y != nullptr) {
    CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan_to({&A.dims, &B.dims}, Y->dims));
  } else if (out.dims != nullptr) {
    CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan_to({&A.dims, &B.dims}, *out.dims));
  } else {
    CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan({&A.dims, &B.dims}));
  }
  if (Y == nullptr) {
    CPU_ASSIGN_OR_RETURN(Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, p.out_dims));
  }
  const float* a = A.as<float>();
  const float* b = B.as<float>();
  float* y = Y->mut<float>();
  const simd::Isa isa = kernel_isa();
  ctx.parallel_for(static_cast<size_t>(p.total), 16384, [&](size_t begin, size_t end) {
    for_each_segment(p, static_cast<int64_t>(begin), static_cast<int64_t>(end),
                     [&](int64_t o, const int64_t* offs, int64_t len) {
                       const float* pa = a + offs[0];
                       const float* pb = b + offs[1];
                       float* py = y + o;
                       const size_t n = static_cast<size_t>(len);
                       const int64_t sa = p.inner_step[0], sb = p.inner_step[1];
                       if (sa == 1 && sb == 1) {
                         simd::vec_binary(isa, op, pa, pb, py, n);
                       } else if (sa == 1 && sb == 0) {
                         simd::vec_binary_scalar(isa, op, pa, *pb, py, n, false);
                       } else if (sa == 0 && sb == 1) {
                         simd::vec_binary_scalar(isa, op, pb, *pa, py, n, true);
                       } else {
                         // Both repeat one value (or an unexpected step): element by element.
                         for (size_t i = 0; i < n; ++i) {
                           const float u = pa[static_cast<int64_t>(i) * sa];
                           simd::vec_binary_scalar(isa, op, &u, pb[static_cast<int64_t>(i) * sb],
                                                   py + i, 1, false);
                         }
                       }
                     });
  });
  return Status::ok();
}

namespace {

template <typename T>
Status check_nonzero_divisor(const Tensor& B, const char* what) {
  if constexpr (std::is_integral_v<T>) {
    const T* b = B.as<T>();
    for (int64_t i = 0, n = B.numel(); i < n; ++i)
      if (b[i] == 0) return invalid("integer ", what, " by zero (divisor element ", i, ")");
  }
  return Status::ok();
}

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const ElementwiseOpInfo* op, math::LegacyBroadcast legacy, bool fmod,
               bool shift_left)
      : op_(op), legacy_(legacy), fmod_(fmod), shift_left_(shift_left) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* A = ctx.input(0);
    const Tensor* B = ctx.input(1);
    if (A == nullptr || B == nullptr) return invalid("two inputs are required");
    if (A->dtype != B->dtype)
      return invalid("input dtypes differ: ", dtype_name(A->dtype), " and ", dtype_name(B->dtype));
    Tensor b = *B;
    OutSpec out;
    CPU_RETURN_IF_ERROR(legacy_.apply(*A, &b, &out));
    // PRelu's slope broadcasts to X, whose shape the output keeps.
    if (op_->op == ElementwiseOp::kPRelu) out.dims = &A->dims;
    return dispatch(A->dtype, op_->mask, op_->name, [&]<typename T>(Tag<T>) -> Status {
      return run_typed<T>(ctx, *A, b, out);
    });
  }

 private:
  template <typename T>
  Status run_typed(KernelContext& ctx, const Tensor& A, const Tensor& B, OutSpec out) const {
    const infer_dtype dt = A.dtype;
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, float>) {
      switch (op_->op) {
        case ElementwiseOp::kAdd:
          return float32_binary(ctx, A, B, simd::BinaryOp::kAdd, out);
        case ElementwiseOp::kSub:
          return float32_binary(ctx, A, B, simd::BinaryOp::kSub, out);
        case ElementwiseOp::kMul:
          return float32_binary(ctx, A, B, simd::BinaryOp::kMul, out);
        case ElementwiseOp::kDiv:
          return float32_binary(ctx, A, B, simd::BinaryOp::kDiv, out);
        default: break;
      }
    }
    if constexpr (in_mask<T>(kNumMask)) {
      switch (op_->op) {
        case ElementwiseOp::kAdd:
          return binary_loop<T, T, T>(
              ctx, A, B, dt, lifted<T>([](C a, C b) { return math::wrap_add(a, b); }), out);
        case ElementwiseOp::kSub:
          return binary_loop<T, T, T>(
              ctx, A, B, dt, lifted<T>([](C a, C b) { return math::wrap_sub(a, b); }), out);
        case ElementwiseOp::kMul:
          return binary_loop<T, T, T>(
              ctx, A, B, dt, lifted<T>([](C a, C b) { return math::wrap_mul(a, b); }), out);
        case ElementwiseOp::kDiv:
          if constexpr (std::is_integral_v<T>) {
            CPU_RETURN_IF_ERROR(check_nonzero_divisor<T>(B, "division"));
            return binary_loop<T, T, T>(ctx, A, B, dt, int_div<T>, out);
          } else {
            return binary_loop<T, T, T>(ctx, A, B, dt, lifted<T>([](C a, C b) { return a / b; }),
                                        out);
          }
        case ElementwiseOp::kMod: {
          const bool fmod = fmod_;
          if constexpr (std::is_integral_v<T>) {
            CPU_RETURN_IF_ERROR(check_nonzero_divisor<T>(B, "modulo"));
            return binary_loop<T, T, T>(
                ctx, A, B, dt, [fmod](T a, T b) { return int_mod(a, b, fmod); }, out);
          } else {
            return binary_loop<T, T, T>(
                ctx, A, B, dt, lifted<T>([fmod](C a, C b) { return float_mod(a, b, fmod); }),
                out);
          }
        }
        case ElementwiseOp::kPRelu:
          return binary_loop<T, T, T>(
              ctx, A, B, dt, lifted<T>([](C x, C slope) -> C {
                if constexpr (std::is_unsigned_v<C>) {
                  (void)slope;
                  return x;
                } else {
                  return x < C(0) ? static_cast<C>(slope * x) : x;
                }
              }),
              out);
        case ElementwiseOp::kBitShift:
          if constexpr (std::is_unsigned_v<T>) {
            constexpr T kBits = sizeof(T) * 8;
            if (shift_left_)
              return binary_loop<T, T, T>(
                  ctx, A, B, dt,
                  [](T a, T s) { return s >= kBits ? T(0) : static_cast<T>(a << s); }, out);
            return binary_loop<T, T, T>(
                ctx, A, B, dt, [](T a, T s) { return s >= kBits ? T(0) : static_cast<T>(a >> s); },
                out);
          }
          break;
        default:
          break;
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      // Bools are read as bytes: any non-zero byte is true.
      switch (op_->op) {
        case ElementwiseOp::kAnd:
          return binary_loop<uint8_t, uint8_t, uint8_t>(
              ctx, A, B, dt, [](uint8_t a, uint8_t b) -> uint8_t { return a && b; }, out);
        case ElementwiseOp::kOr:
          return binary_loop<uint8_t, uint8_t, uint8_t>(
              ctx, A, B, dt, [](uint8_t a, uint8_t b) -> uint8_t { return a || b; }, out);
        case ElementwiseOp::kXor:
          return binary_loop<uint8_t, uint8_t, uint8_t>(
              ctx, A, B, dt, [](uint8_t a, uint8_t b) -> uint8_t { return (a != 0) != (b != 0); },
              out);
        default:
          break;
      }
    }
    return invalid(op_->name, " does not support dtype ", dtype_name(A.dtype));
  }

  const ElementwiseOpInfo* op_;
  math::LegacyBroadcast legacy_;
  bool fmod_;
  bool shift_left_;
};

}  // namespace

Status binary_check(const infer_node_view& node) {
  const ElementwiseOpInfo* op = lookup_binary(node.op_type);
  if (op == nullptr) return unsupported("no binary kernel for ", node.op_type);
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  const infer_value_view* a = node_input(node, 0);
  const infer_value_view* b = node_input(node, 1);
  CPU_RETURN_IF_ERROR(check_dtype(node, a, op->mask, "input 0"));
  if (a && b && a->dtype != b->dtype)
    return unsupported(node.op_type, " inputs have different dtypes ", dtype_name(a->dtype),
                       " and ", dtype_name(b->dtype));
  if (op->op == ElementwiseOp::kBitShift) {
    const std::string dir = attr_s(node, "direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      return unsupported("BitShift direction must be \"LEFT\" or \"RIGHT\", got \"", dir, "\"");
  }
  if (op->op == ElementwiseOp::kMod) {
    const int64_t fmod = attr_i(node, "fmod", 0);
    if (fmod != 0 && fmod != 1) return unsupported("Mod fmod must be 0 or 1, got ", fmod);
  }
  return Status::ok();
}

Result<KernelPtr> binary_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const ElementwiseOpInfo* op = lookup_binary(n.op_type);
  if (op == nullptr) return internal("no binary kernel for ", n.op_type);
  return KernelPtr(new BinaryKernel(op, math::LegacyBroadcast::from_node(n),
                                    attr_i(n, "fmod", 0) != 0,
                                    attr_s(n, "direction", "") == "LEFT"));
}

}  // namespace infer::cpu::kernels
