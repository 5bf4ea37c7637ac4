// Split along `axis` into the node's outputs. The sizes come from the `split` attribute
// (before opset 13) or input (from 13); without them the axis is split evenly, and from
// opset 18 `num_outputs` allows a smaller last chunk.
#include <algorithm>
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class SplitKernel final : public Kernel {
 public:
  SplitKernel(int64_t opset, int64_t axis, Dims split_attr, int64_t num_outputs_attr)
      : opset_(opset),
        axis_(axis),
        split_attr_(std::move(split_attr)),
        num_outputs_attr_(num_outputs_attr) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(X.rank());
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, rank));
    const int64_t len = X.dims[axis];
    const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
    Dims sizes = split_attr_;
    if (opset_ >= 13 && ctx.input(1) != nullptr) {
      CPU_ASSIGN_OR_RETURN(sizes, read_int_list(*ctx.input(1), "split"));
    }
    if (sizes.empty()) {
      if (num_outputs_attr_ > 0) {
        // Opset 18: ceil-sized chunks, the last one smaller.
        const int64_t chunk = (len + num_outputs_attr_ - 1) / num_outputs_attr_;
        for (int64_t i = 0; i < n_out; ++i)
          sizes.push_back(std::max<int64_t>(0, std::min(chunk, len - i * chunk)));
      } else {
        if (len % n_out != 0)
          return invalid("axis ", axis, " of size ", len, " does not split evenly into ", n_out,
                         " outputs");
        sizes.assign(static_cast<size_t>(n_out), len / n_out);
      }
    }
    if (static_cast<int64_t>(sizes.size()) != n_out)
      return invalid("split ", dims_str(sizes), " has ", sizes.size(), " entries for ", n_out,
                     " outputs");
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) return invalid("split ", dims_str(sizes), " has a negative size");
      total += s;
    }
    if (total != len)
      return invalid("split ", dims_str(sizes), " sums to ", total, ", but axis ", axis,
                     " has size ", len);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= X.dims[d];
    const size_t esize = sdk::dtype_size(X.dtype);
    const size_t in_row = static_cast<size_t>(len * inner) * esize;
    const auto* x = static_cast<const uint8_t*>(X.data);
    int64_t offset = 0;
    for (int64_t i = 0; i < n_out; ++i) {
      const int64_t s = sizes[i];
      if (ctx.has_output(static_cast<size_t>(i))) {
        Dims od = X.dims;
        od[axis] = s;
        CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(static_cast<size_t>(i), X.dtype, od));
        const size_t row = static_cast<size_t>(s * inner) * esize;
        auto* y = static_cast<uint8_t*>(Y->data);
        const size_t start = static_cast<size_t>(offset * inner) * esize;
        if (row)
          for (int64_t r = 0; r < outer; ++r) std::memcpy(y + r * row, x + r * in_row + start, row);
      }
      offset += s;
    }
    return Status::ok();
  }

 private:
  int64_t opset_, axis_;
  Dims split_attr_;
  int64_t num_outputs_attr_;
};

}  // namespace

Status split_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, node.opset >= 13 ? 2 : 1));
  if (node.num_outputs == 0) return unsupported("Split needs at least one output");
  if (node.opset >= 13)
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kI64, "split"));
  return Status::ok();
}

Result<KernelPtr> split_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new SplitKernel(n.opset, attr_i(n, "axis", 0),
                                   n.opset < 13 ? attr_ints(n, "split") : Dims{},
                                   n.opset >= 18 ? attr_i(n, "num_outputs", 0) : 0));
}

}  // namespace infer::cpu::kernels
