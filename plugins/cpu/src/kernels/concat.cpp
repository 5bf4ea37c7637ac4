// Concat along `axis`: every output row (the dims before the axis) is the inputs' rows
// laid end to end.
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.input(i) != nullptr) ins.push_back(ctx.input(i));
    if (ins.empty()) return invalid("at least one input is required");
    const Tensor& first = *ins[0];
    const int64_t rank = static_cast<int64_t>(first.rank());
    if (rank == 0) return invalid("cannot concatenate scalars");
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, rank));
    Dims out = first.dims;
    out[axis] = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
      const Tensor& t = *ins[i];
      if (t.dtype != first.dtype)
        return invalid("input ", i, " has dtype ", dtype_name(t.dtype), ", expected ",
                       dtype_name(first.dtype));
      bool same = static_cast<int64_t>(t.rank()) == rank;
      for (int64_t d = 0; same && d < rank; ++d) same = d == axis || t.dims[d] == first.dims[d];
      if (!same)
        return invalid("input ", i, " has shape ", dims_str(t.dims), ", incompatible with ",
                       dims_str(first.dims), " for concatenation on axis ", axis);
      out[axis] += t.dims[axis];
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, first.dtype, out));
    if (Y->numel() == 0) return Status::ok();
    const size_t esize = sdk::dtype_size(first.dtype);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= out[d];
    const size_t out_row = static_cast<size_t>(out[axis] * inner) * esize;
    auto* y = static_cast<uint8_t*>(Y->data);
    ctx.parallel_for(
        static_cast<size_t>(outer), grain_for(out_row, 1 << 18), [&](size_t r0, size_t r1) {
          for (size_t r = r0; r < r1; ++r) {
            size_t at = r * out_row;
            for (const Tensor* t : ins) {
              const size_t row = static_cast<size_t>(t->dims[axis] * inner) * esize;
              if (row) std::memcpy(y + at, static_cast<const uint8_t*>(t->data) + r * row, row);
              at += row;
            }
          }
        });
    return Status::ok();
  }

 private:
  int64_t axis_;
};

}  // namespace

Status concat_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1 << 16));
  if (node.opset >= 4 && !has_attr(node, "axis"))
    return unsupported("Concat requires the axis attribute from opset 4");
  return Status::ok();
}

Result<KernelPtr> concat_create(const KernelInit& init) {
  // Before opset 4 the axis was optional, defaulting to 1.
  return KernelPtr(new ConcatKernel(attr_i(*init.node, "axis", 1)));
}

}  // namespace infer::cpu::kernels
