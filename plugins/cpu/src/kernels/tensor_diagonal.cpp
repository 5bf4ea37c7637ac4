// Ops defined by the diagonals of the last two dims: Trilu (keeps the upper or lower
// triangle above/below diagonal k, zeroes the rest) and EyeLike (ones on diagonal k of a
// 2-D tensor). Zero is the all-zero bit pattern in every supported dtype, so both work
// on bytes.
#include <algorithm>
#include <cstring>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(bool upper) : upper_(upper) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() < 2) return invalid("input ", dims_str(X.dims), " must have at least 2 dims");
    int64_t k = 0;
    if (const Tensor* K = ctx.input(1)) {
      if (K->numel() != 1 || K->dtype != INFER_DTYPE_INT64)
        return invalid("k must be an int64 scalar, got ", dtype_name(K->dtype), " ",
                       dims_str(K->dims));
      k = *K->as<int64_t>();
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (Y->numel() == 0) return Status::ok();
    const int64_t rows = X.dims[X.rank() - 2], cols = X.dims[X.rank() - 1];
    // Clamping k keeps i + k from overflowing without changing which elements are kept.
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    const size_t esize = sdk::dtype_size(X.dtype), row_bytes = static_cast<size_t>(cols) * esize;
    const int64_t mats = X.numel() / (rows * cols);
    const auto* x = static_cast<const uint8_t*>(X.data);
    auto* y = static_cast<uint8_t*>(Y->data);
    std::memset(y, 0, Y->bytes());
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        // Upper keeps columns j >= i + k, lower keeps j <= i + k.
        const int64_t b = upper_ ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t e = upper_ ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        const size_t row = static_cast<size_t>(m * rows + i) * row_bytes;
        if (e > b)
          std::memcpy(y + row + static_cast<size_t>(b) * esize,
                      x + row + static_cast<size_t>(b) * esize, static_cast<size_t>(e - b) * esize);
      }
    }
    return Status::ok();
  }

 private:
  bool upper_;
};

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(infer_dtype dtype, int64_t k) : dtype_(dtype), k_(k) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() != 2) return invalid("input ", dims_str(X.dims), " must be 2-D");
    const infer_dtype dt = dtype_ == INFER_DTYPE_UNDEFINED ? X.dtype : dtype_;
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, dt, X.dims));
    if (Y->numel() == 0) return Status::ok();
    std::memset(Y->data, 0, Y->bytes());
    const int64_t rows = X.dims[0], cols = X.dims[1];
    return dispatch(dt, dtypes::kAny, "EyeLike", [&]<typename T>(Tag<T>) -> Status {
      T one;
      if constexpr (std::is_same_v<T, bool>)
        one = true;
      else
        one = from_compute<T>(compute_t<T>(1));
      T* y = Y->mut<T>();
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + k_;
        if (j >= 0 && j < cols) y[i * cols + j] = one;
      }
      return Status::ok();
    });
  }

 private:
  infer_dtype dtype_;
  int64_t k_;
};

}  // namespace

Status trilu_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 2));
  return check_dtype(node, node_input(node, 1), dtypes::kI64, "k");
}

Result<KernelPtr> trilu_create(const KernelInit& init) {
  return KernelPtr(new TriluKernel(attr_i(*init.node, "upper", 1) != 0));
}

Status eye_like_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  if (has_attr(node, "dtype")) {
    const int64_t dt = attr_i(node, "dtype", 0);
    if (dt <= 0 || dt >= 32 || (dtype_bit(static_cast<infer_dtype>(dt)) & dtypes::kAny) == 0)
      return unsupported("EyeLike dtype ", dt, " is not supported");
  }
  const int64_t k = attr_i(node, "k", 0);
  if (k < -(int64_t{1} << 62) || k > (int64_t{1} << 62))
    return unsupported("EyeLike k ", k, " is out of range");
  return Status::ok();
}

Result<KernelPtr> eye_like_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const auto dt = static_cast<infer_dtype>(attr_i(n, "dtype", INFER_DTYPE_UNDEFINED));
  return KernelPtr(new EyeLikeKernel(dt, attr_i(n, "k", 0)));
}

}  // namespace infer::cpu::kernels
