#include "executable.hpp"

#include <cstring>
#include <unordered_map>

#include "abi_objects.hpp"
#include "kernel_registry.hpp"

namespace infer::cpu {

namespace {
constexpr size_t kAlignment = 64;

std::string value_name(const infer_value_view* v) { return v->name ? v->name : "<unnamed>"; }
}  // namespace

// Everything one execution owns: the tensor bound to each slot and the temporaries.
class Executable::RunState {
 public:
  RunState(const sdk::Host& host, size_t slots, size_t outputs)
      : host_(host),
        values(slots),
        ready(slots, 0),
        owned(slots, nullptr),
        output_done(outputs, 0) {}
  ~RunState() {
    for (void* p : owned)
      if (p) host_.raw()->host_free(host_.raw()->host_ctx, p);
  }
  void release(int slot) {
    if (owned[slot]) host_.raw()->host_free(host_.raw()->host_ctx, owned[slot]);
    owned[slot] = nullptr;
    values[slot].data = nullptr;
  }

  const sdk::Host& host_;
  std::vector<Tensor> values;
  std::vector<char> ready;
  std::vector<void*> owned;  // host_alloc'd temporaries, freed after their last use
  std::vector<char> output_done;
};

// Points a host-side Tensor at a tensor the host handed over (input or output), after
// checking that it is one of this plugin's buffers and holds enough bytes.
static Status bind_abi_tensor(const infer_tensor& t, infer_dtype dtype, const Dims& dims,
                              Tensor* out, const std::string& what) {
  if (t.buffer == nullptr || t.buffer->magic != kCpuBufferMagic)
    return invalid(what, ": buffer is not a cpu plugin buffer");
  const size_t need = sdk::tensor_bytes(dtype, sdk::element_count(dims.data(), dims.size()));
  if (t.size_bytes < need)
    return invalid(what, ": ", t.size_bytes, " bytes for ", dtype_name(dtype), dims_str(dims),
                   ", need ", need);
  if (t.offset > t.buffer->size || t.buffer->size - t.offset < need)
    return invalid(what, ": offset ", t.offset, " + ", need, " bytes exceeds the buffer's ",
                   t.buffer->size);
  out->dtype = dtype;
  out->dims = dims;
  out->data = static_cast<uint8_t*>(t.buffer->data) + t.offset;
  return Status::ok();
}

void OwnedTensor::reset() {
  if (host_ != nullptr && t_.data != nullptr)
    host_->raw()->host_free(host_->raw()->host_ctx, t_.data);
  host_ = nullptr;
  t_.data = nullptr;
}

Result<OwnedTensor> OwnedTensor::allocate(const sdk::Host& host, infer_dtype dtype,
                                          const Dims& dims) {
  OwnedTensor o;
  o.t_.dtype = dtype;
  o.t_.dims = dims;
  const size_t bytes = o.t_.bytes();
  if (bytes > 0) {
    void* p = host.raw()->host_alloc(host.raw()->host_ctx, bytes, kAlignment);
    if (p == nullptr)
      return Status(INFER_STATUS_OUT_OF_MEMORY,
                    cat("out of host memory allocating ", bytes, " bytes"));
    o.host_ = &host;
    o.t_.data = p;
  }
  return o;
}

Result<OwnedTensor> OwnedTensor::copy_of(const sdk::Host& host, const Tensor& src) {
  CPU_ASSIGN_OR_RETURN(OwnedTensor o, allocate(host, src.dtype, src.dims));
  if (src.bytes() > 0) std::memcpy(o.t_.data, src.data, src.bytes());
  return o;
}

// Where an execution's graph outputs go: the host's alloc_output for a partition, host
// memory handed back to the calling kernel for a body.
class Executable::OutputSink {
 public:
  virtual ~OutputSink() = default;
  // Binds graph output `index` to memory for dtype/dims (uninitialized).
  virtual Status allocate(size_t index, infer_dtype dtype, const Dims& dims,
                          const std::string& name, Tensor* out) = 0;
};

class Executable::AbiSink final : public OutputSink {
 public:
  AbiSink(const sdk::Host& host, const infer_execute_args& args) : host_(host), args_(args) {}
  Status allocate(size_t index, infer_dtype dtype, const Dims& dims, const std::string& name,
                  Tensor* out) override {
    infer_tensor t{};
    t.struct_size = sizeof(infer_tensor);
    Status st = from_abi(
        host_, args_.alloc_output(args_.alloc_ctx, index, dtype, dims.size(), dims.data(), &t));
    if (!st.is_ok()) return st.with_prefix(cat("allocating output '", name, "': "));
    return bind_abi_tensor(t, dtype, dims, out, cat("output '", name, "'"));
  }

