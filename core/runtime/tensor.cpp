// The public host tensor (infer.hpp) and TensorInfo's shape rendering.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

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

// Zero-filled bytes owned by the returned pointer (one allocation, never null: a
// zero-byte tensor still has storage, so data() tells it from a default tensor).
std::shared_ptr<uint8_t> allocate(size_t bytes) {
  auto block = std::make_shared<std::vector<uint8_t>>(std::max<size_t>(bytes, 1), 0);
  uint8_t* first = block->data();
  return std::shared_ptr<uint8_t>(std::move(block), first);
}

// The checks from_bytes and borrow share; `what` names the function in the message.
Status check_bytes(const char* what, DataType dtype, const std::vector<int64_t>& shape,
                   const void* data, size_t size_bytes) {
  if (!dtype_is_valid(static_cast<int32_t>(dtype)) || dtype == DataType::kString)
    return invalid_argument(std::string(what) + ": dtype " + std::string(dtype_name(dtype)) +
                            " cannot be held in a dense tensor");
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return invalid_argument(std::string(what) + ": dim " + std::to_string(i) + " of " +
                              shape_text(shape) + " is negative");
  const size_t expected = storage_bytes(dtype, count_of(shape));
  if (size_bytes != expected)
    return invalid_argument(std::string(what) + ": " + std::to_string(size_bytes) +
                            " bytes given, " + std::string(dtype_name(dtype)) + " " +
                            shape_text(shape) + " needs " + std::to_string(expected));
  if (size_bytes > 0 && data == nullptr)
    return invalid_argument(std::string(what) + ": data is null");
  return Status::ok();
}

}  // namespace

Tensor Tensor::zeros(DataType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.size_ = storage_bytes(dtype, count_of(shape));
  t.data_ = allocate(t.size_);
  t.shape_ = std::move(shape);
  return t;
}

Result<Tensor> Tensor::from_bytes(DataType dtype, std::vector<int64_t> shape, const void* data,
                                  size_t size_bytes) {
  INFER_RETURN_IF_ERROR(check_bytes("Tensor::from_bytes", dtype, shape, data, size_bytes));
  Tensor t = zeros(dtype, std::move(shape));
  if (size_bytes > 0) std::memcpy(t.mutable_data(), data, size_bytes);
  return t;
}

Result<Tensor> Tensor::borrow(DataType dtype, std::vector<int64_t> shape, const void* data,
                              size_t size_bytes, std::shared_ptr<const void> owner) {
  INFER_RETURN_IF_ERROR(check_bytes("Tensor::borrow", dtype, shape, data, size_bytes));
  if (size_bytes == 0) return zeros(dtype, std::move(shape));  // nothing to borrow
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.size_ = size_bytes;
  // The aliasing constructor: shares the owner's lifetime, points at the caller's bytes.
  // const is dropped here only so that the one pointer type serves both kinds; nothing
  // in the runtime writes a run's inputs.
  t.data_ = std::shared_ptr<uint8_t>(std::const_pointer_cast<void>(std::move(owner)),
                                     static_cast<uint8_t*>(const_cast<void*>(data)));
  t.borrowed_ = true;
  return t;
}

int64_t Tensor::element_count() const { return data_ ? count_of(shape_) : 0; }

Tensor Tensor::clone() const {
  Tensor t;
  t.dtype_ = dtype_;
  t.shape_ = shape_;
  t.size_ = size_;
  if (data_) {
    t.data_ = allocate(size_);
    if (size_ > 0) std::memcpy(t.data_.get(), data_.get(), size_);
  }
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
