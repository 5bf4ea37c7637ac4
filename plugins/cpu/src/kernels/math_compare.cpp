// Comparisons with numpy broadcasting and a bool output: Equal (numeric and bool), Less,
// Greater, LessOrEqual, GreaterOrEqual over every numeric dtype. float16/bfloat16 compare
// as float32 (exact); NaN compares unequal to everything.
#include <cstring>
#include <type_traits>

#include "../node_util.hpp"
#include "math_common.hpp"
#include "math_legacy_broadcast.hpp"

namespace infer::cpu::kernels {
namespace {

using math::binary_loop;
using math::OutSpec;

enum class CompareOp { kEq, kLt, kGt, kLe, kGe };

struct CompareOpInfo {
  const char* name;
  CompareOp op;
  uint32_t mask;
};
constexpr CompareOpInfo kCompareOps[] = {
    {"Equal", CompareOp::kEq, dtypes::kAllNum | dtypes::kBool},
    {"Less", CompareOp::kLt, dtypes::kAllNum},
    {"Greater", CompareOp::kGt, dtypes::kAllNum},
    {"LessOrEqual", CompareOp::kLe, dtypes::kAllNum},
    {"GreaterOrEqual", CompareOp::kGe, dtypes::kAllNum},
};

const CompareOpInfo* lookup_compare(const char* name) {
  for (const auto& o : kCompareOps)
    if (std::strcmp(o.name, name) == 0) return &o;
  return nullptr;
}

template <typename T, typename F>
Status compare_loop(KernelContext& ctx, const Tensor& A, const Tensor& B, OutSpec out, F f) {
  return binary_loop<T, T, uint8_t>(
      ctx, A, B, INFER_DTYPE_BOOL,
      [f](T a, T b) -> uint8_t { return f(to_compute(a), to_compute(b)) ? 1 : 0; }, out);
}

class CompareKernel final : public Kernel {
 public:
  CompareKernel(const CompareOpInfo* op, math::LegacyBroadcast legacy) : op_(op), legacy_(legacy) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* A = ctx.input(0);
    const Tensor* B = ctx.input(1);
    if (A == nullptr || B == nullptr) return invalid("two inputs are required");
    if (A->dtype != B->dtype)
      return invalid("input dtypes differ: ", dtype_name(A->dtype), " and ", dtype_name(B->dtype));
    Tensor b = *B;
    OutSpec out;
    CPU_RETURN_IF_ERROR(legacy_.apply(*A, &b, &out));
    return dispatch(A->dtype, op_->mask, op_->name, [&]<typename T>(Tag<T>) -> Status {
      // Bools are compared as bytes normalized to 0/1.
      if constexpr (std::is_same_v<T, bool>) {
        return binary_loop<uint8_t, uint8_t, uint8_t>(
            ctx, *A, b, INFER_DTYPE_BOOL,
            [](uint8_t x, uint8_t y) -> uint8_t { return (x != 0) == (y != 0); }, out);
      } else {
        using C = compute_t<T>;
        switch (op_->op) {
          case CompareOp::kEq:
            return compare_loop<T>(ctx, *A, b, out, [](C x, C y) { return x == y; });
          case CompareOp::kLt:
            return compare_loop<T>(ctx, *A, b, out, [](C x, C y) { return x < y; });
          case CompareOp::kGt:
            return compare_loop<T>(ctx, *A, b, out, [](C x, C y) { return x > y; });
          case CompareOp::kLe:
            return compare_loop<T>(ctx, *A, b, out, [](C x, C y) { return x <= y; });
          case CompareOp::kGe:
            return compare_loop<T>(ctx, *A, b, out, [](C x, C y) { return x >= y; });
        }
        return internal("bad comparison op");
      }
    });
  }

 private:
  const CompareOpInfo* op_;
  math::LegacyBroadcast legacy_;
};

}  // namespace

Status compare_check(const infer_node_view& node) {
  const CompareOpInfo* op = lookup_compare(node.op_type);
  if (op == nullptr) return unsupported("no comparison kernel for ", node.op_type);
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  const infer_value_view* a = node_input(node, 0);
  const infer_value_view* b = node_input(node, 1);
  CPU_RETURN_IF_ERROR(check_dtype(node, a, op->mask, "input 0"));
  if (a && b && a->dtype != b->dtype)
    return unsupported(node.op_type, " inputs have different dtypes ", dtype_name(a->dtype),
                       " and ", dtype_name(b->dtype));
  return Status::ok();
}

Result<KernelPtr> compare_create(const KernelInit& init) {
  const CompareOpInfo* op = lookup_compare(init.node->op_type);
  if (op == nullptr) return internal("no comparison kernel for ", init.node->op_type);
  return KernelPtr(new CompareKernel(op, math::LegacyBroadcast::from_node(*init.node)));
}

}  // namespace infer::cpu::kernels
