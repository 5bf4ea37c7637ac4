// Gather along `axis` with int32/int64 indices (negative ones count from the end).
// Output shape: data.shape[:axis] + indices.shape + data.shape[axis+1:]. Every index is
// checked before anything is copied, so a bad one fails the run cleanly.
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(int64_t axis) : axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& I = *ctx.input(1);
    const int64_t rank = static_cast<int64_t>(X.rank());
    if (rank == 0) return invalid("data must have at least 1 dim");
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, rank));
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_indices(I));
    const int64_t dim = X.dims[axis];
    for (int64_t& v : idx) {
      if (v < -dim || v >= dim)
        return invalid("index ", v, " out of range for axis ", axis, " of size ", dim);
      if (v < 0) v += dim;
    }
    Dims out(X.dims.begin(), X.dims.begin() + axis);
    out.insert(out.end(), I.dims.begin(), I.dims.end());
    out.insert(out.end(), X.dims.begin() + axis + 1, X.dims.end());
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (Y->numel() == 0) return Status::ok();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= X.dims[d];
    const size_t esize = sdk::dtype_size(X.dtype);
    const size_t chunk = static_cast<size_t>(inner) * esize;
    const auto n_idx = static_cast<int64_t>(idx.size());
    const auto* x = static_cast<const uint8_t*>(X.data);
    auto* y = static_cast<uint8_t*>(Y->data);
    ctx.parallel_for(
        static_cast<size_t>(outer * n_idx), grain_for(chunk, 1 << 16), [&](size_t r0, size_t r1) {
          for (size_t r = r0; r < r1; ++r) {
            const int64_t o = static_cast<int64_t>(r) / n_idx, k = static_cast<int64_t>(r) % n_idx;
            std::memcpy(y + r * chunk, x + static_cast<size_t>(o * dim + idx[k]) * chunk, chunk);
          }
        });
    return Status::ok();
  }

 private:
  static Result<std::vector<int64_t>> read_indices(const Tensor& I) {
    std::vector<int64_t> v(static_cast<size_t>(I.numel()));
    if (I.dtype == INFER_DTYPE_INT64) {
      if (!v.empty()) std::memcpy(v.data(), I.data, v.size() * sizeof(int64_t));
    } else if (I.dtype == INFER_DTYPE_INT32) {
      for (size_t i = 0; i < v.size(); ++i) v[i] = I.as<int32_t>()[i];
    } else {
      return invalid("indices must be int32 or int64, got ", dtype_name(I.dtype));
    }
    return v;
  }

  int64_t axis_;
};

}  // namespace

Status gather_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  return check_dtype(node, node_input(node, 1), dtypes::kInts, "the indices");
}

Result<KernelPtr> gather_create(const KernelInit& init) {
  return KernelPtr(new GatherKernel(attr_i(*init.node, "axis", 0)));
}

}  // namespace infer::cpu::kernels