 private:
  const sdk::Host& host_;
  const infer_execute_args& args_;
};

class Executable::BodySink final : public OutputSink {
 public:
  BodySink(const sdk::Host& host, std::vector<OwnedTensor>* outputs)
      : host_(host), outputs_(outputs) {}
  Status allocate(size_t index, infer_dtype dtype, const Dims& dims, const std::string& name,
                  Tensor* out) override {
    auto owned = OwnedTensor::allocate(host_, dtype, dims);
    if (!owned.is_ok()) return owned.status().with_prefix(cat("body output '", name, "': "));
    (*outputs_)[index] = std::move(owned).value();
    *out = (*outputs_)[index].tensor();
    return Status::ok();
  }

 private:
  const sdk::Host& host_;
  std::vector<OwnedTensor>* outputs_;
};

class Executable::NodeContext final : public KernelContext {
 public:
  NodeContext(const Executable& exe, const Step& step, RunState& state, OutputSink& sink,
              std::vector<const Tensor*> inputs)
      : KernelContext(&exe.host_, std::move(inputs), step.outputs.size()),
        exe_(exe),
        step_(step),
        state_(state),
        sink_(sink) {}

  using KernelContext::set_captures;
  using KernelContext::set_run;

  bool has_output(size_t i) const override {
    return i < step_.outputs.size() && step_.outputs[i] >= 0;
  }

  Result<Tensor*> allocate_output(size_t i, infer_dtype dtype, const Dims& dims) override {
    if (!has_output(i)) return internal("kernel allocated omitted output ", i);
    const int s = step_.outputs[i];
    const Slot& slot = exe_.slots_[s];
    if (state_.ready[s]) return internal("kernel allocated output ", i, " twice");
    for (int64_t d : dims)
      if (d < 0) return internal("output ", i, " has negative dim in ", dims_str(dims));
    if (slot.dtype != INFER_DTYPE_UNDEFINED && slot.dtype != dtype)
      return invalid("output '", slot.name, "' is ", dtype_name(dtype), " but the graph declares ",
                     dtype_name(slot.dtype));
    Tensor& t = state_.values[s];
    if (slot.first_output >= 0) {
      // A graph output: the sink (the host, or the kernel running this body) provides
      // the memory.
      CPU_RETURN_IF_ERROR(
          sink_.allocate(static_cast<size_t>(slot.first_output), dtype, dims, slot.name, &t));
      state_.output_done[slot.first_output] = 1;
    } else {
      t.dtype = dtype;
      t.dims = dims;
      t.data = nullptr;
      const size_t bytes = t.bytes();
      if (bytes > 0) {
        void* p = exe_.host_.raw()->host_alloc(exe_.host_.raw()->host_ctx, bytes, kAlignment);
        if (p == nullptr)
          return Status(INFER_STATUS_OUT_OF_MEMORY, cat("out of host memory allocating ", bytes,
                                                        " bytes for '", slot.name, "'"));
        state_.owned[s] = p;
        t.data = p;
      }
    }
    state_.ready[s] = 1;
    return &t;
  }

