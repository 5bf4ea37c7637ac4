// Pow(X, Y) with numpy broadcasting. From opset 12 the exponent may have any numeric
// dtype, independent of the base's; the output has the base's dtype. Results follow numpy
// computing in the promoted type and casting back: float32 (or narrower) bases with
// float32 (or narrower) exponents use powf, other float mixes use double; integer bases
// with integer exponents use exact wrapping integer powers; integer bases with float
// exponents use double and truncate (saturating) back to the integer type. A float32 base
// with a single exponent value of 2 is squared with a multiply (numpy's np.square).
#include <cmath>
#include <type_traits>

#include "../node_util.hpp"
#include "float32_binary.hpp"
#include "math_common.hpp"
#include "math_legacy_broadcast.hpp"

namespace infer::cpu::kernels {
namespace {

constexpr uint32_t kBaseMask = dtypes::kAllFloat | dtypes::kI32 | dtypes::kI64;
constexpr uint32_t kExponentMask = dtypes::kAllNum;

// Integer power by squaring, wrapping on overflow. Negative exponents give the integer
// part of the true result (1 or -1 for bases 1 and -1, else 0) instead of numpy's error.
template <typename T, typename E>
T int_pow(T base, E e) {
  uint64_t n;
  if constexpr (std::is_signed_v<E>) {
    if (e < 0) {
      if (base == 1) return 1;
      if (base == -1) return (e & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  n = static_cast<uint64_t>(e);
  T result = 1;
  while (n > 0) {
    if (n & 1) result = math::wrap_mul(result, base);
    base = math::wrap_mul(base, base);
    n >>= 1;
  }
  return result;
}

template <typename TA, typename TB>
TA pow_value(TA a, TB b) {
  if constexpr (is_float_v<TA>) {
    using CA = compute_t<TA>;
    if constexpr (std::is_same_v<CA, float> && std::is_same_v<compute_t<TB>, float>) {
      return from_compute<TA>(std::pow(to_compute(a), to_compute(b)));
    } else {
      const double r =
          std::pow(static_cast<double>(to_compute(a)), static_cast<double>(to_compute(b)));
      return from_compute<TA>(static_cast<CA>(r));
    }
  } else if constexpr (std::is_integral_v<TB>) {
    return int_pow<TA, TB>(a, b);
  } else {
    const double r = std::pow(static_cast<double>(a), static_cast<double>(to_compute(b)));
    return math::saturate_cast<TA>(r);
  }
}

// Whether the one-element exponent t is exactly 2, in whatever numeric dtype it has.
bool exponent_is_two(const Tensor& t) {
  bool two = false;
  (void)dispatch(t.dtype, kExponentMask, "Pow exponent", [&]<typename T>(Tag<T>) -> Status {
    if constexpr (math::in_mask<T>(kExponentMask)) {
      if constexpr (is_float_v<T>)
        two = static_cast<double>(to_compute(t.as<T>()[0])) == 2.0;
      else
        two = t.as<T>()[0] == T(2);
    }
    return Status::ok();
  });
  return two;
}

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(math::LegacyBroadcast legacy) : legacy_(legacy) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* A = ctx.input(0);
    const Tensor* B = ctx.input(1);
    if (A == nullptr || B == nullptr) return invalid("two inputs are required");
    Tensor b = *B;
    math::OutSpec out;
    CPU_RETURN_IF_ERROR(legacy_.apply(*A, &b, &out));
    // A float32 base squared by one exponent value 2 (a power spectrum's |x|^2) is x * x on
    // the SIMD multiply, as numpy computes it (np.power takes np.square for a scalar 2);
    // powf per element was 6 ns each.
    if (A->dtype == INFER_DTYPE_FLOAT32 && out.dims == nullptr && b.numel() == 1 &&
        b.dims.size() <= A->dims.size() && exponent_is_two(b))
      return float32_binary(ctx, *A, *A, simd::BinaryOp::kMul, out);
    return dispatch(A->dtype, kBaseMask, "Pow base", [&]<typename TA>(Tag<TA>) -> Status {
      if constexpr (math::in_mask<TA>(kBaseMask)) {
        return dispatch(b.dtype, kExponentMask, "Pow exponent",
                        [&]<typename TB>(Tag<TB>) -> Status {
                          if constexpr (math::in_mask<TB>(kExponentMask)) {
                            return math::binary_loop<TA, TB, TA>(ctx, *A, b, A->dtype,
                                                                 pow_value<TA, TB>, out);
                          } else {
                            return internal("Pow exponent dtype");
                          }
                        });
      } else {
        return internal("Pow base dtype");
      }
    });
  }

 private:
  math::LegacyBroadcast legacy_;
};

}  // namespace

Status pow_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), kBaseMask, "the base"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), kExponentMask, "the exponent"));
  // Before opset 12 the exponent has the base's dtype.
  const infer_value_view* a = node_input(node, 0);
  const infer_value_view* b = node_input(node, 1);
  if (node.opset < 12 && a->dtype != b->dtype)
    return unsupported("Pow before opset 12 needs the same dtype for base and exponent, got ",
                       dtype_name(a->dtype), " and ", dtype_name(b->dtype));
  return Status::ok();
}

Result<KernelPtr> pow_create(const KernelInit& init) {
  return KernelPtr(new PowKernel(math::LegacyBroadcast::from_node(*init.node)));
}

}  // namespace infer::cpu::kernels
