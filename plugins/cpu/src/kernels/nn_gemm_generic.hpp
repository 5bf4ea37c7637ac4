// The matrix product for the dtypes sgemm does not cover (float64, float16, bfloat16 and
// the integers), used by Gemm and MatMul. It is a plain loop: these dtypes are rare in
// models, and correctness matters more than speed here. Floats accumulate in double
// (16-bit floats are decoded first); integers accumulate in uint64, which wraps exactly
// as the integer type would.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../dispatch.hpp"

namespace infer::cpu {

template <typename T>
using gemm_acc_t = std::conditional_t<is_float_v<T>, double, uint64_t>;

template <typename T>
gemm_acc_t<T> gemm_load(T v) {
  if constexpr (is_float_v<T>)
    return static_cast<double>(to_compute(v));
  else
    return static_cast<uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(v));
}

// out[i * N + j] = sum_k A(i, k) * B(k, j), with A(i, k) = A[i * a_rs + k * a_cs] and
// B(k, j) = B[k * b_rs + j * b_cs].
template <typename T>
void naive_gemm(int64_t M, int64_t N, int64_t K, const T* A, int64_t a_rs, int64_t a_cs, const T* B,
                int64_t b_rs, int64_t b_cs, gemm_acc_t<T>* out) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      gemm_acc_t<T> acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += gemm_load(A[i * a_rs + k * a_cs]) * gemm_load(B[k * b_rs + j * b_cs]);
      out[i * N + j] = acc;
    }
  }
}

// Stores an accumulator as T (integers truncate modulo 2^bits).
template <typename T>
T gemm_store(gemm_acc_t<T> v) {
  if constexpr (is_float_v<T>)
    return from_compute<T>(static_cast<compute_t<T>>(v));
  else
    return static_cast<T>(v);
}

}  // namespace infer::cpu
