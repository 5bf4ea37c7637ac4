// ReverseSequence: for batch entry i, reverses the first sequence_lens[i] steps along the
// time axis and copies the rest unchanged. time_axis and batch_axis are 0 and 1 (either
// way round); the dims after them are moved as contiguous slices.
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(int64_t time_axis, int64_t batch_axis)
      : time_axis_(time_axis), batch_axis_(batch_axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& L = *ctx.input(1);
    if (X.rank() < 2) return invalid("input ", dims_str(X.dims), " must have at least 2 dims");
    const int64_t T = X.dims[time_axis_], B = X.dims[batch_axis_];
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> lens, read_indices(L, "sequence_lens"));
    if (L.rank() != 1 || static_cast<int64_t>(lens.size()) != B)
      return invalid("sequence_lens ", dims_str(L.dims),
                     " must be 1-D with one length per batch entry (", B, ")");
    for (size_t i = 0; i < lens.size(); ++i)
      if (lens[i] < 0 || lens[i] > T)
        return invalid("sequence_lens[", i, "] = ", lens[i], " is out of range [0, ", T, "]");
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (Y->numel() == 0) return Status::ok();
    const size_t chunk = static_cast<size_t>(X.numel() / (T * B)) * sdk::dtype_size(X.dtype);
    const auto* x = static_cast<const uint8_t*>(X.data);
    auto* y = static_cast<uint8_t*>(Y->data);
    // Slice (t, b) sits at t * B + b when time is axis 0, else at b * T + t.
    auto at = [&](int64_t t, int64_t b) {
      return static_cast<size_t>(time_axis_ == 0 ? t * B + b : b * T + t) * chunk;
    };
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t src = t < lens[b] ? lens[b] - 1 - t : t;
        std::memcpy(y + at(t, b), x + at(src, b), chunk);
      }
    return Status::ok();
  }

 private:
  int64_t time_axis_, batch_axis_;
};

}  // namespace

Status reverse_sequence_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kI64, "sequence_lens"));
  const int64_t t = attr_i(node, "time_axis", 0), b = attr_i(node, "batch_axis", 1);
  if (!((t == 0 && b == 1) || (t == 1 && b == 0)))
    return unsupported("ReverseSequence needs time_axis and batch_axis to be 0 and 1, got ", t,
                       " and ", b);
  return Status::ok();
}

Result<KernelPtr> reverse_sequence_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(
      new ReverseSequenceKernel(attr_i(n, "time_axis", 0), attr_i(n, "batch_axis", 1)));
}

}  // namespace infer::cpu::kernels
