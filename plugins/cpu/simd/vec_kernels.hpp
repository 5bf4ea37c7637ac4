// Internal: the table of one ISA's vectorized elementwise/row kernels (vec.hpp,
// softmax.hpp, layernorm.hpp, activation.hpp dispatch through it). Each variant file
// (vec_scalar.cpp, vec__avx2.cpp, vec__avx512.cpp, vec__neon.cpp) instantiates
// vec_impl.hpp for its register type and returns its table; only call a variant's
// function when isa_supported() said yes.
#pragma once

#include <cstddef>

#include "activation.hpp"
#include "isa.hpp"
#include "vec.hpp"

namespace infer::cpu::simd::detail {

struct VecKernels {
  void (*unary)(UnaryOp op, const float* x, float* y, size_t n);
  void (*activation)(const Act& act, float* x, size_t n);
  void (*binary)(BinaryOp op, const float* a, const float* b, float* y, size_t n);
  void (*binary_scalar)(BinaryOp op, const float* a, float b, float* y, size_t n, bool scalar_first);
  float (*sum)(const float* x, size_t n);
  float (*max)(const float* x, size_t n);
  void (*scale_shift)(const float* x, float s, float t, float* y, size_t n);
  void (*softmax_row)(const float* x, float* y, size_t n, bool log);
  void (*layernorm_row)(const float* x, float* y, size_t n, const float* gamma, const float* beta,
                        float eps, float* mean_out, float* inv_std_out);
};

const VecKernels& vec_kernels_scalar();
#if defined(__x86_64__) || defined(_M_X64)
const VecKernels& vec_kernels_avx2();
const VecKernels& vec_kernels_avx512();
#endif
#if defined(__aarch64__)
const VecKernels& vec_kernels_neon();
#endif

// The table for `isa` (the scalar one for an ISA this build or CPU lacks).
const VecKernels& vec_kernels(Isa isa);

}  // namespace infer::cpu::simd::detail
