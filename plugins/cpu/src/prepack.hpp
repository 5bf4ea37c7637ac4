// The cpu plugin's weight-prepacking hook (infer_plugin_api.prepack_constant): constant
// GEMM and convolution weights are packed into the register-tile panels of the selected
// ISA once, when the host compiles a partition, instead of by every kernel it creates.
// Each op family provides the function that packs its weight; the kernel that later sees
// the bytes in infer_value_view.prepacked_data checks their header and size and uses them
// in place (or packs for itself when they do not fit, e.g. after an ISA change).
#pragma once

#include <cstddef>
#include <functional>

#include "infer/plugin_api.h"
#include "simd/gemm.hpp"

namespace infer::cpu {

// Memory for a packed weight: `bytes` (rounded up to a multiple of 64) aligned to 64
// bytes, or nullptr when out of memory. The packers write into it directly, so a weight
// is never held in a temporary copy on its way to the host.
using PackAlloc = std::function<void*(size_t bytes)>;

// Packs constant input `input_index` of `node` into memory from `alloc` and returns it,
// with its size in *size, or returns nullptr (alloc not called) when that input is not a
// weight this plugin packs. `precision` is the session's weight precision (see
// precision.hpp). Throws std::bad_alloc when alloc returns nullptr.
void* prepack_weight(const infer_node_view& node, size_t input_index, const PackAlloc& alloc,
                     size_t* size, simd::GemmPrecision precision);

}  // namespace infer::cpu
