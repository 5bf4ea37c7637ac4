// The session's reduced compute precision (infer_host_services.compute_precision) on the
// cpu plugin: which precision the kernels pack their GEMM and convolution weights in (the
// SIMD GEMM computes in the precision of its packed operand), and which nodes that makes
// run narrower than float32, for the capability answer (--explain).
#pragma once

#include "infer/plugin.hpp"
#include "infer/plugin_api.h"
#include "simd/gemm.hpp"

namespace infer::cpu {

// kBfloat16 when the session allows bf16 and the selected ISA has a bf16 GEMM on this CPU
// (AVX-512 with AVX512_BF16: vdpbf16ps); kFloat32 otherwise. fp16 maps to kFloat32: this
// plugin has no float16 arithmetic, so those sessions compute in float32 here.
simd::GemmPrecision weight_precision(const sdk::Host& host);

// INFER_DTYPE_BFLOAT16 when `node` computes its products in bfloat16 under the session's
// precision (a float32 Conv / FusedConv with a constant, non-depthwise weight; a Gemm,
// MatMul, FusedGemm or FusedMatMul with a constant 2-D weight), else
// INFER_DTYPE_UNDEFINED.
infer_dtype node_compute_dtype(const sdk::Host& host, const infer_node_view& node);

}  // namespace infer::cpu
