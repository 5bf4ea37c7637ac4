// Expand: broadcasts the input bidirectionally with `shape` (so a 1 in shape keeps the
// input's dim) and materializes the result through the strided copy.
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "strided_copy.hpp"

namespace infer::cpu::kernels {
namespace {

class ExpandKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    CPU_ASSIGN_OR_RETURN(Dims shape, read_int_list(*ctx.input(1), "shape"));
    for (int64_t v : shape)
      if (v < 0) return invalid("shape ", dims_str(shape), " has a negative dim");
    CPU_ASSIGN_OR_RETURN(Dims out, broadcast_shapes({&X.dims, &shape}));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    const Dims strides = strides_of(X.dims);
    Dims in_strides(out.size(), 0);
    const size_t off = out.size() - X.rank();
    for (size_t d = 0; d < X.rank(); ++d) in_strides[off + d] = X.dims[d] == 1 ? 0 : strides[d];
    strided_copy(ctx, X.data, 0, out, in_strides, sdk::dtype_size(X.dtype), Y->data);
    return Status::ok();
  }
};

}  // namespace

Status expand_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  return check_dtype(node, node_input(node, 1), dtypes::kI64, "the shape");
}

Result<KernelPtr> expand_create(const KernelInit&) { return KernelPtr(new ExpandKernel()); }

}  // namespace infer::cpu::kernels
