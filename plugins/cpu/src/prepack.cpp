#include "prepack.hpp"

#include "kernels/conv_prepack.hpp"
#include "kernels/gemm_core.hpp"

namespace infer::cpu {

// Each packer checks the op type, the input index, the dtype and the shapes itself and
// declines (returns false) for anything its kernel would not use packed.
bool prepack_weight(const infer_node_view& node, size_t input_index,
                    std::vector<unsigned char>& out) {
  return prepack_gemm_weight(node, input_index, out) ||
         kernels::prepack_conv_weight(node, input_index, out);
}

}  // namespace infer::cpu
