#include "precision.hpp"

#include "host_threads.hpp"
#include "kernels/conv_prepack.hpp"
#include "kernels/gemm_core.hpp"

namespace infer::cpu {

simd::GemmPrecision weight_precision(const sdk::Host& host) {
  if (host.compute_precision() == INFER_PRECISION_BF16 &&
      simd::gemm_precision_supported(kernel_isa(), simd::GemmPrecision::kBfloat16))
    return simd::GemmPrecision::kBfloat16;
  return simd::GemmPrecision::kFloat32;
}

infer_dtype node_compute_dtype(const sdk::Host& host, const infer_node_view& node) {
  const simd::GemmPrecision p = weight_precision(host);
  if (p != simd::GemmPrecision::kBfloat16) return INFER_DTYPE_UNDEFINED;
  if (gemm_weight_packable(node) || kernels::conv_packs_gemm_weight(node, p))
    return INFER_DTYPE_BFLOAT16;
  return INFER_DTYPE_UNDEFINED;
}

}  // namespace infer::cpu
