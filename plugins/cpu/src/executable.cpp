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

class Executable::NodeContext final : public KernelContext {
 public:
  NodeContext(const Executable& exe, const Step& step, RunState& state,
              const infer_execute_args& args, std::vector<const Tensor*> inputs)
      : KernelContext(&exe.host_, std::move(inputs), step.outputs.size()),
        exe_(exe),
        step_(step),
        state_(state),
        args_(args) {}

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
      // A graph output: the host provides the memory.
      infer_tensor out{};
      out.struct_size = sizeof(infer_tensor);
      Status st = from_abi(
          exe_.host_, args_.alloc_output(args_.alloc_ctx, static_cast<size_t>(slot.first_output),
                                         dtype, dims.size(), dims.data(), &out));
      if (!st.is_ok()) return st.with_prefix(cat("allocating output '", slot.name, "': "));
      CPU_RETURN_IF_ERROR(bind_abi_tensor(out, dtype, dims, &t, cat("output '", slot.name, "'")));
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
  const infer_execute_args& args_;
};

Result<std::unique_ptr<Executable>> Executable::compile(const sdk::Host& host, infer_device* device,
                                                        const infer_graph_view& graph) {
  std::unique_ptr<Executable> exe(new Executable(host, device));
  exe->name_ = graph.name ? graph.name : "";
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
        continue;
      }
      if (v->const_data == nullptr)
        return invalid(step.prefix(), "input '", value_name(v),
                       "' is neither a graph input, a constant nor produced by an earlier node");
      if (v->rank < 0)
        return invalid(step.prefix(), "constant '", value_name(v), "' has unknown rank");
      const int s = add_slot(v);
      Slot& slot = exe->slots_[s];
      slot.is_const = true;
      slot.const_tensor.dtype = v->dtype;
      slot.const_tensor.dims.assign(v->dims, v->dims + v->rank);
      for (int64_t d : slot.const_tensor.dims)
        if (d < 0)
          return invalid(step.prefix(), "constant '", value_name(v), "' has an unknown dim");
      if (v->const_size < slot.const_tensor.bytes())
        return invalid(step.prefix(), "constant '", value_name(v), "' holds ", v->const_size,
                       " bytes, expected ", slot.const_tensor.bytes());
      // The ABI keeps const_data alive for the executable's lifetime: use it in place.
      slot.const_tensor.data = const_cast<void*>(v->const_data);
      step.inputs.push_back(s);
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
      s = add_slot(v);
      Slot& slot = exe->slots_[s];
      slot.is_const = true;
      slot.const_tensor.dtype = v->dtype;
      slot.const_tensor.dims.assign(v->dims, v->dims + v->rank);
      slot.const_tensor.data = const_cast<void*>(v->const_data);
    } else {
      return invalid("graph output '", value_name(v), "' is not produced by any node");
    }
    Slot& slot = exe->slots_[s];
    // The producer writes the first graph output that names the value straight into the
    // host's memory; any further output of the same value, and outputs that are inputs
    // or constants, are copied after the last node.
    if (slot.first_output < 0 && slot.input_index < 0 && !slot.is_const)
      slot.first_output = static_cast<int>(i);
    exe->outputs_.push_back(s);
  }
  // Lifetimes: a temporary dies after the last step that reads it (or its producer).
  for (size_t n = 0; n < exe->steps_.size(); ++n) {
    for (int s : exe->steps_[n].inputs)
      if (s >= 0) exe->slots_[s].last_use = static_cast<int>(n);
    for (int s : exe->steps_[n].outputs)
      if (s >= 0 && exe->slots_[s].last_use < static_cast<int>(n))
        exe->slots_[s].last_use = static_cast<int>(n);
  }
  // Temporaries that are also graph outputs (second occurrence) must survive until the
  // final copies, so they are never freed early.
  std::vector<char> is_output(exe->slots_.size(), 0);
  for (int s : exe->outputs_) is_output[s] = 1;
  for (size_t s = 0; s < exe->slots_.size(); ++s) {
    const Slot& slot = exe->slots_[s];
    if (slot.input_index >= 0 || slot.is_const || slot.first_output >= 0 || is_output[s] ||
        slot.last_use < 0)
      continue;
    exe->steps_[slot.last_use].free_after.push_back(static_cast<int>(s));
  }
  return exe;
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
  for (size_t s = 0; s < slots_.size(); ++s)
    if (slots_[s].is_const) {
      state.values[s] = slots_[s].const_tensor;
      state.ready[s] = 1;
    }
  return Status::ok();
}

Status Executable::finish_outputs(const infer_execute_args& args, RunState& state) const {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (state.output_done[i]) continue;
    const int s = outputs_[i];
    if (!state.ready[s]) return internal("graph output '", slots_[s].name, "' was never computed");
    const Tensor& src = state.values[s];
    infer_tensor out{};
    out.struct_size = sizeof(infer_tensor);
    Status st = from_abi(host_, args.alloc_output(args.alloc_ctx, i, src.dtype, src.dims.size(),
                                                  src.dims.data(), &out));
    if (!st.is_ok()) return st.with_prefix(cat("allocating output '", slots_[s].name, "': "));
    Tensor dst;
    CPU_RETURN_IF_ERROR(
        bind_abi_tensor(out, src.dtype, src.dims, &dst, cat("output '", slots_[s].name, "'")));
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
  RunState state(host_, slots_.size(), outputs_.size());
  return bind_inputs(args, state);
}

Status Executable::execute(const infer_execute_args& args) const {
  CPU_RETURN_IF_ERROR(check_args(args));
  RunState state(host_, slots_.size(), outputs_.size());
  CPU_RETURN_IF_ERROR(bind_inputs(args, state));
  const infer_host_services* h = host_.raw();
  const bool can_cancel =
      INFER_HAS_FIELD(h, infer_host_services, is_cancelled) && h->is_cancelled != nullptr;
  for (const Step& step : steps_) {
    if (can_cancel && h->is_cancelled(h->host_ctx, args.run))
      return Status(INFER_STATUS_CANCELLED,
                    cat("run cancelled before node '", step.node_name, "'"));
    std::vector<const Tensor*> ins;
    ins.reserve(step.inputs.size());
    for (int s : step.inputs) ins.push_back(s >= 0 ? &state.values[s] : nullptr);
    NodeContext ctx(*this, step, state, args, std::move(ins));
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
  return finish_outputs(args, state);
}

}  // namespace infer::cpu
