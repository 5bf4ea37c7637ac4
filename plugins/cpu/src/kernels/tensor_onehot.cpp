// OneHot(indices, depth, values): inserts a new axis of size `depth` at `axis`; the output
// holds values[1] (on) where the new coordinate equals the index and values[0] (off)
// elsewhere. Negative indices count from depth (opset 11); indices outside [-depth,
// depth-1] give an all-off row, as ONNX specifies. Non-integer indices are truncated.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& I = *ctx.input(0);
    const Tensor& D = *ctx.input(1);
    const Tensor& V = *ctx.input(2);
    CPU_ASSIGN_OR_RETURN(double depth_f, read_scalar(D, "depth"));
    if (!(depth_f >= 1) || depth_f > static_cast<double>(int64_t{1} << 40))
      return invalid("depth ", depth_f, " must be a positive count");
    const auto depth = static_cast<int64_t>(depth_f);
    if (V.numel() != 2)
      return invalid("values must hold 2 elements (off, on), got shape ", dims_str(V.dims));
    const int64_t out_rank = static_cast<int64_t>(I.rank()) + 1;
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, out_rank));
    Dims out = I.dims;
    out.insert(out.begin() + axis, depth);
    CPU_ASSIGN_OR_RETURN(int64_t total, checked_numel(out, "output shape"));
    (void)total;
    std::vector<int64_t> idx(static_cast<size_t>(I.numel()));
    CPU_RETURN_IF_ERROR(
        dispatch(I.dtype, dtypes::kAllNum, "OneHot indices", [&]<typename T>(Tag<T>) -> Status {
          const T* p = I.as<T>();
          for (size_t i = 0; i < idx.size(); ++i) {
            const auto v = to_compute(p[i]);
            if constexpr (std::is_floating_point_v<decltype(v)>) {
              // NaN and huge values cannot be a valid index.
              idx[i] = std::fabs(v) < 9e18 ? static_cast<int64_t>(v) : depth;
            } else if constexpr (std::is_unsigned_v<decltype(v)>) {
              idx[i] = v > static_cast<uint64_t>(depth) ? depth : static_cast<int64_t>(v);
            } else {
              idx[i] = static_cast<int64_t>(v);
            }
          }
          return Status::ok();
        }));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, V.dtype, out));
    if (Y->numel() == 0) return Status::ok();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= I.dims[d];
    for (int64_t d = axis; d < static_cast<int64_t>(I.rank()); ++d) inner *= I.dims[d];
    return dispatch_bytes(sdk::dtype_size(V.dtype), [&]<typename E>(Tag<E>) -> Status {
      const E off = V.as<E>()[0], on = V.as<E>()[1];
      E* y = Y->mut<E>();
      std::fill(y, y + Y->numel(), off);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t v = idx[o * inner + i];
          if (v < -depth || v >= depth) continue;
          if (v < 0) v += depth;
          y[(o * depth + v) * inner + i] = on;
        }
      return Status::ok();
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

Status one_hot_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllNum, "the indices"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kAllNum, "depth"));
  return check_dtype(node, node_input(node, 2), dtypes::kAny, "values");
}

Result<KernelPtr> one_hot_create(const KernelInit& init) {
  return KernelPtr(new OneHotKernel(attr_i(*init.node, "axis", -1)));
}

}  // namespace infer::cpu::kernels
