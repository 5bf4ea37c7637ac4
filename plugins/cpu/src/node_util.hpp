// Small read-only helpers over node views, shared by kernels' check and create functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infer/plugin.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace infer::cpu {

inline const infer_value_view* node_input(const infer_node_view& n, size_t i) {
  return i < n.num_inputs ? n.inputs[i] : nullptr;
}
inline const infer_value_view* node_output(const infer_node_view& n, size_t i) {
  return i < n.num_outputs ? n.outputs[i] : nullptr;
}
// Whether `n` is `op` of `domain` ("" is the ONNX domain, also spelled "ai.onnx").
inline bool is_op(const infer_node_view& n, std::string_view domain, std::string_view op) {
  if (n.op_type == nullptr || op != n.op_type) return false;
  std::string_view d = n.domain != nullptr ? n.domain : "";
  if (d == "ai.onnx") d = "";
  return d == domain;
}
inline bool is_const(const infer_value_view* v) { return v != nullptr && v->const_data != nullptr; }
// A constant whose original bytes the host freed because our prepacked form replaces it
// (INFER_PREPACK_REPLACES_CONSTANT): prepacked_data is all there is to read.
inline bool is_prepacked_only(const infer_value_view* v) {
  return v != nullptr && v->const_data == nullptr &&
         v->struct_size >= offsetof(infer_value_view, prepacked_size) + sizeof(size_t) &&
         v->prepacked_data != nullptr;
}

inline int64_t attr_i(const infer_node_view& n, const char* name, int64_t fallback) {
  return sdk::attr_int(&n, name, fallback);
}
inline double attr_f(const infer_node_view& n, const char* name, double fallback) {
  return sdk::attr_float(&n, name, fallback);
}
inline std::string attr_s(const infer_node_view& n, const char* name, const std::string& fallback) {
  return sdk::attr_string(&n, name, fallback);
}
inline std::vector<int64_t> attr_ints(const infer_node_view& n, const char* name) {
  auto s = sdk::attr_ints(&n, name);
  return {s.begin(), s.end()};
}
inline std::vector<double> attr_floats(const infer_node_view& n, const char* name) {
  auto s = sdk::attr_floats(&n, name);
  return {s.begin(), s.end()};
}
inline bool has_attr(const infer_node_view& n, const char* name) {
  return sdk::find_attr(&n, name) != nullptr;
}

// Input count within [lo, hi] (trailing omitted inputs count as absent).
inline Status check_input_count(const infer_node_view& n, size_t lo, size_t hi) {
  size_t count = n.num_inputs;
  while (count > 0 && n.inputs[count - 1] == nullptr) --count;
  if (count < lo || count > hi)
    return unsupported(n.op_type, " takes ", lo, lo == hi ? "" : cat(" to ", hi),
                       hi == 1 ? " input" : " inputs", ", got ", count);
  for (size_t i = 0; i < lo; ++i)
    if (n.inputs[i] == nullptr) return unsupported(n.op_type, " input ", i, " is required");
  return Status::ok();
}

// Rejects a value whose dtype is not in `mask` (a set of dtype_bit()s).
inline Status check_dtype(const infer_node_view& n, const infer_value_view* v, uint32_t mask,
                          const char* what) {
  if (v == nullptr) return Status::ok();
  if (static_cast<uint32_t>(v->dtype) >= 32 || (dtype_bit(v->dtype) & mask) == 0)
    return unsupported(n.op_type, " does not support dtype ", dtype_name(v->dtype), " for ", what);
  return Status::ok();
}

// The constant int list held by input i (int32/int64), for checks that need it at
// compile time. Returns false when the input is absent or not constant.
inline bool const_int_list(const infer_node_view& n, size_t i, std::vector<int64_t>* out) {
  const infer_value_view* v = node_input(n, i);
  if (!is_const(v)) return false;
  size_t esize = v->dtype == INFER_DTYPE_INT64 ? 8 : v->dtype == INFER_DTYPE_INT32 ? 4 : 0;
  if (esize == 0) return false;
  size_t count = v->const_size / esize;
  out->resize(count);
  for (size_t k = 0; k < count; ++k) {
    if (esize == 8) {
      int64_t x;
      std::memcpy(&x, static_cast<const char*>(v->const_data) + k * 8, 8);
      (*out)[k] = x;
    } else {
      int32_t x;
      std::memcpy(&x, static_cast<const char*>(v->const_data) + k * 4, 4);
      (*out)[k] = x;
    }
  }
  return true;
}

}  // namespace infer::cpu
