// Variadic elementwise ops over 1..N inputs with numpy broadcasting (from opset 8; the
// older versions required equal shapes, which broadcasting accepts too): Max, Min, Sum,
// Mean. The output takes the broadcast of every input's shape; it starts as op(in0, in1)
// (or a copy of a single input) and folds the remaining inputs in place. Max and Min
// propagate NaN like numpy's maximum/minimum.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../node_util.hpp"
#include "float32_binary.hpp"
#include "math_common.hpp"

namespace infer::cpu::kernels {
namespace {

enum class VariadicOp { kMax, kMin, kSum, kMean };

struct VariadicOpInfo {
  const char* name;
  VariadicOp op;
  uint32_t mask;
};
constexpr VariadicOpInfo kVariadicOps[] = {
    {"Max", VariadicOp::kMax, dtypes::kAllNum},
    {"Min", VariadicOp::kMin, dtypes::kAllNum},
    {"Sum", VariadicOp::kSum, dtypes::kAllNum},
    {"Mean", VariadicOp::kMean, dtypes::kAllFloat},
};

const VariadicOpInfo* lookup_variadic(const char* name) {
  for (const auto& o : kVariadicOps)
    if (std::strcmp(o.name, name) == 0) return &o;
  return nullptr;
}

template <typename C>
bool either_nan(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(a) || std::isnan(b);
  else
    return false;
}

// The pairwise step of each op on storage type T.
template <typename T>
auto step_fn(VariadicOp op) {
  using C = compute_t<T>;
  using Fn = T (*)(T, T);
  Fn f = nullptr;
  switch (op) {
    case VariadicOp::kMax:
      f = [](T x, T y) -> T {
        const C a = to_compute(x), b = to_compute(y);
        return from_compute<T>(either_nan(a, b) ? a + b : (a < b ? b : a));
      };
      break;
    case VariadicOp::kMin:
      f = [](T x, T y) -> T {
        const C a = to_compute(x), b = to_compute(y);
        return from_compute<T>(either_nan(a, b) ? a + b : (b < a ? b : a));
      };
      break;
    case VariadicOp::kSum:
    case VariadicOp::kMean:
      f = [](T x, T y) -> T { return from_compute<T>(math::wrap_add(to_compute(x), to_compute(y))); };
      break;
  }
  return f;
}

class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(const VariadicOpInfo* op) : op_(op) {}

  Status run(KernelContext& ctx) const override {
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.input(i) != nullptr) ins.push_back(ctx.input(i));
    if (ins.empty()) return invalid("at least one input is required");
    std::vector<const Dims*> shapes;
    for (const Tensor* t : ins) {
      if (t->dtype != ins[0]->dtype)
        return invalid("input dtypes differ: ", dtype_name(ins[0]->dtype), " and ",
                       dtype_name(t->dtype));
      shapes.push_back(&t->dims);
    }
    CPU_ASSIGN_OR_RETURN(Dims out_dims, broadcast_shapes(shapes));
    return dispatch(ins[0]->dtype, op_->mask, op_->name, [&]<typename T>(Tag<T>) -> Status {
      if constexpr (math::in_mask<T>(dtypes::kAllNum)) {
        CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, ins[0]->dtype, out_dims));
        const auto f = step_fn<T>(op_->op);
        const math::OutSpec into{nullptr, Y};
        // float32 Max and Min run the SIMD library's vector loops (the same NaN and tie
        // rules as step_fn): a LeakyRelu written as max(x, a * x) was a scalar loop
        // through a function pointer per element.
        auto step = [&](const Tensor& a, const Tensor& b) -> Status {
          if constexpr (std::is_same_v<T, float>) {
            if (op_->op == VariadicOp::kMax || op_->op == VariadicOp::kMin)
              return float32_binary(
                  ctx, a, b,
                  op_->op == VariadicOp::kMax ? simd::BinaryOp::kMax : simd::BinaryOp::kMin, into);
          }
          return math::binary_loop<T, T, T>(ctx, a, b, Y->dtype, f, into);
        };
        if (ins.size() == 1) {
          CPU_RETURN_IF_ERROR(math::broadcast_copy<T>(ctx, *ins[0], Y));
        } else {
          CPU_RETURN_IF_ERROR(step(*ins[0], *ins[1]));
        }
        for (size_t i = 2; i < ins.size(); ++i) CPU_RETURN_IF_ERROR(step(*Y, *ins[i]));
        if constexpr (is_float_v<T>) {
          if (op_->op == VariadicOp::kMean) {
            using C = compute_t<T>;
            const C n = static_cast<C>(ins.size());
            T* y = Y->mut<T>();
            for (int64_t i = 0, total = Y->numel(); i < total; ++i)
              y[i] = from_compute<T>(to_compute(y[i]) / n);
          }
        }
        return Status::ok();
      } else {
        return internal(op_->name, ": dtype ", dtype_name(ins[0]->dtype));
      }
    });
  }

 private:
  const VariadicOpInfo* op_;
};

}  // namespace

Status variadic_check(const infer_node_view& node) {
  const VariadicOpInfo* op = lookup_variadic(node.op_type);
  if (op == nullptr) return unsupported("no variadic kernel for ", node.op_type);
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 4096));
  const infer_value_view* a = node_input(node, 0);
  CPU_RETURN_IF_ERROR(check_dtype(node, a, op->mask, "input 0"));
  for (size_t i = 1; i < node.num_inputs; ++i) {
    const infer_value_view* b = node.inputs[i];
    if (a && b && a->dtype != b->dtype)
      return unsupported(node.op_type, " inputs have different dtypes ", dtype_name(a->dtype),
                         " and ", dtype_name(b->dtype));
  }
  return Status::ok();
}

Result<KernelPtr> variadic_create(const KernelInit& init) {
  const VariadicOpInfo* op = lookup_variadic(init.node->op_type);
  if (op == nullptr) return internal("no variadic kernel for ", init.node->op_type);
  return KernelPtr(new VariadicKernel(op));
}

}  // namespace infer::cpu::kernels
