// Where(cond, X, Y) with three-way numpy broadcasting. It only selects elements, so it
// works on any fixed-size dtype by moving elements of the right width.
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "broadcast.hpp"

namespace infer::cpu::kernels {
namespace {

template <typename T>
void select(const BroadcastPlan& p, const uint8_t* c, const T* x, const T* y, T* out, int64_t begin,
            int64_t end) {
  for_each_segment(p, begin, end, [&](int64_t o, const int64_t* offs, int64_t len) {
    const int64_t sc = p.inner_step[0], sx = p.inner_step[1], sy = p.inner_step[2];
    const uint8_t* pc = c + offs[0];
    const T* px = x + offs[1];
    const T* py = y + offs[2];
    T* po = out + o;
    for (int64_t i = 0; i < len; ++i) po[i] = pc[i * sc] ? px[i * sx] : py[i * sy];
  });
}

class WhereKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    const Tensor* C = ctx.input(0);
    const Tensor* X = ctx.input(1);
    const Tensor* Y = ctx.input(2);
    if (C->dtype != INFER_DTYPE_BOOL)
      return invalid("condition must be bool, got ", dtype_name(C->dtype));
    if (X->dtype != Y->dtype)
      return invalid("X and Y dtypes differ: ", dtype_name(X->dtype), " and ",
                     dtype_name(Y->dtype));
    CPU_ASSIGN_OR_RETURN(BroadcastPlan p, make_broadcast_plan({&C->dims, &X->dims, &Y->dims}));
    CPU_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, X->dtype, p.out_dims));
    const size_t esize = sdk::dtype_size(X->dtype);
    const uint8_t* c = C->as<uint8_t>();
    ctx.parallel_for(static_cast<size_t>(p.total), 16384, [&](size_t b, size_t e) {
      const auto lo = static_cast<int64_t>(b), hi = static_cast<int64_t>(e);
      switch (esize) {
        case 1:
          select(p, c, X->as<uint8_t>(), Y->as<uint8_t>(), out->mut<uint8_t>(), lo, hi);
          break;
        case 2:
          select(p, c, X->as<uint16_t>(), Y->as<uint16_t>(), out->mut<uint16_t>(), lo, hi);
          break;
        case 4:
          select(p, c, X->as<uint32_t>(), Y->as<uint32_t>(), out->mut<uint32_t>(), lo, hi);
          break;
        default:
          select(p, c, X->as<uint64_t>(), Y->as<uint64_t>(), out->mut<uint64_t>(), lo, hi);
          break;
      }
    });
    return Status::ok();
  }
};

}  // namespace

Status where_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kBool, "the condition"));
  const infer_value_view* x = node_input(node, 1);
  const infer_value_view* y = node_input(node, 2);
  if (x->dtype != y->dtype)
    return unsupported("Where X and Y have different dtypes ", dtype_name(x->dtype), " and ",
                       dtype_name(y->dtype));
  size_t s = sdk::dtype_size(x->dtype);
  if (s != 1 && s != 2 && s != 4 && s != 8)
    return unsupported("Where does not support dtype ", dtype_name(x->dtype));
  return Status::ok();
}

Result<KernelPtr> where_create(const KernelInit&) { return KernelPtr(new WhereKernel()); }

}  // namespace infer::cpu::kernels
