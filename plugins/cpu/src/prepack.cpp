#include "prepack.hpp"

#include "kernels/conv_prepack.hpp"
#include "kernels/gemm_core.hpp"

namespace infer::cpu {

// Each packer checks the op type, the input index, the dtype and the shapes itself and
// declines (returns nullptr, without allocating) for anything its kernel would not use
// packed.
void* prepack_weight(const infer_node_view& node, size_t input_index, const PackAlloc& alloc,
                     size_t* size, simd::GemmPrecision precision) {
  if (void* p = prepack_gemm_weight(node, input_index, alloc, size, precision)) return p;
  return kernels::prepack_conv_weight(node, input_index, alloc, size, precision);
}

}  // namespace infer::cpu
