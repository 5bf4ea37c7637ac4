// Tile(input, repeats): output dim d is input dim d times repeats[d], and every output
// element is the input element at its coordinates modulo the input dims.
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

class TileKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> reps, read_int_list(*ctx.input(1), "repeats"));
    const size_t rank = X.rank();
    if (reps.size() != rank)
      return invalid("repeats ", dims_str(reps), " must have one value per dim of the input ",
                     dims_str(X.dims));
    Dims out(rank);
    for (size_t d = 0; d < rank; ++d) {
      if (reps[d] < 0) return invalid("repeats ", dims_str(reps), " has a negative value");
      out[d] = X.dims[d] * reps[d];
      if (X.dims[d] != 0 && out[d] / X.dims[d] != reps[d])
        return invalid("repeats ", dims_str(reps), " make the output too large");
    }
    CPU_ASSIGN_OR_RETURN(int64_t total, checked_numel(out, "output shape"));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (total == 0) return Status::ok();
    if (rank == 0) {
      std::memcpy(Y->data, X.data, X.bytes());
      return Status::ok();
    }
    const Dims in_strides = strides_of(X.dims);
    const int64_t in_last = X.dims[rank - 1], out_last = out[rank - 1];
    const int64_t rows = total / out_last;
    return dispatch_bytes(sdk::dtype_size(X.dtype), [&]<typename U>(Tag<U>) -> Status {
      const U* x = X.as<U>();
      U* y = Y->mut<U>();
      ctx.parallel_for(static_cast<size_t>(rows), grain_for(static_cast<size_t>(out_last), 65536),
                       [&](size_t r0, size_t r1) {
                         for (size_t r = r0; r < r1; ++r) {
                           int64_t rem = static_cast<int64_t>(r), off = 0;
                           for (size_t d = rank - 1; d-- > 0;) {
                             off += (rem % out[d]) % X.dims[d] * in_strides[d];
                             rem /= out[d];
                           }
                           U* dst = y + static_cast<int64_t>(r) * out_last;
                           for (int64_t j = 0; j < out_last; ++j) dst[j] = x[off + j % in_last];
                         }
                       });
      return Status::ok();
    });
  }
};

}  // namespace

Status tile_check(const infer_node_view& node) {
  if (node.opset < 6) return unsupported("Tile before opset 6 (tiles and axis inputs)");
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  return check_dtype(node, node_input(node, 1), dtypes::kI64, "repeats");
}

Result<KernelPtr> tile_create(const KernelInit&) { return KernelPtr(new TileKernel()); }

}  // namespace infer::cpu::kernels
