// Dispatch of the vectorized elementwise and row kernels (vec.hpp, softmax.hpp,
// layernorm.hpp, activation.hpp) to the table of the requested ISA.
#include <algorithm>

#include "layernorm.hpp"
#include "softmax.hpp"
#include "vec_kernels.hpp"

namespace infer::cpu::simd {
namespace detail {

const VecKernels& vec_kernels(Isa isa) {
  if (!isa_supported(isa)) return vec_kernels_scalar();
  switch (isa) {
#if defined(__x86_64__) || defined(_M_X64)
    case Isa::kAvx2: return vec_kernels_avx2();
    case Isa::kAvx512: return vec_kernels_avx512();
#endif
#if defined(__aarch64__)
    case Isa::kNeon: return vec_kernels_neon();
#endif
    default: return vec_kernels_scalar();
  }
}

}  // namespace detail

void vec_unary(Isa isa, UnaryOp op, const float* x, float* y, size_t n) {
  if (n > 0) detail::vec_kernels(isa).unary(op, x, y, n);
}

void vec_binary(Isa isa, BinaryOp op, const float* a, const float* b, float* y, size_t n) {
  if (n > 0) detail::vec_kernels(isa).binary(op, a, b, y, n);
}

void vec_binary_scalar(Isa isa, BinaryOp op, const float* a, float b, float* y, size_t n,
                       bool scalar_first) {
  if (n > 0) detail::vec_kernels(isa).binary_scalar(op, a, b, y, n, scalar_first);
}

float vec_sum(Isa isa, const float* x, size_t n) {
  return n > 0 ? detail::vec_kernels(isa).sum(x, n) : 0.0f;
}

float vec_max(Isa isa, const float* x, size_t n) {
  return n > 0 ? detail::vec_kernels(isa).max(x, n) : -__builtin_inff();
}

void vec_scale_shift(Isa isa, const float* x, float s, float t, float* y, size_t n) {
  if (n > 0) detail::vec_kernels(isa).scale_shift(x, s, t, y, n);
}

void softmax_row(Isa isa, const float* x, float* y, size_t n, bool log) {
  if (n > 0) detail::vec_kernels(isa).softmax_row(x, y, n, log);
}

void softmax_rows(Isa isa, const Threads& threads, const float* x, float* y, size_t rows,
                  size_t n, bool log) {
  if (rows == 0 || n == 0) return;
  const detail::VecKernels& k = detail::vec_kernels(isa);
  // About 16K elements per task: a row of 128 is too little work to hand to a thread.
  const size_t grain = std::max<size_t>(1, 16384 / n);
  threads.run(rows, grain, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) k.softmax_row(x + r * n, y + r * n, n, log);
  });
}

void layernorm_row(Isa isa, const float* x, float* y, size_t n, const float* gamma,
                   const float* beta, float eps, float* mean_out, float* inv_std_out) {
  if (n > 0) detail::vec_kernels(isa).layernorm_row(x, y, n, gamma, beta, eps, mean_out, inv_std_out);
}

}  // namespace infer::cpu::simd
