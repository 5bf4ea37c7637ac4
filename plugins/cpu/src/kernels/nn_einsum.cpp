// Einsum (opset 12) with numpy semantics: any number of operands, letters a-z and A-Z,
// repeated letters within an operand (diagonals), "..." for broadcast leading dims, an
// explicit output ("->") or the implicit one (letters used once, in ASCII order, after
// the broadcast dims). Letters missing from the output are summed over. A dim of size 1
// broadcasts against the same letter's larger size elsewhere, as numpy allows.
//
// Evaluation is direct: every output element sums, over all combinations of the summed
// letters, the product of the operands' elements, with each operand addressed through
// one stride per letter (the sum of its dims' strides for a repeated letter, 0 where it
// broadcasts). Floats accumulate in double; integers wrap around.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

// Letters are labels 0-51; the broadcast dims of "..." get labels 52, 53, ...
constexpr int kEllipsisBase = 52;

int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;  // ASCII order: upper case first
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return -1;
}

// One term of the equation: its letter labels, and where "..." sits (-1: absent).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

Result<Term> parse_term(const std::string& s, const std::string& eq) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (t.ellipsis_at >= 0 || s.compare(i, 3, "...") != 0)
        return invalid("bad ellipsis in equation '", eq, "'");
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    const int l = letter_label(s[i]);
    if (l < 0) return invalid("unexpected character '", s[i], "' in equation '", eq, "'");
    t.letters.push_back(l);
  }
  return t;
}

struct Equation {
  std::vector<Term> inputs;
  Term output;
  bool explicit_output = false;
};

