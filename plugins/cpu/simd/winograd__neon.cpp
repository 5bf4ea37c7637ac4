// The Winograd tile transforms compiled for neon: GCC vectors of 4 floats.
#include "winograd_impl.hpp"
#include "winograd_kernels.hpp"

namespace infer::cpu::simd {
namespace {
typedef float Vec __attribute__((vector_size(4 * sizeof(float))));
}  // namespace

void winograd_input_neon(const float* in, int64_t Tp, float* out, int64_t out_stride) {
  winograd_impl::input_transform<Vec, 4>(in, Tp, out, out_stride);
}
void winograd_output_neon(const float* in, int64_t in_stride, int64_t Tp, float bias, float* out) {
  winograd_impl::output_transform<Vec, 4>(in, in_stride, Tp, bias, out);
}

void winograd_gather_neon(const float* R, int64_t TW, float* dst, int64_t Tp) {
  winograd_impl::gather_tile_row(R, TW, dst, Tp);
}
void winograd_scatter_neon(const float* q, int64_t Tp, int64_t OW, const float* res, float* y) {
  winograd_impl::scatter_output_row(q, Tp, OW, res, y);
}

}  // namespace infer::cpu::simd
