// A tensor in host memory: dtype, dims and raw bytes. What tests feed to executables and
// get back from them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "infer/plugin_api.h"

namespace infer::test {

struct HostTensor {
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;

  int64_t element_count() const;

  template <typename T>
  static HostTensor make(infer_dtype dtype, std::vector<int64_t> dims,
                         const std::vector<T>& values) {
    HostTensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  static HostTensor f32(std::vector<int64_t> dims, const std::vector<float>& v) {
    return make(INFER_DTYPE_FLOAT32, std::move(dims), v);
  }
  static HostTensor i64(std::vector<int64_t> dims, const std::vector<int64_t>& v) {
    return make(INFER_DTYPE_INT64, std::move(dims), v);
  }
  static HostTensor i32(std::vector<int64_t> dims, const std::vector<int32_t>& v) {
    return make(INFER_DTYPE_INT32, std::move(dims), v);
  }
  static HostTensor boolean(std::vector<int64_t> dims, const std::vector<uint8_t>& v) {
    return make(INFER_DTYPE_BOOL, std::move(dims), v);
  }

  // The elements reinterpreted as T (sizeof(T) must be the dtype's size).
  template <typename T>
  std::vector<T> as() const {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
  // Every element converted to double (float16/bfloat16 decoded exactly; bool as 0/1).
  std::vector<double> to_doubles() const;
  // "float32[2,3]"
  std::string describe() const;
};

// Lower-case dtype name ("float32", "int64", "bfloat16"); "dtype(N)" for others.
std::string dtype_name(infer_dtype t);
// Inverse of dtype_name; INFER_DTYPE_UNDEFINED when unknown.
infer_dtype dtype_from_name(const std::string& name);

// Exact IEEE half / bfloat16 decoding, and round-to-nearest-even encoding.
float half_to_float(uint16_t h);
float bfloat16_to_float(uint16_t b);

}  // namespace infer::test
