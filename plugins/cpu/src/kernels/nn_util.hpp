// Helpers shared by the nn kernels (normalizations, losses, optimizers...).
#pragma once

#include "../dispatch.hpp"

namespace infer::cpu {

// dispatch() restricted to the four float types, so that kernels whose arithmetic only
// makes sense for floats (exp, sqrt, NaN checks) are instantiated for those alone.
template <typename F>
Status dispatch_float(infer_dtype dtype, const char* what, F&& fn) {
  switch (dtype) {
    case INFER_DTYPE_FLOAT32:
      return fn(Tag<float>{});
    case INFER_DTYPE_FLOAT64:
      return fn(Tag<double>{});
    case INFER_DTYPE_FLOAT16:
      return fn(Tag<Float16>{});
    case INFER_DTYPE_BFLOAT16:
      return fn(Tag<BFloat16>{});
    default:
      return unsupported(what, ": dtype ", dtype_name(dtype),
                         " is not supported (float types only)");
  }
}

// Element i of a float tensor's data as double, and a double rounded to T.
template <typename T>
double load_f64(const T* p, int64_t i) {
  return static_cast<double>(to_compute(p[i]));
}
template <typename T>
T store_f64(double v) {
  return from_compute<T>(static_cast<compute_t<T>>(v));
}

}  // namespace infer::cpu
