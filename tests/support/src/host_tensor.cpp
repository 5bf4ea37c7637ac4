#include "infer/test_support/host_tensor.hpp"

#include <cmath>

namespace infer::test {

int64_t HostTensor::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace {

template <typename T>
void append(const std::vector<uint8_t>& bytes, std::vector<double>* out) {
  size_t n = bytes.size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out->push_back(static_cast<double>(v));
  }
}

struct NamedType {
  infer_dtype dtype;
  const char* name;
};
constexpr NamedType kNames[] = {
    {INFER_DTYPE_FLOAT32, "float32"}, {INFER_DTYPE_UINT8, "uint8"},
    {INFER_DTYPE_INT8, "int8"},       {INFER_DTYPE_UINT16, "uint16"},
    {INFER_DTYPE_INT16, "int16"},     {INFER_DTYPE_INT32, "int32"},
    {INFER_DTYPE_INT64, "int64"},     {INFER_DTYPE_STRING, "string"},
    {INFER_DTYPE_BOOL, "bool"},       {INFER_DTYPE_FLOAT16, "float16"},
    {INFER_DTYPE_FLOAT64, "float64"}, {INFER_DTYPE_UINT32, "uint32"},
    {INFER_DTYPE_UINT64, "uint64"},   {INFER_DTYPE_BFLOAT16, "bfloat16"},
};

}  // namespace

float half_to_float(uint16_t h) {
  int sign = (h >> 15) & 1;
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::nanf("") : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::vector<double> HostTensor::to_doubles() const {
  std::vector<double> out;
  switch (dtype) {
    case INFER_DTYPE_FLOAT32:
      append<float>(bytes, &out);
      break;
    case INFER_DTYPE_FLOAT64:
      append<double>(bytes, &out);
      break;
    case INFER_DTYPE_INT8:
      append<int8_t>(bytes, &out);
      break;
    case INFER_DTYPE_UINT8:
      append<uint8_t>(bytes, &out);
      break;
    case INFER_DTYPE_BOOL:
      append<uint8_t>(bytes, &out);
      break;
    case INFER_DTYPE_INT16:
      append<int16_t>(bytes, &out);
      break;
    case INFER_DTYPE_UINT16:
      append<uint16_t>(bytes, &out);
      break;
    case INFER_DTYPE_INT32:
      append<int32_t>(bytes, &out);
      break;
    case INFER_DTYPE_UINT32:
      append<uint32_t>(bytes, &out);
      break;
    case INFER_DTYPE_INT64:
      append<int64_t>(bytes, &out);
      break;
    case INFER_DTYPE_UINT64:
      append<uint64_t>(bytes, &out);
      break;
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16:
      for (uint16_t v : as<uint16_t>())
        out.push_back(dtype == INFER_DTYPE_FLOAT16 ? half_to_float(v) : bfloat16_to_float(v));
      break;
    default:
      break;
  }
  return out;
}

std::string dtype_name(infer_dtype t) {
  for (const auto& n : kNames)
    if (n.dtype == t) return n.name;
  return "dtype(" + std::to_string(static_cast<int>(t)) + ")";
}

infer_dtype dtype_from_name(const std::string& name) {
  for (const auto& n : kNames)
    if (name == n.name) return n.dtype;
  return INFER_DTYPE_UNDEFINED;
}

std::string HostTensor::describe() const {
  std::string s = dtype_name(dtype) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

}  // namespace infer::test
