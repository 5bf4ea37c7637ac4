// The cpu plugin's weight-prepacking hook (infer_plugin_api.prepack_constant): constant
// GEMM and convolution weights are packed into the register-tile panels of the selected
// ISA once, when the host compiles a partition, instead of by every kernel it creates.
// Each op family provides the function that packs its weight; the kernel that later sees
// the bytes in infer_value_view.prepacked_data checks their header and size and uses them
// in place (or packs for itself when they do not fit, e.g. after an ISA change).
#pragma once

#include <cstddef>
#include <vector>

#include "infer/plugin_api.h"

namespace infer::cpu {

// Fills `out` with the packed form of constant input `input_index` of `node` and returns
// true, or returns false when that input is not a weight this plugin packs. Throws only
// std::bad_alloc.
bool prepack_weight(const infer_node_view& node, size_t input_index, std::vector<unsigned char>& out);

}  // namespace infer::cpu
