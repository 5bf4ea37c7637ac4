// Placeholder: a plain, correct implementation of the gemm.hpp contract so that the
// library links while the packed microkernels are written. The packed form is a small
// header followed by the operand in row-major order.
#include "gemm.hpp"

#include <cstring>

namespace infer::cpu::simd {
namespace {

struct PackHeader {
  uint32_t magic;
  uint32_t isa;
  int64_t rows, cols;
};
constexpr uint32_t kMagic = 0x504b4731;  // "PKG1"
constexpr size_t kHeader = 64;

size_t packed_bytes(int64_t r, int64_t c) {
  return kHeader + sizeof(float) * static_cast<size_t>(r) * static_cast<size_t>(c);
}

void pack(Isa isa, int64_t r, int64_t c, const GemmOperand& X, void* dst) {
  PackHeader h{kMagic, static_cast<uint32_t>(isa), r, c};
  std::memcpy(dst, &h, sizeof h);
  float* out = reinterpret_cast<float*>(static_cast<char*>(dst) + kHeader);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) out[i * c + j] = X.data[i * X.row_stride + j * X.col_stride];
}

// Element (i, j) of an operand of `cols` columns.
inline float at(const GemmOperand& X, int64_t cols, int64_t i, int64_t j) {
  if (X.packed != nullptr)
    return reinterpret_cast<const float*>(static_cast<const char*>(X.packed) + kHeader)[i * cols + j];
  return X.data[i * X.row_stride + j * X.col_stride];
}

}  // namespace

size_t packed_a_bytes(Isa, int64_t M, int64_t K) { return packed_bytes(M, K); }
size_t packed_b_bytes(Isa, int64_t K, int64_t N) { return packed_bytes(K, N); }
void pack_a(Isa isa, int64_t M, int64_t K, const GemmOperand& A, void* dst) { pack(isa, M, K, A, dst); }
void pack_b(Isa isa, int64_t K, int64_t N, const GemmOperand& B, void* dst) { pack(isa, K, N, B, dst); }

void sgemm(Isa isa, const Threads& threads, int64_t M, int64_t N, int64_t K, float alpha,
           const GemmOperand& A, const GemmOperand& B, float beta, float* C, int64_t ldc,
           const GemmEpilogue& ep) {
  threads.run(static_cast<size_t>(M), 1, [&](size_t b, size_t e) {
    for (int64_t i = static_cast<int64_t>(b); i < static_cast<int64_t>(e); ++i) {
      float* c = C + i * ldc;
      for (int64_t j = 0; j < N; ++j) {
        float acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += at(A, K, i, k) * at(B, N, k, j);
        float v = alpha * acc + (beta != 0.0f ? beta * c[j] : 0.0f);
        if (ep.bias_mode == GemmEpilogue::Bias::kPerRow) v += ep.bias[i];
        if (ep.bias_mode == GemmEpilogue::Bias::kPerCol) v += ep.bias[j];
        if (ep.residual != nullptr) v += ep.residual[i * ep.ldr + j];
        c[j] = v;
      }
      apply_activation(isa, ep.act, c, static_cast<size_t>(N));
    }
  });
}

}  // namespace infer::cpu::simd
