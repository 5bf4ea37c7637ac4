// Transpose: permutes dims (default: reverses them) through the strided copy.
#include <algorithm>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "strided_copy.hpp"

namespace infer::cpu::kernels {
namespace {

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(Dims perm) : perm_(std::move(perm)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const size_t rank = X.rank();
    Dims perm = perm_;
    if (perm.empty()) {
      for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    }
    if (perm.size() != rank)
      return invalid("perm ", dims_str(perm), " has ", perm.size(), " values for input ",
                     dims_str(X.dims));
    std::vector<char> seen(rank, 0);
    for (int64_t& p : perm) {
      CPU_ASSIGN_OR_RETURN(p, normalize_axis(p, static_cast<int64_t>(rank), "perm value"));
      if (seen[p]) return invalid("perm ", dims_str(perm_), " is not a permutation");
      seen[p] = 1;
    }
    const Dims strides = strides_of(X.dims);
    Dims out(rank), in_strides(rank);
    for (size_t d = 0; d < rank; ++d) {
      out[d] = X.dims[perm[d]];
      in_strides[d] = strides[perm[d]];
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    strided_copy(ctx, X.data, 0, out, in_strides, sdk::dtype_size(X.dtype), Y->data);
    return Status::ok();
  }

 private:
  Dims perm_;
};

}  // namespace

Status transpose_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }

Result<KernelPtr> transpose_create(const KernelInit& init) {
  return KernelPtr(new TransposeKernel(attr_ints(*init.node, "perm")));
}

}  // namespace infer::cpu::kernels