 private:
  const Executable& exe_;
  const Step& step_;
  RunState& state_;
  OutputSink& sink_;
};

Result<std::unique_ptr<Executable>> Executable::compile(const sdk::Host& host, infer_device* device,
                                                        const infer_graph_view& graph) {
  return compile_impl(host, device, graph, false);
}

Result<std::unique_ptr<Executable>> Executable::compile_subgraph(const sdk::Host& host,
                                                                 const infer_graph_view& graph) {
  return compile_impl(host, nullptr, graph, true);
}

Result<std::unique_ptr<Executable>> Executable::compile_impl(const sdk::Host& host,
                                                             infer_device* device,
                                                             const infer_graph_view& graph,
                                                             bool subgraph) {
  std::unique_ptr<Executable> exe(new Executable(host, device));
  exe->name_ = graph.name ? graph.name : "";
  exe->subgraph_ = subgraph;
  std::unordered_map<const infer_value_view*, int> slot_of;
  auto add_slot = [&](const infer_value_view* v) {
    Slot s;
    s.name = value_name(v);
    s.dtype = v->dtype;
    exe->slots_.push_back(std::move(s));
    const int id = static_cast<int>(exe->slots_.size() - 1);
    slot_of[v] = id;
    return id;
  };
  // A constant value, used in place: the ABI keeps const_data alive for the
  // executable's lifetime.
  auto add_const_slot = [&](const infer_value_view* v, const std::string& prefix) -> Result<int> {
    if (v->rank < 0) return invalid(prefix, "constant '", value_name(v), "' has unknown rank");
    const int s = add_slot(v);
    Slot& slot = exe->slots_[s];
    slot.is_const = true;
    slot.const_tensor.dtype = v->dtype;
    slot.const_tensor.dims.assign(v->dims, v->dims + v->rank);
    for (int64_t d : slot.const_tensor.dims)
      if (d < 0) return invalid(prefix, "constant '", value_name(v), "' has an unknown dim");
    if (v->const_size < slot.const_tensor.bytes())
      return invalid(prefix, "constant '", value_name(v), "' holds ", v->const_size,
                     " bytes, expected ", slot.const_tensor.bytes());
    slot.const_tensor.data = const_cast<void*>(v->const_data);
    return s;
  };
  // In a body, a value nobody in the body defines comes from an enclosing graph. ONNX
  // scoping guarantees that it is defined there before the control-flow node runs.
  auto add_capture_slot = [&](const infer_value_view* v) {
    const int s = add_slot(v);
    exe->slots_[s].capture_index = static_cast<int>(exe->captures_.size());
    exe->captures_.push_back(v);
    exe->capture_slots_.push_back(s);
    return s;
  };
  for (size_t i = 0; i < graph.num_inputs; ++i) {
    const infer_value_view* v = graph.inputs[i];
    if (v == nullptr) return invalid("graph input ", i, " is NULL");
    if (slot_of.count(v)) return invalid("graph input '", value_name(v), "' is listed twice");
    const int s = add_slot(v);
    exe->slots_[s].input_index = static_cast<int>(i);
    exe->inputs_.push_back(s);
  }
  for (size_t n = 0; n < graph.num_nodes; ++n) {
    const infer_node_view* node = graph.nodes[n];
    if (node == nullptr) return invalid("node ", n, " is NULL");
    Step step;
    step.node_name = node->name && node->name[0] ? node->name : cat("#", n);
    step.op_type = node->op_type ? node->op_type : "";
    for (size_t i = 0; i < node->num_inputs; ++i) {
      const infer_value_view* v = node->inputs[i];
      if (v == nullptr) {
        step.inputs.push_back(-1);
        continue;
      }
      auto it = slot_of.find(v);
      if (it != slot_of.end()) {
        step.inputs.push_back(it->second);
      } else if (v->const_data != nullptr) {
        CPU_ASSIGN_OR_RETURN(int s, add_const_slot(v, step.prefix()));
        step.inputs.push_back(s);
      } else if (subgraph) {
        step.inputs.push_back(add_capture_slot(v));
      } else {
        return invalid(step.prefix(), "input '", value_name(v),
                       "' is neither a graph input, a constant nor produced by an earlier node");
      }
    }
    for (size_t i = 0; i < node->num_outputs; ++i) {
      const infer_value_view* v = node->outputs[i];
      if (v == nullptr) {
        step.outputs.push_back(-1);
        continue;
      }
      if (slot_of.count(v))
        return invalid(step.prefix(), "output '", value_name(v), "' is produced twice");
      step.outputs.push_back(add_slot(v));
    }
    auto selected = select_kernel(*node);
    if (!selected.is_ok()) return selected.status().with_prefix(step.prefix());
    const KernelDef* def = selected.value();
    KernelInit init{node, &exe->host_};
    auto created = def->create(init);
    if (!created.is_ok()) return created.status().with_prefix(step.prefix());
    step.kernel = std::move(created).value();
    // Values the node's own bodies capture are read by this step like inputs. They are
    // values of this graph (or, inside a body, of a graph further out).
    for (const infer_value_view* v : step.kernel->captures()) {
      auto it = slot_of.find(v);
      if (it != slot_of.end()) {
        step.captures.push_back(it->second);
      } else if (subgraph) {
        step.captures.push_back(add_capture_slot(v));
      } else {
        return invalid(step.prefix(), "its subgraphs read '", value_name(v),
                       "', which is neither an input of the partition nor produced by an earlier "
                       "node");
      }
    }
    exe->steps_.push_back(std::move(step));
  }
  for (size_t i = 0; i < graph.num_outputs; ++i) {
    const infer_value_view* v = graph.outputs[i];
    if (v == nullptr) return invalid("graph output ", i, " is NULL");
    auto it = slot_of.find(v);
    int s;
    if (it != slot_of.end()) {
      s = it->second;
    } else if (v->const_data != nullptr && v->rank >= 0) {
      // An output that is a constant of the graph, not used by any node.
      CPU_ASSIGN_OR_RETURN(s, add_const_slot(v, ""));
    } else if (subgraph) {
      // A body may return a value of an enclosing graph as it is.
      s = add_capture_slot(v);
    } else {
      return invalid("graph output '", value_name(v), "' is not produced by any node");
    }
    Slot& slot = exe->slots_[s];
    // The producer writes the first graph output that names the value straight into the
    // host's memory; any further output of the same value, and outputs that are inputs,
    // captures or constants, are copied after the last node.
    if (slot.first_output < 0 && slot.input_index < 0 && slot.capture_index < 0 && !slot.is_const)
      slot.first_output = static_cast<int>(i);
    exe->outputs_.push_back(s);
  }
  // Lifetimes: a temporary dies after the last step that reads it (or its producer).
  for (size_t n = 0; n < exe->steps_.size(); ++n) {
    const Step& step = exe->steps_[n];
    for (int s : step.inputs)
      if (s >= 0) exe->slots_[s].last_use = static_cast<int>(n);
    for (int s : step.captures) exe->slots_[s].last_use = static_cast<int>(n);
    for (int s : step.outputs)
      if (s >= 0 && exe->slots_[s].last_use < static_cast<int>(n))
        exe->slots_[s].last_use = static_cast<int>(n);
  }
  // Temporaries that are also graph outputs (second occurrence) must survive until the
  // final copies, so they are never freed early.
  std::vector<char> is_output(exe->slots_.size(), 0);
  for (int s : exe->outputs_) is_output[s] = 1;
  for (size_t s = 0; s < exe->slots_.size(); ++s) {
    const Slot& slot = exe->slots_[s];
    if (slot.input_index >= 0 || slot.capture_index >= 0 || slot.is_const ||
        slot.first_output >= 0 || is_output[s] || slot.last_use < 0)
      continue;
    exe->steps_[slot.last_use].free_after.push_back(static_cast<int>(s));
  }
  return exe;
}

void Executable::bind_constants(RunState& state) const {
  for (size_t s = 0; s < slots_.size(); ++s)
    if (slots_[s].is_const) {
      state.values[s] = slots_[s].const_tensor;
      state.ready[s] = 1;
    }
}

Status Executable::bind_inputs(const infer_execute_args& args, RunState& state) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const infer_tensor& t = args.inputs[i];
    const int s = inputs_[i];
    const Slot& slot = slots_[s];
    if (t.rank > 0 && t.dims == nullptr)
      return invalid("input ", i, " ('", slot.name, "'): dims is NULL");
    if (slot.dtype != INFER_DTYPE_UNDEFINED && t.dtype != slot.dtype)
      return invalid("input ", i, " ('", slot.name, "') is ", dtype_name(t.dtype), ", expected ",
                     dtype_name(slot.dtype));
    Dims dims(t.dims, t.dims + t.rank);
    for (int64_t d : dims)
      if (d < 0)
        return invalid("input ", i, " ('", slot.name, "') has a negative dim in ", dims_str(dims));
    CPU_RETURN_IF_ERROR(bind_abi_tensor(t, t.dtype, dims, &state.values[s],
                                        cat("input ", i, " ('", slot.name, "')")));
    state.ready[s] = 1;
  }
  bind_constants(state);
  return Status::ok();
}

