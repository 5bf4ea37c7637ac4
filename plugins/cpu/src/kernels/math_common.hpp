// Helpers shared by the elementwise math kernels: the C++ type <-> dtype mapping used to
// instantiate only the (op, dtype) pairs a kernel accepts, wrapping integer arithmetic,
// a saturating float-to-integer conversion, and the broadcasting loop every binary and
// variadic op runs.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "broadcast.hpp"

namespace infer::cpu::kernels::math {

// The dtype of a C++ element type (the inverse of dispatch()).
template <typename T>
constexpr infer_dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return INFER_DTYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, double>) return INFER_DTYPE_FLOAT64;
  else if constexpr (std::is_same_v<T, Float16>) return INFER_DTYPE_FLOAT16;
  else if constexpr (std::is_same_v<T, BFloat16>) return INFER_DTYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, bool>) return INFER_DTYPE_BOOL;
  else if constexpr (std::is_same_v<T, int8_t>) return INFER_DTYPE_INT8;
  else if constexpr (std::is_same_v<T, int16_t>) return INFER_DTYPE_INT16;
  else if constexpr (std::is_same_v<T, int32_t>) return INFER_DTYPE_INT32;
  else if constexpr (std::is_same_v<T, int64_t>) return INFER_DTYPE_INT64;
  else if constexpr (std::is_same_v<T, uint8_t>) return INFER_DTYPE_UINT8;
  else if constexpr (std::is_same_v<T, uint16_t>) return INFER_DTYPE_UINT16;
  else if constexpr (std::is_same_v<T, uint32_t>) return INFER_DTYPE_UINT32;
  else if constexpr (std::is_same_v<T, uint64_t>) return INFER_DTYPE_UINT64;
  else return INFER_DTYPE_UNDEFINED;
}

// Whether T's dtype is in `mask`, at compile time, so that `if constexpr` can skip
// instantiating an op for element types it does not accept.
template <typename T>
constexpr bool in_mask(uint32_t mask) {
  return (dtype_bit(dtype_of<T>()) & mask) != 0;
}

constexpr uint32_t kFloatSigned = dtypes::kAllFloat | dtypes::kSignedInt;

// Wrapping integer arithmetic through the unsigned type (signed overflow is UB in C++,
// and small types would otherwise be promoted to int).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // uint16 * uint16 promotes to int and can overflow it: multiply in a type at least as
    // wide as unsigned int.
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// Converts a floating-point value to integer type D, truncating toward zero and
// saturating out-of-range values (NaN becomes 0), so the conversion is never UB.
template <typename D, typename V>
D saturate_cast(V v) {
  if (std::isnan(v)) return 0;
  const V t = std::trunc(v);
  if (t <= static_cast<V>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
  // max() may not be representable in V; compare against 2^digits instead.
  const V limit = std::ldexp(V(1), std::numeric_limits<D>::digits);
  if (t >= limit) return std::numeric_limits<D>::max();
  return static_cast<D>(t);
}

// Where a broadcasting loop writes. By default it allocates output 0 with the numpy
// broadcast of the inputs' shapes; `dims` imposes the output shape instead (each input
// must broadcast to it: unidirectional broadcasting), and `into` writes into an existing
// tensor (whose dims are the output shape), which may be one of the inputs.
struct OutSpec {
  const Dims* dims = nullptr;
  Tensor* into = nullptr;
};

// y = f(a, b) elementwise with broadcasting. The common stride patterns are separate
// loops so the compiler vectorizes them. Reading and writing the same tensor (into == A)
// is safe: each element is read before it is written, at the same index.
template <typename TA, typename TB, typename TO, typename F>
Status binary_loop(KernelContext& ctx, const Tensor& A, const Tensor& B, infer_dtype out_dtype, F f,
                   OutSpec out = {}) {
  BroadcastPlan p;
  Tensor* Y = out.into;
  if (Y != nullptr) {
    CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan_to({&A.dims, &B.dims}, Y->dims));
  } else {
    if (out.dims != nullptr) {
      CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan_to({&A.dims, &B.dims}, *out.dims));
    } else {
      CPU_ASSIGN_OR_RETURN(p, make_broadcast_plan({&A.dims, &B.dims}));
    }
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

// Copies `A` into `Y` broadcasting it to Y's shape (the first step of a variadic fold).
template <typename T>
Status broadcast_copy(KernelContext& ctx, const Tensor& A, Tensor* Y) {
  CPU_ASSIGN_OR_RETURN(BroadcastPlan p, make_broadcast_plan_to({&A.dims}, Y->dims));
  const T* a = A.as<T>();
  T* y = Y->mut<T>();
  ctx.parallel_for(static_cast<size_t>(p.total), 16384, [&](size_t begin, size_t end) {
    for_each_segment(p, static_cast<int64_t>(begin), static_cast<int64_t>(end),
                     [&](int64_t o, const int64_t* offs, int64_t len) {
                       const T* pa = a + offs[0];
                       T* py = y + o;
                       if (p.inner_step[0] != 0) {
                         for (int64_t i = 0; i < len; ++i) py[i] = pa[i];
                       } else {
                         for (int64_t i = 0; i < len; ++i) py[i] = *pa;
                       }
                     });
  });
  return Status::ok();
}

}  // namespace infer::cpu::kernels::math
