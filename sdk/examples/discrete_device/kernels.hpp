// The float32 math of the example device: plain loops, written for reading rather than
// speed. On a real device these would be GPU kernels; here they run on a stream's queue
// thread over the plugin's private memory.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace infer::example {

using Dims = std::vector<int64_t>;

int64_t element_count(const Dims& dims);

// numpy broadcasting: align the shapes on the right; each pair of dims must be equal or
// contain a 1. nullopt when the shapes are incompatible.
std::optional<Dims> broadcast_shapes(const Dims& a, const Dims& b);

enum class BinaryOp { kAdd, kSub, kMul };

// out = a (op) b, with `a` and `b` broadcast to `out_dims`.
void binary_broadcast(BinaryOp op, const float* a, const Dims& a_dims, const float* b,
                      const Dims& b_dims, float* out, const Dims& out_dims);

// y = float(x - zero_point) * scale over n elements (DequantizeLinear, per tensor).
void dequantize(const uint8_t* x, int64_t n, float scale, int32_t zero_point, float* y);
void dequantize(const int8_t* x, int64_t n, float scale, int32_t zero_point, float* y);

// y = max(x, 0) over n elements.
void relu(const float* x, int64_t n, float* y);

// numpy matmul for inputs of rank >= 2: a is [..., M, K], b is [..., K, N] and the batch
// dims (everything before the last two) broadcast; y is [batch..., M, N].
void matmul(const float* a, const Dims& a_dims, const float* b, const Dims& b_dims, float* y,
            const Dims& y_dims);

// ONNX Gemm: y = alpha * op(a) * op(b) + beta * c, where op transposes when asked, y is
// [M, N], and c (nullable) broadcasts to [M, N].
struct GemmParams {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
};
void gemm(const GemmParams& p, const float* a, const float* b, const float* c, const Dims& c_dims,
          float* y);

}  // namespace infer::example
