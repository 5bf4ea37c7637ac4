// Immutable constant data of the IR (see graph.hpp).
#include <utility>

#include "ir/graph.hpp"

namespace infer::ir {
namespace {

// An empty tensor (a Resize's empty roi) is still a constant: plugins tell constants by a
// non-null data pointer (infer_value_view.const_data), so empty owned storage points here.
const uint8_t kEmptyTensorAnchor = 0;

const void* owned_data(const std::vector<uint8_t>& owned) {
  return owned.empty() ? static_cast<const void*>(&kEmptyTensorAnchor) : owned.data();
}

}  // namespace

TensorData::TensorData(DataType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes)
    : dtype_(dtype), dims_(std::move(dims)), owned_(std::move(bytes)) {
  data_ = owned_data(owned_);
  size_ = owned_.size();
}

TensorData::TensorData(DataType dtype, std::vector<int64_t> dims, const void* data, size_t size,
                       std::shared_ptr<const void> keeper)
    : dtype_(dtype), dims_(std::move(dims)), keeper_(std::move(keeper)), data_(data), size_(size) {}

// A copy of a tensor that owns its bytes must point at the copy's own buffer; the
// implicit copy would have kept pointing at the source's. Borrowed bytes (a keeper, or
// none when the creator guarantees their lifetime) are shared as they are.
TensorData::TensorData(const TensorData& other)
    : dtype_(other.dtype_),
      dims_(other.dims_),
      owned_(other.owned_),
      keeper_(other.keeper_),
      data_(other.keeper_ || other.owned_.empty() ? other.data_ : owned_data(owned_)),
      size_(other.size_) {}

TensorData& TensorData::operator=(const TensorData& other) {
  if (this != &other) {
    TensorData copy(other);
    *this = std::move(copy);
  }
  return *this;
}

// Moving a std::vector keeps its heap buffer, so data_ stays valid for owned bytes too.
TensorData::TensorData(TensorData&& other) noexcept
    : dtype_(other.dtype_),
      dims_(std::move(other.dims_)),
      owned_(std::move(other.owned_)),
      keeper_(std::move(other.keeper_)),
      data_(other.data_),
      size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

TensorData& TensorData::operator=(TensorData&& other) noexcept {
  if (this != &other) {
    dtype_ = other.dtype_;
    dims_ = std::move(other.dims_);
    owned_ = std::move(other.owned_);
    keeper_ = std::move(other.keeper_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

int64_t TensorData::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

}  // namespace infer::ir
