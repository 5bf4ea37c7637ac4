// Scan, tensors only.
//
// Opset 9-21: inputs are N initial state values then M scan inputs; the body runs once
// per slice of the scan inputs along scan_input_axes (read backwards where
// scan_input_directions is 1), taking (N states, M slices) and returning (N states, K
// scan values). The node returns the N final states and the K scan values stacked
// along scan_output_axes (written backwards where scan_output_directions is 1).
//
// Opset 8: a first, optional input sequence_lens, and every state and scan input has a
// leading batch axis; scan inputs are sliced along axis 1 and `directions` reverses the
// reading of scan inputs. Each batch entry runs its own sequence of sequence_lens[b]
// steps; scan outputs are [batch, max sequence length, ...], zero past each entry's
// length (as ONNX Runtime does).
#include <cstring>

#include "../node_util.hpp"
#include "control_body.hpp"

namespace infer::cpu::kernels {
namespace {

class ScanKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) const override { return v8_ ? run_v8(ctx) : run_v9(ctx); }

  std::span<const infer_value_view* const> captures() const override { return captures_.views(); }

  bool v8_ = false;
  size_t n_state_ = 0, n_in_ = 0, n_out_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
  std::unique_ptr<CompiledBody> body_;
  CaptureList captures_;

 private:
  // Runs the body over `len` slices of `xs` (along axes[j]), starting from `states`.
  // *finals gets the final states (copies when the body never ran), scans[k] the k-th
  // scan value of each iteration in iteration order.
  Status run_sequence(const KernelContext& ctx, const std::vector<const Tensor*>& states,
                      const std::vector<const Tensor*>& xs, const std::vector<int64_t>& axes,
                      int64_t len, const std::string& where, std::vector<OwnedTensor>* finals,
                      std::vector<std::vector<OwnedTensor>>* scans) const {
    std::vector<const Tensor*> cur = states;
    std::vector<OwnedTensor> held;
    scans->clear();
    scans->resize(n_out_);
    std::vector<const Tensor*> ins(n_state_ + n_in_);
    for (int64_t t = 0; t < len; ++t) {
      const std::string at = cat(where, "body iteration ", t, ": ");
      std::vector<OwnedTensor> slices;
      slices.reserve(n_in_);
      for (size_t j = 0; j < n_in_; ++j) {
        const int64_t idx = in_dirs_[j] == 1 ? len - 1 - t : t;
        CPU_ASSIGN_OR_RETURN(OwnedTensor s, take_slice(ctx.host(), *xs[j], axes[j], idx));
        slices.push_back(std::move(s));
      }
      for (size_t i = 0; i < n_state_; ++i) ins[i] = cur[i];
      for (size_t j = 0; j < n_in_; ++j) ins[n_state_ + j] = &slices[j].tensor();
      std::vector<OwnedTensor> outs;
      CPU_RETURN_IF_ERROR(body_->run(ctx, ins, &outs, at));
      for (size_t k = 0; k < n_out_; ++k) {
        const Tensor& v = outs[n_state_ + k].tensor();
        auto& list = (*scans)[k];
        if (!list.empty()) {
          const Tensor& first = list.front().tensor();
          if (first.dtype != v.dtype || first.dims != v.dims)
            return invalid(at, "scan output ", k, " is ", dtype_name(v.dtype), dims_str(v.dims),
                           " but was ", dtype_name(first.dtype), dims_str(first.dims),
                           " in iteration 0: scan outputs cannot change shape");
        }
        list.push_back(std::move(outs[n_state_ + k]));
      }
      std::vector<OwnedTensor> next;
      next.reserve(n_state_);
      for (size_t i = 0; i < n_state_; ++i) next.push_back(std::move(outs[i]));
      held = std::move(next);
      for (size_t i = 0; i < n_state_; ++i) cur[i] = &held[i].tensor();
    }
    finals->clear();
    if (len > 0) {
      *finals = std::move(held);
    } else {
      for (size_t i = 0; i < n_state_; ++i) {
        CPU_ASSIGN_OR_RETURN(OwnedTensor c, OwnedTensor::copy_of(ctx.host(), *states[i]));
        finals->push_back(std::move(c));
      }
    }
    return Status::ok();
  }