Status Executable::finish_outputs(OutputSink& sink, RunState& state) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (state.output_done[i]) continue;
    const int s = outputs_[i];
    if (!state.ready[s]) return internal("graph output '", slots_[s].name, "' was never computed");
    const Tensor& src = state.values[s];
    Tensor dst;
    CPU_RETURN_IF_ERROR(sink.allocate(i, src.dtype, src.dims, slots_[s].name, &dst));
    if (src.bytes() > 0) std::memcpy(dst.data, src.data, src.bytes());
    state.output_done[i] = 1;
  }
  return Status::ok();
}

Status Executable::check_args(const infer_execute_args& args) const {
  if (args.num_inputs != inputs_.size())
    return invalid("partition '", name_, "' takes ", inputs_.size(), " inputs, got ",
                   args.num_inputs);
  if (args.num_outputs != outputs_.size())
    return invalid("partition '", name_, "' has ", outputs_.size(), " outputs, got ",
                   args.num_outputs);
  if (args.alloc_output == nullptr) return invalid("alloc_output is NULL");
  if (args.num_inputs > 0 && args.inputs == nullptr) return invalid("inputs is NULL");
  if (!captures_.empty())
    return invalid("partition '", name_,
                   "' reads values of an enclosing graph and can only run "
                   "as a body");
  RunState state(host_, slots_.size(), outputs_.size());
  return bind_inputs(args, state);
}

