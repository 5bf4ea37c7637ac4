// The Conv/FusedConv kernels' weight packing, shared with the plugin's prepack hook: the
// hook calls prepack_conv_weight at load time and hands the result back in
// infer_value_view.prepacked_data, which the kernel then uses in place.
#pragma once

#include <cstddef>

#include "../kernel.hpp"
#include "../prepack.hpp"
#include "infer/plugin_api.h"
#include "simd/activation.hpp"
#include "simd/gemm.hpp"

namespace infer::cpu::kernels {

// For a Conv or FusedConv node whose input `input_index` is the constant float32 weight
// W (input 1): packs exactly what the kernel would pack at creation (a blob that
// describes its own algorithm, ISA and dims) into memory from `alloc` (see prepack.hpp)
// and returns it, with its size in *size. Returns nullptr, without calling alloc, for
// any other node or input or a weight that cannot be packed ahead (not constant, unknown
// shape, wrong dtype, inconsistent attributes).
// The blob is packed in `precision` where the chosen algorithm has one (GEMM, Winograd).
void* prepack_conv_weight(const infer_node_view& node, size_t input_index,
                          const PackAlloc& alloc, size_t* size, simd::GemmPrecision precision);

// Whether `node` is a Conv / FusedConv whose constant weight its kernel packs for an
// algorithm that computes in `precision` (not the float32-only depthwise one).
bool conv_packs_gemm_weight(const infer_node_view& node, simd::GemmPrecision precision);

// The Conv kernel for `init` (Conv: no residual input; FusedConv: input 3 is the residual
// Z) ending with `act`.
Result<KernelPtr> conv_create_fused(const KernelInit& init, const simd::Act& act, bool residual_input);

}  // namespace infer::cpu::kernels