  Status run_v9(KernelContext& ctx) const {
    std::vector<const Tensor*> states(n_state_), xs(n_in_);
    for (size_t i = 0; i < n_state_; ++i) {
      states[i] = ctx.input(i);
      if (states[i] == nullptr) return invalid("initial state ", i, " is missing");
    }
    std::vector<int64_t> axes(n_in_);
    int64_t len = -1;
    for (size_t j = 0; j < n_in_; ++j) {
      xs[j] = ctx.input(n_state_ + j);
      if (xs[j] == nullptr) return invalid("scan input ", j, " is missing");
      const int64_t rank = static_cast<int64_t>(xs[j]->rank());
      if (rank == 0) return invalid("scan input ", j, " is a scalar, it needs an axis to scan");
      CPU_ASSIGN_OR_RETURN(axes[j], normalize_axis(in_axes_[j], rank, "scan_input_axes"));
      const int64_t l = xs[j]->dims[axes[j]];
      if (len >= 0 && l != len)
        return invalid("scan input ", j, " has ", l, " slices along axis ", axes[j],
                       " but scan input 0 has ", len);
      len = l;
    }
    if (len < 0) len = 0;
    std::vector<OwnedTensor> finals;
    std::vector<std::vector<OwnedTensor>> scans;
    CPU_RETURN_IF_ERROR(run_sequence(ctx, states, xs, axes, len, "", &finals, &scans));
    for (size_t i = 0; i < n_state_; ++i)
      CPU_RETURN_IF_ERROR(copy_to_output(ctx, i, finals[i].tensor()));
    for (size_t k = 0; k < n_out_; ++k) {
      const size_t out = n_state_ + k;
      if (!ctx.has_output(out)) continue;
      if (scans[k].empty()) {
        const DeclaredValue& d = body_->outputs()[n_state_ + k];
        const int64_t rank = d.rank > 0 ? d.rank : 0;
        int64_t axis = out_axes_[k] < 0 ? out_axes_[k] + rank + 1 : out_axes_[k];
        const infer_dtype dtype = d.dtype != INFER_DTYPE_UNDEFINED ? d.dtype : INFER_DTYPE_FLOAT32;
        CPU_RETURN_IF_ERROR(ctx.allocate_output(out, dtype, empty_stack_dims(d, axis, 0)).status());
        continue;
      }
      const Tensor& first = scans[k].front().tensor();
      CPU_ASSIGN_OR_RETURN(
          int64_t axis,
          normalize_axis(out_axes_[k], static_cast<int64_t>(first.rank()) + 1, "scan_output_axes"));
      Dims dims = first.dims;
      dims.insert(dims.begin() + axis, len);
      CPU_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out, first.dtype, dims));
      for (int64_t t = 0; t < len; ++t) {
        const int64_t pos = out_dirs_[k] == 1 ? len - 1 - t : t;
        put_slice(*y, axis, pos, scans[k][static_cast<size_t>(t)].tensor());
      }
    }
    return Status::ok();
  }

  Status run_v8(KernelContext& ctx) const {
    std::vector<const Tensor*> states(n_state_), xs(n_in_);
    int64_t batch = -1, max_len = -1;
    for (size_t j = 0; j < n_in_; ++j) {
      xs[j] = ctx.input(1 + n_state_ + j);
      if (xs[j] == nullptr) return invalid("scan input ", j, " is missing");
      if (xs[j]->rank() < 2)
        return invalid("scan input ", j, " has shape ", dims_str(xs[j]->dims),
                       ", expected [batch, sequence, ...]");
      if (batch >= 0 && (xs[j]->dims[0] != batch || xs[j]->dims[1] != max_len))
        return invalid("scan input ", j, " has shape ", dims_str(xs[j]->dims),
                       " but scan input 0 is [", batch, ",", max_len, ",...]");
      batch = xs[j]->dims[0];
      max_len = xs[j]->dims[1];
    }
    if (batch < 0) return invalid("Scan needs at least one scan input");
    for (size_t i = 0; i < n_state_; ++i) {
      states[i] = ctx.input(1 + i);
      if (states[i] == nullptr) return invalid("initial state ", i, " is missing");
      if (states[i]->rank() < 1 || states[i]->dims[0] != batch)
        return invalid("initial state ", i, " has shape ", dims_str(states[i]->dims),
                       ", expected a leading batch axis of ", batch);
    }
    std::vector<int64_t> lens(static_cast<size_t>(batch), max_len);
    if (const Tensor* sl = ctx.input(0)) {
      CPU_ASSIGN_OR_RETURN(lens, read_int_list(*sl, "sequence_lens"));
      if (static_cast<int64_t>(lens.size()) != batch)
        return invalid("sequence_lens has ", lens.size(), " entries, expected the batch size ",
                       batch);
      for (size_t b = 0; b < lens.size(); ++b)
        if (lens[b] < 0 || lens[b] > max_len)
          return invalid("sequence_lens[", b, "] is ", lens[b], ", expected 0 to ", max_len);
    }
    // Within one batch entry the sequence axis is the first.
    const std::vector<int64_t> axes(n_in_, 0);
    std::vector<std::vector<OwnedTensor>> finals(static_cast<size_t>(batch));
    std::vector<std::vector<std::vector<OwnedTensor>>> scans(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<OwnedTensor> own_states, own_xs;
      std::vector<const Tensor*> sb(n_state_), xb(n_in_);
      for (size_t i = 0; i < n_state_; ++i) {
        CPU_ASSIGN_OR_RETURN(OwnedTensor s, take_slice(ctx.host(), *states[i], 0, b));
        own_states.push_back(std::move(s));
      }
      for (size_t j = 0; j < n_in_; ++j) {
        CPU_ASSIGN_OR_RETURN(OwnedTensor x, take_slice(ctx.host(), *xs[j], 0, b));
        own_xs.push_back(std::move(x));
      }
      for (size_t i = 0; i < n_state_; ++i) sb[i] = &own_states[i].tensor();
      for (size_t j = 0; j < n_in_; ++j) xb[j] = &own_xs[j].tensor();
      CPU_RETURN_IF_ERROR(
          run_sequence(ctx, sb, xb, axes, lens[b], cat("batch ", b, ": "), &finals[b], &scans[b]));
    }
    // Final states: [batch] + the per-entry shape, which every entry must share.
    for (size_t i = 0; i < n_state_; ++i) {
      if (!ctx.has_output(i)) continue;
      if (batch == 0) {
        CPU_RETURN_IF_ERROR(copy_to_output(ctx, i, *states[i]));
        continue;
      }
      const Tensor& f0 = finals[0][i].tensor();
      for (int64_t b = 1; b < batch; ++b) {
        const Tensor& fb = finals[b][i].tensor();
        if (fb.dtype != f0.dtype || fb.dims != f0.dims)
          return invalid("final state ", i, " is ", dtype_name(fb.dtype), dims_str(fb.dims),
                         " for batch ", b, " but ", dtype_name(f0.dtype), dims_str(f0.dims),
                         " for batch 0");
      }
      Dims dims = f0.dims;
      dims.insert(dims.begin(), batch);
      CPU_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(i, f0.dtype, dims));
      for (int64_t b = 0; b < batch; ++b) put_slice(*y, 0, b, finals[b][i].tensor());
    }
    // Scan outputs: [batch, max_len] + the per-iteration shape, zero past each length.
    for (size_t k = 0; k < n_out_; ++k) {
      const size_t out = n_state_ + k;
      if (!ctx.has_output(out)) continue;
      const Tensor* first = nullptr;
      for (int64_t b = 0; b < batch && first == nullptr; ++b)
        if (!scans[b][k].empty()) first = &scans[b][k].front().tensor();
      if (first == nullptr) {
        const DeclaredValue& d = body_->outputs()[n_state_ + k];
        Dims dims = empty_stack_dims(d, 0, max_len);
        dims.insert(dims.begin(), batch);
        const infer_dtype dtype = d.dtype != INFER_DTYPE_UNDEFINED ? d.dtype : INFER_DTYPE_FLOAT32;
        CPU_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out, dtype, dims));
        if (y->bytes() > 0) std::memset(y->data, 0, y->bytes());
        continue;
      }
      for (int64_t b = 0; b < batch; ++b)
        for (const OwnedTensor& v : scans[b][k])
          if (v.tensor().dtype != first->dtype || v.tensor().dims != first->dims)
            return invalid("scan output ", k, " is ", dtype_name(v.tensor().dtype),
                           dims_str(v.tensor().dims), " for batch ", b, " but ",
                           dtype_name(first->dtype), dims_str(first->dims), " elsewhere");
      Dims dims = first->dims;
      dims.insert(dims.begin(), {batch, max_len});
      CPU_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out, first->dtype, dims));
      if (y->bytes() > 0) std::memset(y->data, 0, y->bytes());
      const size_t step = first->bytes();
      if (step == 0) continue;
      auto* dst = static_cast<uint8_t*>(y->data);
      for (int64_t b = 0; b < batch; ++b)
        for (size_t t = 0; t < scans[b][k].size(); ++t)
          std::memcpy(dst + (static_cast<size_t>(b * max_len) + t) * step,
                      scans[b][k][t].tensor().data, step);
    }
    return Status::ok();
  }
};

