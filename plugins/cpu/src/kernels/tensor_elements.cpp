// GatherElements, ScatterElements (and its opset 9-10 name Scatter): element-wise
// indexing along one axis. For every position p of `indices`, the data position is p with
// its `axis` coordinate replaced by indices[p]. Every index and the shapes are checked
// before anything is written, so bad input fails the run without touching memory out of
// bounds.
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

// Validates shapes and indices and returns, for every element of `indices` (row-major),
// the flat offset of the data element it addresses.
Result<std::vector<int64_t>> element_offsets(const Tensor& data, const Tensor& indices,
                                             int64_t axis_attr) {
  const int64_t rank = static_cast<int64_t>(data.rank());
  if (rank == 0) return invalid("data must have at least 1 dim");
  CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank));
  if (static_cast<int64_t>(indices.rank()) != rank)
    return invalid("indices ", dims_str(indices.dims), " must have the rank of data ",
                   dims_str(data.dims));
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.dims[d] > data.dims[d])
      return invalid("indices ", dims_str(indices.dims), " exceed data ", dims_str(data.dims),
                     " on axis ", d);
  CPU_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_indices(indices, "indices"));
  const int64_t dim = data.dims[axis];
  for (size_t i = 0; i < idx.size(); ++i) CPU_RETURN_IF_ERROR(resolve_index(idx[i], dim, axis, i));
  const Dims strides = strides_of(data.dims);
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) off += (d == axis ? idx[i] : coord[d]) * strides[d];
    idx[i] = off;
    for (int64_t d = rank; d-- > 0;) {
      if (++coord[d] < indices.dims[d]) break;
      coord[d] = 0;
    }
  }
  return idx;
}

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& I = *ctx.input(1);
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> offs, element_offsets(X, I, axis_));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, I.dims));
    return dispatch_bytes(sdk::dtype_size(X.dtype), [&]<typename U>(Tag<U>) -> Status {
      const U* x = X.as<U>();
      U* y = Y->mut<U>();
      for (size_t i = 0; i < offs.size(); ++i) y[i] = x[offs[i]];
      return Status::ok();
    });
  }

 private:
  int64_t axis_;
};

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(int64_t axis, Reduction reduction) : axis_(axis), reduction_(reduction) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& I = *ctx.input(1);
    const Tensor& U = *ctx.input(2);
    if (U.dims != I.dims)
      return invalid("updates ", dims_str(U.dims), " must have the shape of indices ",
                     dims_str(I.dims));
    if (U.dtype != X.dtype)
      return invalid("updates have dtype ", dtype_name(U.dtype), ", expected ",
                     dtype_name(X.dtype));
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> offs, element_offsets(X, I, axis_));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (X.bytes()) std::memcpy(Y->data, X.data, X.bytes());
    if (reduction_ == Reduction::kNone) {
      return dispatch_bytes(sdk::dtype_size(X.dtype), [&]<typename E>(Tag<E>) -> Status {
        const E* u = U.as<E>();
        E* y = Y->mut<E>();
        for (size_t i = 0; i < offs.size(); ++i) y[offs[i]] = u[i];
        return Status::ok();
      });
    }
    return dispatch(X.dtype, dtypes::kAllNum, "ScatterElements reduction",
                    [&]<typename T>(Tag<T>) -> Status {
                      const T* u = U.as<T>();
                      T* y = Y->mut<T>();
                      for (size_t i = 0; i < offs.size(); ++i)
                        reduce_into(reduction_, y[offs[i]], u[i]);
                      return Status::ok();
                    });
  }

 private:
  int64_t axis_;
  Reduction reduction_;
};

Status check_indices_input(const infer_node_view& node) {
  return check_dtype(node, node_input(node, 1), dtypes::kInts, "the indices");
}

}  // namespace

Status gather_elements_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  return check_indices_input(node);
}

Result<KernelPtr> gather_elements_create(const KernelInit& init) {
  return KernelPtr(new GatherElementsKernel(attr_i(*init.node, "axis", 0)));
}

// Scatter (9-10) and ScatterElements (11+) share this family; only ScatterElements has
// the reduction attribute (from opset 16).
Status scatter_elements_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 3));
  CPU_RETURN_IF_ERROR(check_indices_input(node));
  const std::string red = attr_s(node, "reduction", "none");
  CPU_ASSIGN_OR_RETURN(Reduction r, parse_reduction(red, node.opset));
  if (r != Reduction::kNone)
    CPU_RETURN_IF_ERROR(
        check_dtype(node, node_input(node, 0), dtypes::kAllNum, "the data with a reduction"));
  return Status::ok();
}

Result<KernelPtr> scatter_elements_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  CPU_ASSIGN_OR_RETURN(Reduction r, parse_reduction(attr_s(n, "reduction", "none"), n.opset));
  return KernelPtr(new ScatterElementsKernel(attr_i(n, "axis", 0), r));
}

}  // namespace infer::cpu::kernels