Result<Equation> parse_equation(const std::string& raw) {
  std::string eq;
  for (char c : raw)
    if (c != ' ') eq.push_back(c);
  Equation e;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    CPU_ASSIGN_OR_RETURN(Term t, parse_term(lhs.substr(start, comma - start), raw));
    e.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.explicit_output = true;
    CPU_ASSIGN_OR_RETURN(e.output, parse_term(eq.substr(arrow + 2), raw));
  }
  return e;
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(Equation eq) : eq_(std::move(eq)) {}

  Status run(KernelContext& ctx) const override {
    const size_t n_ops = eq_.inputs.size();
    if (ctx.num_inputs() != n_ops)
      return invalid("equation has ", n_ops, " operands but the node has ", ctx.num_inputs(),
                     " inputs");
    const infer_dtype dtype = ctx.input(0)->dtype;
    // Per operand: the label of each dim. The broadcast rank is the longest "...".
    std::vector<std::vector<int>> dim_labels(n_ops);
    int64_t ell_rank = 0;
    for (size_t k = 0; k < n_ops; ++k) {
      const Tensor& t = *ctx.input(k);
      if (t.dtype != dtype) return invalid("all inputs must have the same dtype");
      const Term& term = eq_.inputs[k];
      const int64_t extra =
          static_cast<int64_t>(t.rank()) - static_cast<int64_t>(term.letters.size());
      if (extra < 0 || (term.ellipsis_at < 0 && extra != 0))
        return invalid("input ", k, " has shape ", dims_str(t.dims), " but its term has ",
                       term.letters.size(), " letters", term.ellipsis_at >= 0 ? " and '...'" : "");
      ell_rank = std::max(ell_rank, extra);
    }
    const int n_labels = kEllipsisBase + static_cast<int>(ell_rank);
    std::vector<int64_t> size(static_cast<size_t>(n_labels), -1);
    std::vector<char> used(static_cast<size_t>(n_labels), 0), count(used);
    for (size_t k = 0; k < n_ops; ++k) {
      const Tensor& t = *ctx.input(k);
      const Term& term = eq_.inputs[k];
      const int64_t extra =
          static_cast<int64_t>(t.rank()) - static_cast<int64_t>(term.letters.size());
      std::vector<int>& dl = dim_labels[k];
      for (size_t i = 0; i <= term.letters.size(); ++i) {
        if (static_cast<int>(i) == term.ellipsis_at)
          for (int64_t j = 0; j < extra; ++j)
            dl.push_back(kEllipsisBase + static_cast<int>(ell_rank - extra + j));
        if (i < term.letters.size()) dl.push_back(term.letters[i]);
      }
      for (size_t d = 0; d < dl.size(); ++d) {
        int64_t& s = size[dl[d]];
        const int64_t v = t.dims[d];
        if (s == -1 || s == 1) {
          s = v;
        } else if (v != s && v != 1) {
          return invalid("dim ", d, " of input ", k, " ", dims_str(t.dims), " has size ", v,
                         " but its label has size ", s, " elsewhere");
        }
        used[dl[d]] = 1;
      }
      for (int l : term.letters) ++count[l];
    }
    // Output labels.
    std::vector<int> out_labels;
    auto push_ellipsis = [&] {
      for (int64_t j = 0; j < ell_rank; ++j)
        out_labels.push_back(kEllipsisBase + static_cast<int>(j));
    };
    if (eq_.explicit_output) {
      const Term& o = eq_.output;
      if (o.ellipsis_at < 0 && ell_rank > 0)
        return invalid("the output has no '...' but the inputs have ", ell_rank, " broadcast dims");
      for (size_t i = 0; i <= o.letters.size(); ++i) {
        if (static_cast<int>(i) == o.ellipsis_at) push_ellipsis();
        if (i == o.letters.size()) break;
        const int l = o.letters[i];
        if (!used[l]) return invalid("output letter is not in any input term");
        if (std::count(o.letters.begin(), o.letters.end(), l) > 1)
          return invalid("output letter repeated in the equation");
        out_labels.push_back(l);
      }
    } else {
      push_ellipsis();
      for (int l = 0; l < kEllipsisBase; ++l)
        if (count[l] == 1) out_labels.push_back(l);
    }
    std::vector<char> in_out(static_cast<size_t>(n_labels), 0);
    for (int l : out_labels) in_out[l] = 1;
    std::vector<int> sum_labels;
    for (int l = 0; l < n_labels; ++l)
      if (used[l] && !in_out[l]) sum_labels.push_back(l);
    // Strides per operand per label.
    std::vector<std::vector<int64_t>> lstride(n_ops, std::vector<int64_t>(n_labels, 0));
    for (size_t k = 0; k < n_ops; ++k) {
      const Tensor& t = *ctx.input(k);
      const Dims st = strides_of(t.dims);
      for (size_t d = 0; d < dim_labels[k].size(); ++d)
        if (t.dims[d] != 1 || size[dim_labels[k][d]] == 1) lstride[k][dim_labels[k][d]] += st[d];
    }
    Dims out_dims;
    for (int l : out_labels) out_dims.push_back(size[l]);
    Dims sum_sizes;
    int64_t sum_total = 1;
    for (int l : sum_labels) {
      sum_sizes.push_back(size[l]);
      sum_total *= size[l];
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, dtype, out_dims));
    const int64_t out_total = Y->numel();
    if (out_total == 0) return Status::ok();
    return dispatch(dtype, dtypes::kAllNum, "input", [&]<typename T>(Tag<T>) -> Status {
      using Acc = std::conditional_t<is_float_v<T>, double, uint64_t>;
      std::vector<const T*> ptr(n_ops);
      for (size_t k = 0; k < n_ops; ++k) ptr[k] = ctx.input(k)->as<T>();
      T* y = Y->mut<T>();
      auto element = [&](const T* p, int64_t off) -> Acc {
        if constexpr (is_float_v<T>)
          return static_cast<double>(to_compute(p[off]));
        else
          return static_cast<Acc>(
              static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(p[off]));
      };
      ctx.parallel_for(static_cast<size_t>(out_total),
                       grain_for(static_cast<size_t>(std::max<int64_t>(sum_total, 1) *
                                                     static_cast<int64_t>(n_ops))),
                       [&](size_t o0, size_t o1) {
                         std::vector<int64_t> base(n_ops), off(n_ops), idx(sum_labels.size());
                         for (size_t o = o0; o < o1; ++o) {
                           int64_t rem = static_cast<int64_t>(o);
                           std::fill(base.begin(), base.end(), 0);
                           for (size_t j = out_labels.size(); j-- > 0;) {
                             const int64_t i = rem % out_dims[j];
                             rem /= out_dims[j];
                             for (size_t k = 0; k < n_ops; ++k)
                               base[k] += i * lstride[k][out_labels[j]];
                           }
                           Acc acc = 0;
                           std::fill(idx.begin(), idx.end(), 0);
                           off = base;
                           for (int64_t s = 0; s < sum_total; ++s) {
                             Acc prod = element(ptr[0], off[0]);
                             for (size_t k = 1; k < n_ops; ++k) prod *= element(ptr[k], off[k]);
                             acc += prod;
                             for (size_t j = sum_labels.size(); j-- > 0;) {  // odometer step
                               const int l = sum_labels[j];
                               if (++idx[j] < sum_sizes[j]) {
                                 for (size_t k = 0; k < n_ops; ++k) off[k] += lstride[k][l];
                                 break;
                               }
                               for (size_t k = 0; k < n_ops; ++k)
                                 off[k] -= (sum_sizes[j] - 1) * lstride[k][l];
                               idx[j] = 0;
                             }
                           }
                           if constexpr (is_float_v<T>)
                             y[o] = from_compute<T>(static_cast<compute_t<T>>(acc));
                           else
                             y[o] = static_cast<T>(acc);
                         }
                       });
      return Status::ok();
    });
  }

 private:
  Equation eq_;
};

}  // namespace

Status einsum_check(const infer_node_view& node) {
  if (node.num_inputs < 1) return unsupported("Einsum needs at least one input");
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllNum, "its inputs"));
  if (!has_attr(node, "equation")) return unsupported("Einsum needs the equation attribute");
  auto eq = parse_equation(attr_s(node, "equation", ""));
  if (!eq.is_ok()) return unsupported("Einsum: ", eq.status().message());
  if (eq.value().inputs.size() != node.num_inputs)
    return unsupported("Einsum equation has ", eq.value().inputs.size(),
                       " operands but the node has ", node.num_inputs, " inputs");
  return Status::ok();
}

Result<KernelPtr> einsum_create(const KernelInit& init) {
  CPU_ASSIGN_OR_RETURN(Equation eq, parse_equation(attr_s(*init.node, "equation", "")));
  return KernelPtr(new EinsumKernel(std::move(eq)));
}

}  // namespace infer::cpu::kernels
