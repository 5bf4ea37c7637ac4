// Unique: the distinct elements of the flattened input, or the distinct slices along
// `axis`, sorted ascending (lexicographically for slices) or in order of first
// occurrence; with the index of each one's first occurrence, the inverse mapping and the
// counts. NaNs compare equal to each other and greater than every number, as numpy does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

template <typename C>
int compare_values(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(bool sorted, bool has_axis, int64_t axis)
      : sorted_(sorted), has_axis_(has_axis), axis_(axis) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    // View the input as [outer, n, inner]: the n items to deduplicate are the slices
    // along the axis (or the single elements without one).
    int64_t axis = 0, outer = 1, n = X.numel(), inner = 1;
    if (has_axis_) {
      CPU_ASSIGN_OR_RETURN(axis, normalize_axis(axis_, static_cast<int64_t>(X.rank())));
      n = X.dims[axis];
      for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
      for (int64_t d = axis + 1; d < static_cast<int64_t>(X.rank()); ++d) inner *= X.dims[d];
    }
    return dispatch(X.dtype, dtypes::kAny, "Unique", [&]<typename T>(Tag<T>) -> Status {
      const T* x = X.as<T>();
      auto cmp = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const int c = compare_values(to_compute(x[(o * n + a) * inner + i]),
                                         to_compute(x[(o * n + b) * inner + i]));
            if (c != 0) return c;
          }
        return 0;
      };
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
      // Groups of equal items in sorted order; the stable sort puts each group's first
      // occurrence first.
      std::vector<int64_t> first, counts, group_of(static_cast<size_t>(n));
      for (size_t k = 0; k < order.size(); ++k) {
        if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
          first.push_back(order[k]);
          counts.push_back(0);
        }
        group_of[order[k]] = static_cast<int64_t>(first.size()) - 1;
        ++counts.back();
      }
      // The output order of the groups: sorted as is, else by first occurrence.
      std::vector<int64_t> rank_of(first.size());
      std::vector<int64_t> groups(first.size());
      std::iota(groups.begin(), groups.end(), int64_t{0});
      if (!sorted_)
        std::sort(groups.begin(), groups.end(),
                  [&](int64_t a, int64_t b) { return first[a] < first[b]; });
      for (size_t g = 0; g < groups.size(); ++g) rank_of[groups[g]] = static_cast<int64_t>(g);
      const auto u = static_cast<int64_t>(groups.size());

      Dims ydims = has_axis_ ? X.dims : Dims{u};
      if (has_axis_) ydims[axis] = u;
      CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, ydims));
      T* y = Y->mut<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t g = 0; g < u; ++g)
          for (int64_t i = 0; i < inner; ++i)
            y[(o * u + g) * inner + i] = x[(o * n + first[groups[g]]) * inner + i];
      if (ctx.has_output(1)) {
        CPU_ASSIGN_OR_RETURN(Tensor * I, ctx.allocate_output(1, INFER_DTYPE_INT64, Dims{u}));
        for (int64_t g = 0; g < u; ++g) I->mut<int64_t>()[g] = first[groups[g]];
      }
      if (ctx.has_output(2)) {
        CPU_ASSIGN_OR_RETURN(Tensor * V, ctx.allocate_output(2, INFER_DTYPE_INT64, Dims{n}));
        for (int64_t k = 0; k < n; ++k) V->mut<int64_t>()[k] = rank_of[group_of[k]];
      }
      if (ctx.has_output(3)) {
        CPU_ASSIGN_OR_RETURN(Tensor * C, ctx.allocate_output(3, INFER_DTYPE_INT64, Dims{u}));
        for (int64_t g = 0; g < u; ++g) C->mut<int64_t>()[g] = counts[groups[g]];
      }
      return Status::ok();
    });
  }

 private:
  bool sorted_, has_axis_;
  int64_t axis_;
};

}  // namespace

Status unique_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }

Result<KernelPtr> unique_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(
      new UniqueKernel(attr_i(n, "sorted", 1) != 0, has_attr(n, "axis"), attr_i(n, "axis", 0)));
}

}  // namespace infer::cpu::kernels
