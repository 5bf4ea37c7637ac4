// Ops whose output shape depends on the data: Compress (keeps the slices along `axis`, or
// the elements of the flattened input, whose condition is true) and NonZero (the
// coordinates of the non-zero elements, one row per dim, in row-major order).
#include <algorithm>
#include <cstring>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class CompressKernel final : public Kernel {
 public:
  CompressKernel(bool has_axis, int64_t axis) : has_axis_(has_axis), axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& C = *ctx.input(1);
    if (C.dtype != INFER_DTYPE_BOOL)
      return invalid("condition must be bool, got ", dtype_name(C.dtype));
    if (C.rank() != 1) return invalid("condition must be 1-D, got shape ", dims_str(C.dims));
    int64_t axis = 0, len = X.numel(), outer = 1, inner = 1;
    if (has_axis_) {
      CPU_ASSIGN_OR_RETURN(axis, normalize_axis(axis_, static_cast<int64_t>(X.rank())));
      len = X.dims[axis];
      for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
      for (int64_t d = axis + 1; d < static_cast<int64_t>(X.rank()); ++d) inner *= X.dims[d];
    }
    // A shorter condition drops the remaining slices; a longer one may only be false
    // past the end (numpy.compress behaves the same way).
    const auto* c = C.as<uint8_t>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < C.numel(); ++i) {
      if (!c[i]) continue;
      if (i >= len)
        return invalid("condition selects index ", i, ", past the ", len,
                       has_axis_ ? " slices on the axis" : " input elements");
      keep.push_back(i);
    }
    Dims out;
    if (has_axis_) {
      out = X.dims;
      out[axis] = static_cast<int64_t>(keep.size());
    } else {
      out = {static_cast<int64_t>(keep.size())};
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (Y->numel() == 0) return Status::ok();
    const size_t esize = sdk::dtype_size(X.dtype), chunk = static_cast<size_t>(inner) * esize;
    const auto* x = static_cast<const uint8_t*>(X.data);
    auto* y = static_cast<uint8_t*>(Y->data);
    for (int64_t o = 0; o < outer; ++o)
      for (size_t k = 0; k < keep.size(); ++k)
        std::memcpy(y + (static_cast<size_t>(o) * keep.size() + k) * chunk,
                    x + static_cast<size_t>(o * len + keep[k]) * chunk, chunk);
    return Status::ok();
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

class NonZeroKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    std::vector<int64_t> flat;
    CPU_RETURN_IF_ERROR(
        dispatch(X.dtype, dtypes::kAny, "NonZero", [&]<typename T>(Tag<T>) -> Status {
          const T* x = X.as<T>();
          const int64_t n = X.numel();
          for (int64_t i = 0; i < n; ++i)
            if (to_compute(x[i]) != compute_t<T>(0)) flat.push_back(i);
          return Status::ok();
        }));
    // A scalar counts as a 1-D tensor of one element, as numpy.nonzero does.
    const Dims dims = X.rank() == 0 ? Dims{1} : X.dims;
    const int64_t rank = static_cast<int64_t>(dims.size());
    const auto nnz = static_cast<int64_t>(flat.size());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_INT64, Dims{rank, nnz}));
    auto* y = Y->mut<int64_t>();
    for (int64_t j = 0; j < nnz; ++j) {
      int64_t rem = flat[j];
      for (int64_t d = rank; d-- > 0;) {
        y[d * nnz + j] = rem % dims[d];
        rem /= dims[d];
      }
    }
    return Status::ok();
  }
};

}  // namespace

Status compress_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  return check_dtype(node, node_input(node, 1), dtypes::kBool, "the condition");
}

Result<KernelPtr> compress_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new CompressKernel(has_attr(n, "axis"), attr_i(n, "axis", 0)));
}

Status non_zero_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }

Result<KernelPtr> non_zero_create(const KernelInit&) { return KernelPtr(new NonZeroKernel()); }

}  // namespace infer::cpu::kernels