Status Executable::run_steps(RunState& state, OutputSink& sink,
                             const infer_run_context* run) const {
  const infer_host_services* h = host_.raw();
  const bool can_cancel =
      INFER_HAS_FIELD(h, infer_host_services, is_cancelled) && h->is_cancelled != nullptr;
  for (const Step& step : steps_) {
    if (can_cancel && h->is_cancelled(h->host_ctx, run))
      return Status(INFER_STATUS_CANCELLED,
                    cat("run cancelled before node '", step.node_name, "'"));
    std::vector<const Tensor*> ins;
    ins.reserve(step.inputs.size());
    for (int s : step.inputs) ins.push_back(s >= 0 ? &state.values[s] : nullptr);
    NodeContext ctx(*this, step, state, sink, std::move(ins));
    if (!step.captures.empty()) {
      std::vector<const Tensor*> caps;
      caps.reserve(step.captures.size());
      for (int s : step.captures) caps.push_back(&state.values[s]);
      ctx.set_captures(std::move(caps));
    }
    ctx.set_run(run);
    Status st = step.kernel->run(ctx);
    if (!st.is_ok()) return st.with_prefix(step.prefix());
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      const int s = step.outputs[i];
      if (s >= 0 && !state.ready[s])
        return internal(step.prefix(), "kernel did not produce output ", i, " ('", slots_[s].name,
                        "')");
    }
    for (int s : step.free_after) state.release(s);
  }
  return finish_outputs(sink, state);
}

Status Executable::execute(const infer_execute_args& args) const {
  CPU_RETURN_IF_ERROR(check_args(args));
  RunState state(host_, slots_.size(), outputs_.size());
  CPU_RETURN_IF_ERROR(bind_inputs(args, state));
  AbiSink sink(host_, args);
  return run_steps(state, sink, args.run);
}

Status Executable::run_body(std::span<const Tensor* const> inputs,
                            std::span<const Tensor* const> captures, const infer_run_context* run,
                            std::vector<OwnedTensor>* outputs) const {
  if (inputs.size() != inputs_.size())
    return internal("body '", name_, "' takes ", inputs_.size(), " inputs, got ", inputs.size());
  if (captures.size() != captures_.size())
    return internal("body '", name_, "' captures ", captures_.size(), " values, got ",
                    captures.size());
  RunState state(host_, slots_.size(), outputs_.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int s = inputs_[i];
    const Slot& slot = slots_[s];
    if (inputs[i] == nullptr) return internal("body input ", i, " ('", slot.name, "') is NULL");
    // Bodies declare their input types; a value of another type (e.g. a loop-carried
    // value whose type changes) is refused rather than misread.
    if (slot.dtype != INFER_DTYPE_UNDEFINED && inputs[i]->dtype != slot.dtype)
      return invalid("body '", name_, "' input '", slot.name, "' is declared ",
                     dtype_name(slot.dtype), " but gets ", dtype_name(inputs[i]->dtype));
    state.values[s] = *inputs[i];
    state.ready[s] = 1;
  }
  for (size_t j = 0; j < captures.size(); ++j) {
    const int s = capture_slots_[j];
    if (captures[j] == nullptr || (captures[j]->data == nullptr && captures[j]->bytes() > 0))
      return internal("captured value '", slots_[s].name, "' is not available");
    state.values[s] = *captures[j];
    state.ready[s] = 1;
  }
  bind_constants(state);
  outputs->clear();
  outputs->resize(outputs_.size());
  BodySink sink(host_, outputs);
  Status st = run_steps(state, sink, run);
  if (!st.is_ok()) outputs->clear();
  return st;
}

}  // namespace infer::cpu
