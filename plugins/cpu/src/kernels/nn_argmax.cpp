// ArgMax / ArgMin along one axis, giving int64 indices. keepdims (default 1) keeps the
// reduced axis as size 1; select_last_index (opset 12) picks the last of equal extremes
// instead of the first. A NaN counts as the extreme (as in numpy), the first one found
// unless select_last_index asks for the last.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class ArgKernel final : public Kernel {
 public:
  ArgKernel(bool is_max, int64_t axis, bool keepdims, bool last)
      : is_max_(is_max), axis_(axis), keepdims_(keepdims), last_(last) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(X.rank());
    if (rank == 0) return invalid("input must have at least 1 dim");
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, rank));
    const int64_t n = X.dims[axis];
    Dims out;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= X.dims[d];
      if (d > axis) inner *= X.dims[d];
      if (d != axis)
        out.push_back(X.dims[d]);
      else if (keepdims_)
        out.push_back(1);
    }
    if (n == 0 && outer * inner > 0)
      return invalid("cannot take Arg", is_max_ ? "Max" : "Min", " over axis ", axis,
                     " of size 0 in ", dims_str(X.dims));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_INT64, out));
    int64_t* y = Y->mut<int64_t>();
    return dispatch(X.dtype, dtypes::kAllNum | dtypes::kBool, "input",
                    [&]<typename T>(Tag<T>) -> Status {
                      using C = compute_t<T>;
                      const T* x = X.as<T>();
                      for (int64_t o = 0; o < outer; ++o) {
                        for (int64_t i = 0; i < inner; ++i) {
                          const T* p = x + o * n * inner + i;
                          int64_t best = 0;
                          C bv = to_compute(p[0]);
                          for (int64_t k = 1; k < n; ++k) {
                            const C v = to_compute(p[k * inner]);
                            if (better(v, bv)) {
                              bv = v;
                              best = k;
                            }
                          }
                          y[o * inner + i] = best;
                        }
                      }
                      return Status::ok();
                    });
  }

 private:
  // Whether candidate v replaces the current extreme b.
  template <typename C>
  bool better(C v, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(b)) return last_ && std::isnan(v);
      if (std::isnan(v)) return true;
    }
    if (v == b) return last_;
    return is_max_ ? v > b : v < b;
  }

  bool is_max_;
  int64_t axis_;
  bool keepdims_, last_;
};

}  // namespace

Status argmax_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  return check_dtype(node, node_input(node, 0), dtypes::kAllNum | dtypes::kBool, "the data");
}

Result<KernelPtr> argmax_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new ArgKernel(std::strcmp(n.op_type, "ArgMax") == 0, attr_i(n, "axis", 0),
                                 attr_i(n, "keepdims", 1) != 0,
                                 n.opset >= 12 && attr_i(n, "select_last_index", 0) != 0));
}

}  // namespace infer::cpu::kernels
