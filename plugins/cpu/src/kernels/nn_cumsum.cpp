// CumSum: running sums along the axis given by input 1 (an int32/int64 scalar or
// one-element 1-D tensor). `exclusive` leaves the current element out of its own sum;
// `reverse` sums from the end. Floats accumulate in double and round on store; integers
// wrap around.
#include <type_traits>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class CumSumKernel final : public Kernel {
 public:
  CumSumKernel(bool exclusive, bool reverse) : exclusive_(exclusive), reverse_(reverse) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& A = *ctx.input(1);
    if (A.rank() > 1 || A.numel() != 1)
      return invalid("axis must be a scalar or a 1-element 1-D tensor, got shape ",
                     dims_str(A.dims));
    CPU_ASSIGN_OR_RETURN(std::vector<int64_t> a, read_int_list(A, "axis"));
    const int64_t rank = static_cast<int64_t>(X.rank());
    if (rank == 0) return invalid("input must have at least 1 dim");
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a[0], rank));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= X.dims[d];
    const int64_t n = X.dims[axis];
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    if (Y->numel() == 0) return Status::ok();
    return dispatch(X.dtype, dtypes::kAllNum, "input", [&]<typename T>(Tag<T>) -> Status {
      using Acc = std::conditional_t<is_float_v<T>, double,
                                     std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          // Unsigned arithmetic makes integer overflow wrap instead of being undefined.
          uint64_t iacc = 0;
          double facc = 0;
          for (int64_t s = 0; s < n; ++s) {
            const int64_t k = reverse_ ? n - 1 - s : s;
            const int64_t at = (o * n + k) * inner + i;
            const Acc v = static_cast<Acc>(to_compute(x[at]));
            if constexpr (is_float_v<T>) {
              if (!exclusive_) facc += v;
              y[at] = from_compute<T>(static_cast<compute_t<T>>(facc));
              if (exclusive_) facc += v;
            } else {
              if (!exclusive_) iacc += static_cast<uint64_t>(v);
              y[at] = static_cast<T>(iacc);
              if (exclusive_) iacc += static_cast<uint64_t>(v);
            }
          }
        }
      }
      return Status::ok();
    });
  }

 private:
  bool exclusive_, reverse_;
};

}  // namespace

Status cumsum_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllNum, "the data"));
  return check_dtype(node, node_input(node, 1), dtypes::kInts, "axis");
}

Result<KernelPtr> cumsum_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new CumSumKernel(attr_i(n, "exclusive", 0) != 0, attr_i(n, "reverse", 0) != 0));
}

}  // namespace infer::cpu::kernels
