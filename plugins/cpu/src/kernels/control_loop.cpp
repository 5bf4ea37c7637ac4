// Loop (opsets 1-21, tensors only). Inputs: the trip count M and the condition (both
// optional), then N loop-carried values. The body takes (iteration number, condition,
// N carried values) and returns (condition, N carried values, K scan values). The node
// returns the N final carried values and the K scan outputs, each the per-iteration
// values stacked along a new first axis.
//
// ONNX's table of cases: without M the loop runs while the condition holds; without a
// condition input it runs M times and ignores the body's condition (the body still gets
// `true`); with neither it runs until cancelled. Carried values may change shape from
// one iteration to the next; scan values may not (they are stacked).
#include <cstring>

#include "../node_util.hpp"
#include "control_body.hpp"

namespace infer::cpu::kernels {
namespace {

class LoopKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override {
    int64_t trip = -1;  // -1: no trip count
    if (ctx.input(0) != nullptr) {
      CPU_ASSIGN_OR_RETURN(trip, read_int_scalar(*ctx.input(0), "the trip count M"));
      if (trip < 0) return invalid("the trip count M is ", trip, ", it must be >= 0");
    }
    bool cond = true;
    const bool has_cond = ctx.input(1) != nullptr;
    if (has_cond) {
      CPU_ASSIGN_OR_RETURN(cond, read_bool_scalar(*ctx.input(1), "the condition"));
    }

    // The current carried values: the node's inputs at first, then what the previous
    // iteration returned (owned here).
    std::vector<const Tensor*> carried(n_carried_);
    for (size_t i = 0; i < n_carried_; ++i) {
      carried[i] = ctx.input(2 + i);
      if (carried[i] == nullptr) return invalid("loop-carried input ", i, " is missing");
    }
    std::vector<OwnedTensor> held;
    std::vector<std::vector<OwnedTensor>> scans(n_scan_);

    int64_t iter = 0;
    uint8_t cond_byte = 1;
    Tensor iter_t{INFER_DTYPE_INT64, {}, &iter};
    Tensor cond_t{INFER_DTYPE_BOOL, {}, &cond_byte};
    std::vector<const Tensor*> ins(2 + n_carried_);
    for (; (trip < 0 || iter < trip) && cond; ++iter) {
      cond_byte = 1;
      ins[0] = &iter_t;
      ins[1] = &cond_t;
      for (size_t i = 0; i < n_carried_; ++i) ins[2 + i] = carried[i];
      std::vector<OwnedTensor> outs;
      const std::string where = cat("body iteration ", iter, ": ");
      CPU_RETURN_IF_ERROR(body_->run(ctx, ins, &outs, where));
      if (has_cond) {
        auto next_cond = read_bool_scalar(outs[0].tensor(), "the body's condition output");
        if (!next_cond.is_ok()) return next_cond.status().with_prefix(where);
        cond = next_cond.value();
      }
      for (size_t k = 0; k < n_scan_; ++k) {
        const Tensor& v = outs[1 + n_carried_ + k].tensor();
        if (!scans[k].empty()) {
          const Tensor& first = scans[k].front().tensor();
          if (first.dtype != v.dtype || first.dims != v.dims)
            return invalid(where, "scan output ", k, " is ", dtype_name(v.dtype), dims_str(v.dims),
                           " but was ", dtype_name(first.dtype), dims_str(first.dims),
                           " in iteration 0: scan outputs cannot change shape");
        }
        scans[k].push_back(std::move(outs[1 + n_carried_ + k]));
      }
      // The new carried values replace the old ones, which nothing reads any more.
      std::vector<OwnedTensor> next;
      next.reserve(n_carried_);
      for (size_t i = 0; i < n_carried_; ++i) next.push_back(std::move(outs[1 + i]));
      held = std::move(next);
      for (size_t i = 0; i < n_carried_; ++i) carried[i] = &held[i].tensor();
    }

    for (size_t i = 0; i < n_carried_; ++i)
      CPU_RETURN_IF_ERROR(copy_to_output(ctx, i, *carried[i]));
    for (size_t k = 0; k < n_scan_; ++k) {
      const size_t out = n_carried_ + k;
      if (!ctx.has_output(out)) continue;
      if (scans[k].empty()) {
        // No iteration ran: the declared per-iteration shape (unknown dims as 0) under an
        // empty first axis.
        const DeclaredValue& d = body_->outputs()[1 + n_carried_ + k];
        const infer_dtype dtype = d.dtype != INFER_DTYPE_UNDEFINED ? d.dtype : INFER_DTYPE_FLOAT32;
        CPU_RETURN_IF_ERROR(ctx.allocate_output(out, dtype, empty_stack_dims(d, 0, 0)).status());
        continue;
      }
      const Tensor& first = scans[k].front().tensor();
      Dims dims = first.dims;
      dims.insert(dims.begin(), static_cast<int64_t>(scans[k].size()));
      CPU_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out, first.dtype, dims));
      const size_t step = first.bytes();
      if (step == 0) continue;
      auto* dst = static_cast<uint8_t*>(y->data);
      for (size_t t = 0; t < scans[k].size(); ++t)
        std::memcpy(dst + t * step, scans[k][t].tensor().data, step);
    }
    return Status::ok();
  }

  std::span<const infer_value_view* const> captures() const override { return captures_.views(); }

  std::unique_ptr<CompiledBody> body_;
  CaptureList captures_;
  size_t n_carried_ = 0, n_scan_ = 0;
};

}  // namespace

Status control_loop_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kI64, "the trip count M"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kBool, "the condition"));
  return check_body_supported(node, "body");
}

Result<KernelPtr> control_loop_create(const KernelInit& init) {
  const infer_node_view& node = *init.node;
  if (node.num_inputs < 2)
    return invalid(
        "Loop takes at least 2 inputs (trip count M and condition, either may be "
        "omitted), got ",
        node.num_inputs);
  std::unique_ptr<LoopKernel> k(new LoopKernel());
  CPU_ASSIGN_OR_RETURN(k->body_, CompiledBody::compile(init, "body", k->captures_));
  k->n_carried_ = node.num_inputs - 2;
  const size_t body_in = k->body_->inputs().size(), body_out = k->body_->outputs().size();
  if (body_in != 2 + k->n_carried_)
    return invalid("body takes ", body_in, " inputs, expected ", 2 + k->n_carried_,
                   " (iteration number, condition and ", k->n_carried_, " loop-carried values)");
  if (node.num_outputs < k->n_carried_)
    return invalid("the node has ", node.num_outputs, " outputs, fewer than its ", k->n_carried_,
                   " loop-carried values");
  k->n_scan_ = node.num_outputs - k->n_carried_;
  if (body_out != 1 + node.num_outputs)
    return invalid("body returns ", body_out, " outputs, expected ", 1 + node.num_outputs,
                   " (condition, ", k->n_carried_, " loop-carried values and ", k->n_scan_,
                   " scan outputs)");
  const DeclaredValue& it = k->body_->inputs()[0];
  if (it.dtype != INFER_DTYPE_UNDEFINED && it.dtype != INFER_DTYPE_INT64)
    return invalid("body input 0 (iteration number '", it.name, "') must be int64, got ",
                   dtype_name(it.dtype));
  const DeclaredValue& c = k->body_->inputs()[1];
  if (c.dtype != INFER_DTYPE_UNDEFINED && c.dtype != INFER_DTYPE_BOOL)
    return invalid("body input 1 (condition '", c.name, "') must be bool, got ",
                   dtype_name(c.dtype));
  return KernelPtr(std::move(k));
}

}  // namespace infer::cpu::kernels
