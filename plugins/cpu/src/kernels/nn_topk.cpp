// TopK: the k largest (or, with largest=0 from opset 11, smallest) elements along `axis`
// and their int64 indices. k is an attribute before opset 10 and a 1-element int64 input
// from 10. Equal values come out lower index first; the result is always sorted (which
// sorted=0 allows too). NaN ranks above every number, as in numpy's sort.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class TopKKernel final : public Kernel {
 public:
  TopKKernel(int64_t k_attr, bool k_from_input, int64_t axis, bool largest)
      : k_attr_(k_attr), k_from_input_(k_from_input), axis_(axis), largest_(largest) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    int64_t k = k_attr_;
    if (k_from_input_) {
      const Tensor& K = *ctx.input(1);
      if (K.numel() != 1 || K.rank() > 1)
        return invalid("K must be a 1-D tensor of one element, got shape ", dims_str(K.dims));
      CPU_ASSIGN_OR_RETURN(std::vector<int64_t> kv, read_int_list(K, "K"));
      k = kv[0];
    }
    const int64_t rank = static_cast<int64_t>(X.rank());
    if (rank == 0) return invalid("input must have at least 1 dim");
    CPU_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_, rank));
    const int64_t n = X.dims[axis];
    if (k < 0) return invalid("k must not be negative, got ", k);
    if (k > n)
      return invalid("k = ", k, " is larger than axis ", axis, " of size ", n, " in ",
                     dims_str(X.dims));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= X.dims[d];
    Dims out = X.dims;
    out[axis] = k;
    CPU_ASSIGN_OR_RETURN(Tensor * V, ctx.allocate_output(0, X.dtype, out));
    Tensor* I = nullptr;
    if (ctx.has_output(1)) {
      CPU_ASSIGN_OR_RETURN(I, ctx.allocate_output(1, INFER_DTYPE_INT64, out));
    }
    if (V->numel() == 0) return Status::ok();
    const bool largest = largest_;
    return dispatch(X.dtype, dtypes::kAllNum, "input", [&]<typename T>(Tag<T>) -> Status {
      using C = compute_t<T>;
      const T* x = X.as<T>();
      T* vals = V->mut<T>();
      int64_t* idx = I ? I->mut<int64_t>() : nullptr;
      struct Item {
        C v;
        int64_t i;
      };
      // "a ranks before b": larger (or smaller) value first, NaN as the largest value,
      // then the lower index.
      auto before = [largest](const Item& a, const Item& b) {
        if constexpr (std::is_floating_point_v<C>) {
          const bool an = std::isnan(a.v), bn = std::isnan(b.v);
          if (an || bn) {
            if (an && bn) return a.i < b.i;
            return largest ? an : bn;
          }
        }
        if (a.v != b.v) return largest ? a.v > b.v : a.v < b.v;
        return a.i < b.i;
      };
      std::vector<Item> row(static_cast<size_t>(n));
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t in = 0; in < inner; ++in) {
          for (int64_t j = 0; j < n; ++j) row[j] = {to_compute(x[(o * n + j) * inner + in]), j};
          std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = (o * k + j) * inner + in;
            vals[at] = x[(o * n + row[j].i) * inner + in];
            if (idx) idx[at] = row[j].i;
          }
        }
      }
      return Status::ok();
    });
  }

 private:
  int64_t k_attr_;
  bool k_from_input_;
  int64_t axis_;
  bool largest_;
};

}  // namespace

Status topk_check(const infer_node_view& node) {
  const bool k_input = node.opset >= 10;
  CPU_RETURN_IF_ERROR(check_input_count(node, k_input ? 2 : 1, k_input ? 2 : 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllNum, "the data"));
  if (k_input) return check_dtype(node, node_input(node, 1), dtypes::kI64, "K");
  if (!has_attr(node, "k")) return unsupported("TopK before opset 10 needs the k attribute");
  return Status::ok();
}

Result<KernelPtr> topk_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new TopKKernel(attr_i(n, "k", 0), n.opset >= 10, attr_i(n, "axis", -1),
                                  n.opset < 11 || attr_i(n, "largest", 1) != 0));
}

}  // namespace infer::cpu::kernels
