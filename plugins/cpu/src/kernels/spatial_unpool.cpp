// MaxUnpool: the partial inverse of MaxPool. The output is zero except where the
// indices, which count over the whole flattened unpooled tensor as MaxPool's Indices do,
// receive the input values. The optional output_shape input (opset 11) enlarges the
// output, as in the ONNX reference. Every index is checked before anything is written.
#include <cstring>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

constexpr uint32_t kUnpoolTypes = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;

class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(WindowAttrs attrs) : attrs_(std::move(attrs)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& I = *ctx.input(1);
    const Tensor* shape = ctx.input(2);
    if (X.rank() < 3)
      return invalid("input X must have at least 3 dims (N, C, spatial...), got ",
                     dims_str(X.dims));
    if (I.dtype != INFER_DTYPE_INT64) return invalid("indices I must be int64");
    if (I.dims != X.dims)
      return invalid("indices I have shape ", dims_str(I.dims), ", expected X's shape ",
                     dims_str(X.dims));
    const size_t r = X.rank() - 2;
    if (attrs_.kernel_shape.size() != r)
      return invalid("kernel_shape has ", attrs_.kernel_shape.size(), " values, expected ", r,
                     " for X ", dims_str(X.dims));
    if (!attrs_.strides.empty() && attrs_.strides.size() != r)
      return invalid("strides has ", attrs_.strides.size(), " values, expected ", r);
    if (!attrs_.pads.empty() && attrs_.pads.size() != 2 * r)
      return invalid("pads has ", attrs_.pads.size(), " values, expected ", 2 * r);
    // The indices address the inferred output, (in - 1) * stride + kernel - pads per
    // spatial dim (pads ignored when output_shape is given); a given output_shape, which
    // may not be smaller, receives that result in its leading corner.
    Dims inferred = {X.dims[0], X.dims[1]};
    for (size_t i = 0; i < r; ++i) {
      const int64_t s = attrs_.strides.empty() ? 1 : attrs_.strides[i];
      const int64_t pads = (shape != nullptr || attrs_.pads.empty())
                               ? 0
                               : attrs_.pads[i] + attrs_.pads[i + r];
      const int64_t out = (X.dims[i + 2] - 1) * s + attrs_.kernel_shape[i] - pads;
      if (out <= 0) return invalid("spatial dim ", i, " gives an empty output (", out, ")");
      inferred.push_back(out);
    }
    Dims y_dims = inferred;
    if (shape != nullptr) {
      CPU_ASSIGN_OR_RETURN(y_dims, read_int_list(*shape, "output_shape"));
      if (y_dims.size() != X.rank())
        return invalid("output_shape has ", y_dims.size(), " values, expected ", X.rank());
      for (size_t d = 0; d < y_dims.size(); ++d)
        if (y_dims[d] < inferred[d])
          return invalid("output_shape ", dims_str(y_dims), " is smaller than the inferred shape ",
                         dims_str(inferred));
    }
    const int64_t inf_n = sdk::element_count(inferred.data(), inferred.size());
    const int64_t* idx = I.as<int64_t>();
    const int64_t n = X.numel();
    for (int64_t i = 0; i < n; ++i)
      if (idx[i] < 0 || idx[i] >= inf_n)
        return invalid("index ", idx[i], " (element ", i, " of I) out of range for the unpooled ",
                       "shape ", dims_str(inferred), " of ", inf_n, " elements");
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, y_dims));
    if (Y->numel() > 0) std::memset(Y->data, 0, Y->bytes());
    // Maps a flat index of the inferred shape to the output's flat index.
    const Dims y_strides = strides_of(y_dims);
    auto place = [&](int64_t flat) {
      int64_t off = 0;
      for (size_t d = inferred.size(); d-- > 0;) {
        off += (flat % inferred[d]) * y_strides[d];
        flat /= inferred[d];
      }
      return off;
    };
    return dispatch(X.dtype, kUnpoolTypes, "MaxUnpool input", [&]<typename T>(Tag<T>) -> Status {
      if constexpr (in_mask<T>(kUnpoolTypes)) {
        const T* x = X.as<T>();
        T* y = Y->mut<T>();
        for (int64_t i = 0; i < n; ++i) y[place(idx[i])] = x[i];
      }
      return Status::ok();
    });
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

Status max_unpool_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), kUnpoolTypes, "X"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kI64, "I"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), dtypes::kI64, "output_shape"));
  WindowAttrs a = read_window_attrs(node);
  if (a.kernel_shape.empty()) return unsupported("MaxUnpool requires kernel_shape");
  const infer_value_view* x = node_input(node, 0);
  if (x->rank >= 0 && x->rank - 2 != static_cast<int64_t>(a.kernel_shape.size()))
    return unsupported("MaxUnpool kernel_shape has ", a.kernel_shape.size(),
                       " values for input rank ", x->rank);
  return check_window_attrs(node, a, static_cast<int64_t>(a.kernel_shape.size()));
}

Result<KernelPtr> max_unpool_create(const KernelInit& init) {
  return KernelPtr(new MaxUnpoolKernel(read_window_attrs(*init.node)));
}

}  // namespace infer::cpu::kernels
