#include "prepack.hpp"

#include <cstring>
#include <string_view>

namespace infer::cpu {

bool prepack_weight(const infer_node_view& node, size_t input_index,
                    std::vector<unsigned char>& out) {
  (void)node;
  (void)input_index;
  (void)out;
  return false;
}

}  // namespace infer::cpu