Status read_axes(const infer_node_view& node, const char* attr, size_t count, bool directions,
                 std::vector<int64_t>* out) {
  *out = attr_ints(node, attr);
  if (!has_attr(node, attr)) {
    out->assign(count, 0);
    return Status::ok();
  }
  if (out->size() != count)
    return invalid("attribute '", attr, "' has ", out->size(), " entries, expected ", count);
  if (directions)
    for (int64_t d : *out)
      if (d != 0 && d != 1)
        return invalid("attribute '", attr, "' holds ", d, ", expected 0 (forward) or 1 (reverse)");
  return Status::ok();
}

}  // namespace

Status control_scan_check(const infer_node_view& node) {
  if (node.opset <= 8)
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kInts, "sequence_lens"));
  return check_body_supported(node, "body");
}

Result<KernelPtr> control_scan_create(const KernelInit& init) {
  const infer_node_view& node = *init.node;
  std::unique_ptr<ScanKernel> k(new ScanKernel());
  k->v8_ = node.opset <= 8;
  const int64_t m = attr_i(node, "num_scan_inputs", -1);
  if (!has_attr(node, "num_scan_inputs")) return invalid("missing attribute 'num_scan_inputs'");
  const size_t skip = k->v8_ ? 1 : 0;  // sequence_lens
  if (m < 1 || static_cast<size_t>(m) + skip > node.num_inputs)
    return invalid("num_scan_inputs is ", m, ", expected 1 to ", node.num_inputs - skip,
                   " (the node's inputs", k->v8_ ? " after sequence_lens" : "", ")");
  k->n_in_ = static_cast<size_t>(m);
  k->n_state_ = node.num_inputs - skip - k->n_in_;
  if (node.num_outputs < k->n_state_)
    return invalid("the node has ", node.num_outputs, " outputs, fewer than its ", k->n_state_,
                   " state values");
  k->n_out_ = node.num_outputs - k->n_state_;
  CPU_ASSIGN_OR_RETURN(k->body_, CompiledBody::compile(init, "body", k->captures_));
  const size_t body_in = k->body_->inputs().size(), body_out = k->body_->outputs().size();
  if (body_in != k->n_state_ + k->n_in_)
    return invalid("body takes ", body_in, " inputs, expected ", k->n_state_ + k->n_in_, " (",
                   k->n_state_, " state values and ", k->n_in_, " scan input slices)");
  if (body_out != node.num_outputs)
    return invalid("body returns ", body_out, " outputs, expected ", node.num_outputs, " (",
                   k->n_state_, " state values and ", k->n_out_, " scan outputs)");
  if (k->v8_) {
    CPU_RETURN_IF_ERROR(read_axes(node, "directions", k->n_in_, true, &k->in_dirs_));
    k->in_axes_.assign(k->n_in_, 0);
    k->out_axes_.assign(k->n_out_, 0);
    k->out_dirs_.assign(k->n_out_, 0);
  } else {
    CPU_RETURN_IF_ERROR(read_axes(node, "scan_input_axes", k->n_in_, false, &k->in_axes_));
    CPU_RETURN_IF_ERROR(read_axes(node, "scan_input_directions", k->n_in_, true, &k->in_dirs_));
    CPU_RETURN_IF_ERROR(read_axes(node, "scan_output_axes", k->n_out_, false, &k->out_axes_));
    CPU_RETURN_IF_ERROR(read_axes(node, "scan_output_directions", k->n_out_, true, &k->out_dirs_));
  }
  return KernelPtr(std::move(k));
}

}  // namespace infer::cpu::kernels
