// SpaceToDepth and DepthToSpace on [N, C, H, W]: each is a reshape to 6 dims, a
// transpose and a reshape back, done in one strided copy (the 6-D output view's strides
// into the input). DepthToSpace has two channel orders: DCR (depth-column-row, the
// default) and CRD (column-row-depth, opset 11).
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "strided_copy.hpp"

namespace infer::cpu::kernels {
namespace {

class DepthSpaceKernel final : public Kernel {
 public:
  DepthSpaceKernel(bool to_depth, bool crd, int64_t block)
      : to_depth_(to_depth), crd_(crd), b_(block) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() != 4) return invalid("input ", dims_str(X.dims), " must be 4-D [N,C,H,W]");
    const int64_t N = X.dims[0], C = X.dims[1], H = X.dims[2], W = X.dims[3], b = b_;
    Dims out, view, strides;
    if (to_depth_) {
      if (H % b != 0 || W % b != 0)
        return invalid("height and width of ", dims_str(X.dims), " must be multiples of blocksize ",
                       b);
      const int64_t h = H / b, w = W / b;
      out = {N, C * b * b, h, w};
      // Input viewed as [N, C, h, b1, w, b2]; output order [N, b1, b2, C, h, w].
      view = {N, b, b, C, h, w};
      strides = {C * H * W, W, 1, H * W, b * W, b};
    } else {
      if (C % (b * b) != 0)
        return invalid("channels of ", dims_str(X.dims),
                       " must be a multiple of blocksize^2 = ", b * b);
      const int64_t c = C / (b * b);
      out = {N, c, H * b, W * b};
      // Output order [N, c, H, b1, W, b2]. DCR reads the input as [N, b1, b2, c, H, W],
      // CRD as [N, c, b1, b2, H, W].
      view = {N, c, H, b, W, b};
      if (crd_)
        strides = {C * H * W, b * b * H * W, W, b * H * W, 1, H * W};
      else
        strides = {C * H * W, H * W, W, b * c * H * W, 1, c * H * W};
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    strided_copy(ctx, X.data, 0, view, strides, sdk::dtype_size(X.dtype), Y->data);
    return Status::ok();
  }

 private:
  bool to_depth_, crd_;
  int64_t b_;
};

}  // namespace

Status depth_space_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  if (attr_i(node, "blocksize", 0) < 1 || attr_i(node, "blocksize", 0) > (1 << 20))
    return unsupported(node.op_type, " needs a positive blocksize attribute");
  const std::string mode = attr_s(node, "mode", "DCR");
  if (std::string(node.op_type) == "DepthToSpace" && mode != "DCR" &&
      !(mode == "CRD" && node.opset >= 11))
    return unsupported("DepthToSpace mode '", mode, "' is not supported at opset ", node.opset);
  return Status::ok();
}

Result<KernelPtr> depth_space_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const bool to_depth = std::string(n.op_type) == "SpaceToDepth";
  return KernelPtr(new DepthSpaceKernel(to_depth, !to_depth && attr_s(n, "mode", "DCR") == "CRD",
                                        attr_i(n, "blocksize", 0)));
}

}  // namespace infer::cpu::kernels
