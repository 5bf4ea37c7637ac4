// If (opsets 1-21, tensors only): runs then_branch or else_branch, both compiled once
// with the executable machinery, and copies the chosen branch's outputs to the node's.
// The branches may give outputs of different shapes (allowed from opset 11; earlier
// models never rely on it being refused), but never a different number of outputs.
#include "../node_util.hpp"
#include "control_body.hpp"

namespace infer::cpu::kernels {
namespace {

class IfKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    if (ctx.input(0) == nullptr) return invalid("the condition input is missing");
    CPU_ASSIGN_OR_RETURN(bool cond, read_bool_scalar(*ctx.input(0), "the condition"));
    const CompiledBody& branch = cond ? *then_ : *else_;
    std::vector<OwnedTensor> outs;
    CPU_RETURN_IF_ERROR(branch.run(ctx, {}, &outs, cat(branch.attr(), ": ")));
    for (size_t i = 0; i < outs.size() && i < ctx.num_outputs(); ++i)
      CPU_RETURN_IF_ERROR(copy_to_output(ctx, i, outs[i].tensor()));
    return Status::ok();
  }

  std::span<const infer_value_view* const> captures() const override { return captures_.views(); }

  std::unique_ptr<CompiledBody> then_, else_;
  CaptureList captures_;
};

}  // namespace

Status control_if_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kBool, "the condition"));
  CPU_RETURN_IF_ERROR(check_body_supported(node, "then_branch"));
  return check_body_supported(node, "else_branch");
}

Result<KernelPtr> control_if_create(const KernelInit& init) {
  std::unique_ptr<IfKernel> k(new IfKernel());
  CPU_ASSIGN_OR_RETURN(k->then_, CompiledBody::compile(init, "then_branch", k->captures_));
  CPU_ASSIGN_OR_RETURN(k->else_, CompiledBody::compile(init, "else_branch", k->captures_));
  const size_t nt = k->then_->outputs().size(), ne = k->else_->outputs().size();
  if (nt != ne)
    return invalid("then_branch has ", nt, " outputs but else_branch has ", ne,
                   ": both branches must produce the same number of outputs");
  if (nt != init.node->num_outputs)
    return invalid("the node has ", init.node->num_outputs, " outputs but its branches produce ",
                   nt);
  for (size_t i = 0; i < nt; ++i) {
    const infer_dtype a = k->then_->outputs()[i].dtype, b = k->else_->outputs()[i].dtype;
    if (a != INFER_DTYPE_UNDEFINED && b != INFER_DTYPE_UNDEFINED && a != b)
      return invalid("output ", i, " is ", dtype_name(a), " in then_branch but ", dtype_name(b),
                     " in else_branch");
  }
  if (!k->then_->inputs().empty() || !k->else_->inputs().empty())
    return invalid("If branches take no inputs, but ",
                   k->then_->inputs().empty() ? "else_branch" : "then_branch", " declares ",
                   std::max(k->then_->inputs().size(), k->else_->inputs().size()));
  return KernelPtr(std::move(k));
}

}  // namespace infer::cpu::kernels
