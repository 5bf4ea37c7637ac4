// Shape: the input's dims as an int64 tensor, sliced by start/end from opset 15
// (negative values count from the end, out-of-range ones are clamped). Size: the input's
// element count as an int64 scalar.
#include <algorithm>
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class ShapeKernel final : public Kernel {
 public:
  ShapeKernel(int64_t start, int64_t end, bool has_end)
      : start_(start), end_(end), has_end_(has_end) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(X.rank());
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t b = clamp(start_), e = has_end_ ? clamp(end_) : rank;
    const int64_t n = std::max<int64_t>(0, e - b);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_INT64, Dims{n}));
    if (n) std::memcpy(Y->data, X.dims.data() + b, static_cast<size_t>(n) * sizeof(int64_t));
    return Status::ok();
  }

 private:
  int64_t start_, end_;
  bool has_end_;
};

class SizeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_INT64, Dims{}));
    *Y->mut<int64_t>() = ctx.input(0)->numel();
    return Status::ok();
  }
};

}  // namespace

Status size_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }

Result<KernelPtr> size_create(const KernelInit&) { return KernelPtr(new SizeKernel()); }

Status shape_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }

Result<KernelPtr> shape_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new ShapeKernel(attr_i(n, "start", 0), attr_i(n, "end", 0), has_attr(n, "end")));
}

}  // namespace infer::cpu::kernels
