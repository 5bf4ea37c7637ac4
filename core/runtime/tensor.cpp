// The public host tensor (infer.hpp) and TensorInfo's shape rendering.
#include <cstring>

#include "infer/infer.hpp"

namespace infer {
namespace {

// Negative dims describe no elements; validation reports them, construction just
// allocates nothing for them.
int64_t count_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d < 0 ? 0 : d;
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

Tensor Tensor::zeros(DataType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.bytes_ = std::make_shared<std::vector<uint8_t>>(storage_bytes(dtype, count_of(shape)), 0);
  t.shape_ = std::move(shape);
  return t;
}

Result<Tensor> Tensor::from_bytes(DataType dtype, std::vector<int64_t> shape, const void* data,
                                  size_t size_bytes) {
  if (!dtype_is_valid(static_cast<int32_t>(dtype)) || dtype == DataType::kString)
    return invalid_argument("Tensor::from_bytes: dtype " + std::string(dtype_name(dtype)) +
                            " cannot be held in a dense tensor");
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return invalid_argument("Tensor::from_bytes: dim " + std::to_string(i) + " of " +
                              shape_text(shape) + " is negative");
  const size_t expected = storage_bytes(dtype, count_of(shape));
  if (size_bytes != expected)
    return invalid_argument("Tensor::from_bytes: " + std::to_string(size_bytes) + " bytes given, " +
                            std::string(dtype_name(dtype)) + " " + shape_text(shape) + " needs " +
                            std::to_string(expected));
  if (size_bytes > 0 && data == nullptr)
    return invalid_argument("Tensor::from_bytes: data is null");
  Tensor t = zeros(dtype, std::move(shape));
  if (size_bytes > 0) std::memcpy(t.mutable_data(), data, size_bytes);
  return t;
}

int64_t Tensor::element_count() const { return bytes_ ? count_of(shape_) : 0; }

Tensor Tensor::clone() const {
  Tensor t;
  t.dtype_ = dtype_;
  t.shape_ = shape_;
  if (bytes_) t.bytes_ = std::make_shared<std::vector<uint8_t>>(*bytes_);
  return t;
}

std::string TensorInfo::shape_string() const {
  if (!rank_known) return "(any shape)";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    if (dims[i] >= 0)
      s += std::to_string(dims[i]);
    else if (i < dim_params.size() && !dim_params[i].empty())
      s += dim_params[i];
    else
      s += "?";
  }
  return s + "]";
}

}  // namespace infer
