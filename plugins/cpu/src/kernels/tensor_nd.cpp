// GatherND and ScatterND: the last dim of `indices` holds index tuples that address
// slices of `data`. GatherND copies the addressed slices out (batch_dims from opset 12);
// ScatterND writes `updates` into a copy of data at them, optionally reducing (add/mul
// from opset 16, max/min from 18). Index tuples are resolved and checked before anything
// is written.
#include <algorithm>
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

// Resolves the index tuples (the last dim of `indices`, of length m) against data dims
// [first, first + m) (m >= 1, checked by the callers) and turns each into the flat element offset
// of its slice, relative to the start of its batch.
Result<std::vector<int64_t>> tuple_offsets(const Tensor& data, const Tensor& indices,
                                           int64_t first) {
  const int64_t m = indices.dims.back();
  CPU_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_indices(indices, "indices"));
  const Dims strides = strides_of(data.dims);
  const size_t tuples = idx.size() / static_cast<size_t>(m);
  std::vector<int64_t> offs(tuples, 0);
  for (size_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < m; ++j) {
      const size_t pos = t * static_cast<size_t>(m) + static_cast<size_t>(j);
      int64_t v = idx[pos];
      CPU_RETURN_IF_ERROR(resolve_index(v, data.dims[first + j], first + j, pos));
      off += v * strides[first + j];
    }
    offs[t] = off;
  }
  return offs;
}

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : b_(batch_dims) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& I = *ctx.input(1);
    const int64_t r = static_cast<int64_t>(X.rank()), q = static_cast<int64_t>(I.rank());
    if (r < 1 || q < 1) return invalid("data and indices must have at least 1 dim");
    if (b_ < 0 || b_ >= std::min(r, q))
      return invalid("batch_dims ", b_, " must be in [0, ", std::min(r, q) - 1, "] for data ",
                     dims_str(X.dims), " and indices ", dims_str(I.dims));
    for (int64_t d = 0; d < b_; ++d)
      if (X.dims[d] != I.dims[d])
        return invalid("batch dim ", d, " differs: data ", dims_str(X.dims), ", indices ",
                       dims_str(I.dims));
    const int64_t m = I.dims.back();
    if (m < 1 || m > r - b_)
      return invalid("the last dim of indices ", dims_str(I.dims), " must be in [1, ", r - b_,
                     "] for data ", dims_str(X.dims), " and batch_dims ", b_);
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> offs, tuple_offsets(X, I, b_));
    Dims out(I.dims.begin(), I.dims.end() - 1);
    out.insert(out.end(), X.dims.begin() + b_ + m, X.dims.end());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (Y->numel() == 0) return Status::ok();
    int64_t batches = 1, slice = 1;
    for (int64_t d = 0; d < b_; ++d) batches *= X.dims[d];
    for (int64_t d = b_ + m; d < r; ++d) slice *= X.dims[d];
    const int64_t batch_size = X.numel() / batches;
    const size_t per_batch = offs.size() / static_cast<size_t>(batches);
    const size_t esize = sdk::dtype_size(X.dtype);
    const auto* x = static_cast<const uint8_t*>(X.data);
    auto* y = static_cast<uint8_t*>(Y->data);
    const size_t chunk = static_cast<size_t>(slice) * esize;
    for (size_t t = 0; t < offs.size(); ++t) {
      const int64_t batch = static_cast<int64_t>(t / per_batch);
      std::memcpy(y + t * chunk, x + static_cast<size_t>(batch * batch_size + offs[t]) * esize,
                  chunk);
    }
    return Status::ok();
  }

 private:
  int64_t b_;
};

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(Reduction reduction) : reduction_(reduction) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& I = *ctx.input(1);
    const Tensor& U = *ctx.input(2);
    const int64_t r = static_cast<int64_t>(X.rank()), q = static_cast<int64_t>(I.rank());
    if (r < 1 || q < 1) return invalid("data and indices must have at least 1 dim");
    const int64_t k = I.dims.back();
    if (k < 1 || k > r)
      return invalid("the last dim of indices ", dims_str(I.dims), " must be in [1, ", r,
                     "] for data ", dims_str(X.dims));
    Dims expect(I.dims.begin(), I.dims.end() - 1);
    expect.insert(expect.end(), X.dims.begin() + k, X.dims.end());
    if (U.dims != expect)
      return invalid("updates ", dims_str(U.dims), " must have shape ", dims_str(expect),
                     " (indices ", dims_str(I.dims), ", data ", dims_str(X.dims), ")");
    if (U.dtype != X.dtype)
      return invalid("updates have dtype ", dtype_name(U.dtype), ", expected ",
                     dtype_name(X.dtype));
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> offs, tuple_offsets(X, I, 0));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (X.bytes()) std::memcpy(Y->data, X.data, X.bytes());
    int64_t slice = 1;
    for (int64_t d = k; d < r; ++d) slice *= X.dims[d];
    if (reduction_ == Reduction::kNone) {
      const size_t esize = sdk::dtype_size(X.dtype), chunk = static_cast<size_t>(slice) * esize;
      const auto* u = static_cast<const uint8_t*>(U.data);
      auto* y = static_cast<uint8_t*>(Y->data);
      if (chunk)
        for (size_t t = 0; t < offs.size(); ++t)
          std::memcpy(y + static_cast<size_t>(offs[t]) * esize, u + t * chunk, chunk);
      return Status::ok();
    }
    return dispatch(
        X.dtype, dtypes::kAllNum, "ScatterND reduction", [&]<typename T>(Tag<T>) -> Status {
          const T* u = U.as<T>();
          T* y = Y->mut<T>();
          for (size_t t = 0; t < offs.size(); ++t)
            for (int64_t e = 0; e < slice; ++e)
              reduce_into(reduction_, y[offs[t] + e], u[static_cast<int64_t>(t) * slice + e]);
          return Status::ok();
        });
  }

 private:
  Reduction reduction_;
};

}  // namespace

Status gather_nd_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  return check_dtype(node, node_input(node, 1), dtypes::kI64, "the indices");
}

Result<KernelPtr> gather_nd_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new GatherNDKernel(n.opset >= 12 ? attr_i(n, "batch_dims", 0) : 0));
}

Status scatter_nd_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kI64, "the indices"));
  CPU_ASSIGN_OR_RETURN(Reduction r, parse_reduction(attr_s(node, "reduction", "none"), node.opset));
  if (r != Reduction::kNone)
    CPU_RETURN_IF_ERROR(
        check_dtype(node, node_input(node, 0), dtypes::kAllNum, "the data with a reduction"));
  return Status::ok();
}

Result<KernelPtr> scatter_nd_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  CPU_ASSIGN_OR_RETURN(Reduction r, parse_reduction(attr_s(n, "reduction", "none"), n.opset));
  return KernelPtr(new ScatterNDKernel(r));
}

}  // namespace infer::cpu::kernels
