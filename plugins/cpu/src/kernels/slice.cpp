// Slice: starts/ends/axes are attributes before opset 10 and inputs (with steps) from
// opset 10. Negative indices count from the end and out-of-range ones are clamped,
// exactly as ONNX specifies for positive and negative steps.
#include <algorithm>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "strided_copy.hpp"

namespace infer::cpu::kernels {
namespace {

class SliceKernel final : public Kernel {
 public:
  SliceKernel(bool from_inputs, Dims starts, Dims ends, Dims axes)
      : from_inputs_(from_inputs),
        starts_(std::move(starts)),
        ends_(std::move(ends)),
        axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(X.rank());
    Dims starts = starts_, ends = ends_, axes = axes_, steps;
    if (from_inputs_) {
      CPU_ASSIGN_OR_RETURN(starts, read_int_list(*ctx.input(1), "starts"));
      CPU_ASSIGN_OR_RETURN(ends, read_int_list(*ctx.input(2), "ends"));
      if (ctx.input(3) != nullptr) {
        CPU_ASSIGN_OR_RETURN(axes, read_int_list(*ctx.input(3), "axes"));
      } else {
        axes.clear();
      }
      if (ctx.input(4) != nullptr) {
        CPU_ASSIGN_OR_RETURN(steps, read_int_list(*ctx.input(4), "steps"));
      }
    }
    if (starts.size() != ends.size())
      return invalid("starts ", dims_str(starts), " and ends ", dims_str(ends),
                     " differ in length");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size())
      return invalid("starts, ends, axes and steps must have the same length");

    Dims out = X.dims, first(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
    std::vector<char> seen(static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < starts.size(); ++i) {
      CPU_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(axes[i], rank, "axes value"));
      if (seen[ax]) return invalid("axes ", dims_str(axes), " repeat axis ", axes[i]);
      seen[ax] = 1;
      const int64_t dim = X.dims[ax], s = steps[i];
      if (s == 0) return invalid("steps value 0 for axis ", axes[i]);
      int64_t b = starts[i], e = ends[i];
      if (b < 0) b += dim;
      if (e < 0) e += dim;
      int64_t count;
      if (s > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        count = e > b ? (e - b + s - 1) / s : 0;
      } else if (dim == 0) {
        count = 0;  // Nothing to take (and [0, dim - 1] would be an empty clamp range).
      } else {
        b = std::clamp<int64_t>(b, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        count = b > e ? (b - e + (-s) - 1) / (-s) : 0;
      }
      out[ax] = count;
      first[ax] = count > 0 ? b : 0;
      step[ax] = s;
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    const Dims strides = strides_of(X.dims);
    int64_t base = 0;
    Dims in_strides(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      base += first[d] * strides[d];
      in_strides[d] = strides[d] * step[d];
    }
    strided_copy(ctx, X.data, base, out, in_strides, sdk::dtype_size(X.dtype), Y->data);
    return Status::ok();
  }

 private:
  bool from_inputs_;
  Dims starts_, ends_, axes_;
};

}  // namespace

Status slice_check(const infer_node_view& node) {
  if (node.opset < 10) {
    CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
    if (!has_attr(node, "starts") || !has_attr(node, "ends"))
      return unsupported("Slice requires the starts and ends attributes before opset 10");
    return Status::ok();
  }
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 5));
  for (size_t i = 1; i < node.num_inputs; ++i)
    CPU_RETURN_IF_ERROR(check_dtype(node, node.inputs[i], dtypes::kInts, "starts/ends/axes/steps"));
  return Status::ok();
}

Result<KernelPtr> slice_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  if (n.opset >= 10) return KernelPtr(new SliceKernel(true, {}, {}, {}));
  return KernelPtr(
      new SliceKernel(false, attr_ints(n, "starts"), attr_ints(n, "ends"), attr_ints(n, "axes")));
}

}  // namespace infer::cpu::kernels
