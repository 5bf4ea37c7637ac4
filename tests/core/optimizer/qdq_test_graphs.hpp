// Small QDQ graph pieces shared by the qdq_* pass tests: per-tensor DequantizeLinear and
// QuantizeLinear nodes with their constants.
#pragma once

#include <string>

#include "graph_builder.hpp"

namespace infer::optimizer::testing {

// Declares `scale` (float32) and `zero` (uint8 or int8, per `dtype`) constants.
inline void qparams(GraphBuilder& b, const std::string& prefix, float scale, int zero,
                    DataType dtype = DataType::kUInt8) {
  b.f32(prefix + "_scale", {}, {scale});
  if (dtype == DataType::kUInt8)
    b.constant_of<uint8_t>(prefix + "_zero", dtype, {}, {static_cast<uint8_t>(zero)});
  else
    b.constant_of<int8_t>(prefix + "_zero", dtype, {}, {static_cast<int8_t>(zero)});
}

// `q` (8-bit, per qparams `p`) -> DequantizeLinear -> `f` (float32, shape `dims`).
inline void dequantize(GraphBuilder& b, const std::string& q, const std::string& p,
                       const std::string& f, const std::vector<int64_t>& dims) {
  b.typed(f, DataType::kFloat32, dims);
  b.node("dq_" + f, "DequantizeLinear", {q, p + "_scale", p + "_zero"}, {f});
}

// `f` -> QuantizeLinear (qparams `p`) -> `q` (8-bit `dtype`, shape `dims`).
inline void quantize(GraphBuilder& b, const std::string& f, const std::string& p,
                     const std::string& q, const std::vector<int64_t>& dims,
                     DataType dtype = DataType::kUInt8) {
  b.typed(q, dtype, dims);
  b.node("q_" + q, "QuantizeLinear", {f, p + "_scale", p + "_zero"}, {q});
}

}  // namespace infer::optimizer::testing
