#include "executable.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "abi_objects.hpp"
#include "kernel_registry.hpp"
#include "node_util.hpp"

namespace infer::cpu {

namespace {
constexpr size_t kAlignment = 64;

std::string value_name(const infer_value_view* v) { return v->name ? v->name : "<unnamed>"; }
}  // namespace

// Everything one execution owns: the tensor bound to each slot, the temporaries that
// could not use planned memory, and where the planned ones go. A pooled RunState is
// reused run after run, so its vectors (and the dims of its tensors) keep their capacity.
class Executable::RunState {
 public:
  RunState(const sdk::Host& host, size_t slots, size_t outputs)
      : host_(host),
        values(slots),
        ready(slots, 0),
        owned(slots, nullptr),
        output_done(outputs, 0) {}
  ~RunState() { free_owned(); }
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  // Readies a pooled state for the next run: nothing bound, nothing owned.
  void reset() {
    free_owned();
    std::fill(ready.begin(), ready.end(), 0);
    std::fill(output_done.begin(), output_done.end(), 0);
    for (Tensor& t : values) t.data = nullptr;
  }
  void release(int slot) {
    if (owned[slot]) host_.raw()->host_free(host_.raw()->host_ctx, owned[slot]);
    owned[slot] = nullptr;
    values[slot].data = nullptr;
  }
  void free_owned() {
    for (size_t s = 0; s < owned.size(); ++s)
      if (owned[s]) release(static_cast<int>(s));
  }

  const sdk::Host& host_;
  std::vector<Tensor> values;
  std::vector<char> ready;
  std::vector<void*> owned;  // host_alloc'd temporaries, freed after their last use
  std::vector<char> output_done;
  // The run's planned memory (both null in a recording run) ...
  uint8_t* block = nullptr;
  const MemoryPlan* plan = nullptr;
  // ... or, in a recording run, the bytes of each planned value as the kernels ask.
  std::vector<size_t>* recorded = nullptr;
};

// A plan's block with a RunState to run in; pooled by the plan.
struct Executable::Workspace {
  Workspace(const sdk::Host& host, size_t slots, size_t outputs) : state(host, slots, outputs) {}
  ~Workspace() {
    if (block != nullptr) state.host_.raw()->host_free(state.host_.raw()->host_ctx, block);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void* block = nullptr;
  RunState state;
};

// The plan of one signature and its pool of idle workspaces. Shared: a run holds its
// entry while it runs, so evicting the entry from the cache never frees memory in use.
struct Executable::PlanEntry {
  std::vector<int64_t> key;  // empty for the static plan
  MemoryPlan plan;
  uint64_t last_used = 0;  // guarded by the executable's plan_mu_
  std::mutex mu;           // guards idle
  std::vector<std::unique_ptr<Workspace>> idle;
};

// Hands a workspace back to its plan's pool at the end of a run, whatever happened.
class Executable::Lease {
 public:
  Lease(std::shared_ptr<PlanEntry> entry, std::unique_ptr<Workspace> ws)
      : entry_(std::move(entry)), ws_(std::move(ws)) {}
  ~Lease() {
    ws_->state.free_owned();  // fallbacks an error left behind
    std::lock_guard<std::mutex> lock(entry_->mu);
    entry_->idle.push_back(std::move(ws_));
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  Workspace& workspace() { return *ws_; }

 private:
  std::shared_ptr<PlanEntry> entry_;
  std::unique_ptr<Workspace> ws_;
};

// Checks that a tensor the host handed over (input or output) is one of this plugin's
// buffers and holds enough bytes for dtype/dims. `what()` names it in errors; it is only
// called on failure, so a good tensor costs no string building.
template <typename What>
static Status check_abi_tensor(const infer_tensor& t, infer_dtype dtype, const int64_t* dims,
                               size_t rank, What&& what) {
  if (t.buffer == nullptr || t.buffer->magic != kCpuBufferMagic)
    return invalid(what(), ": buffer is not a cpu plugin buffer");
  const size_t need = sdk::tensor_bytes(dtype, sdk::element_count(dims, rank));
  if (t.size_bytes < need)
    return invalid(what(), ": ", t.size_bytes, " bytes for ", dtype_name(dtype),
                   dims_str(Dims(dims, dims + rank)), ", need ", need);
  if (t.offset > t.buffer->size || t.buffer->size - t.offset < need)
    return invalid(what(), ": offset ", t.offset, " + ", need, " bytes exceeds the buffer's ",
                   t.buffer->size);
  return Status::ok();
}

// Points a host-side Tensor at a checked ABI tensor.
static void bind_abi_tensor(const infer_tensor& t, infer_dtype dtype, const int64_t* dims,
                            size_t rank, Tensor* out) {
  out->dtype = dtype;
  out->dims.assign(dims, dims + rank);
  out->data = static_cast<uint8_t*>(t.buffer->data) + t.offset;
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
    CPU_RETURN_IF_ERROR(check_abi_tensor(t, dtype, dims.data(), dims.size(),
                                         [&] { return cat("output '", name, "'"); }));
    bind_abi_tensor(t, dtype, dims.data(), dims.size(), out);
    return Status::ok();
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
      const int pi = slot.plan_index;
      if (pi >= 0 && state_.recorded != nullptr) (*state_.recorded)[pi] = bytes;
      if (bytes > 0 && pi >= 0 && state_.plan != nullptr && bytes <= state_.plan->sizes[pi]) {
        t.data = state_.block + state_.plan->offsets[pi];
      } else if (bytes > 0) {
        // Not planned, a recording run, or more bytes than the plan holds (a shape that
        // depends on the data): memory of its own for this run.
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
    const bool sized = s.dtype == INFER_DTYPE_INT4 || s.dtype == INFER_DTYPE_UINT4 ||
                       sdk::dtype_size(s.dtype) > 0;
    if (sized && v->rank >= 0 && (v->rank == 0 || v->dims != nullptr)) {
      s.static_shape = true;
      for (int64_t r = 0; r < v->rank; ++r)
        if (v->dims[r] < 0) s.static_shape = false;
      if (s.static_shape)
        s.static_bytes = sdk::tensor_bytes(
            s.dtype, sdk::element_count(v->dims, static_cast<size_t>(v->rank)));
    }
    exe->slots_.push_back(std::move(s));
    const int id = static_cast<int>(exe->slots_.size() - 1);
    slot_of[v] = id;
    return id;
  };
  // A constant value, used in place: the ABI keeps const_data alive for the
  // executable's lifetime. A weight the host freed for our prepacked form gets a slot
  // without data: its kernel reads only the prepacked form (see is_prepacked_only).
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
      } else if (v->const_data != nullptr || is_prepacked_only(v)) {
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
      const int s = add_slot(v);
      exe->slots_[s].producer = static_cast<int>(exe->steps_.size());
      step.outputs.push_back(s);
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
  if (NodeProfile::enabled()) {
    std::vector<NodeProfile::Node> nodes;
    for (const Step& step : exe->steps_) nodes.push_back({step.node_name, step.op_type});
    exe->profile_ = std::make_unique<NodeProfile>(exe->name_, std::move(nodes));
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
  exe->plan_lifetimes();
  return exe;
}

// The values a node produces that are not graph outputs are planned: they are born at
// their producer and die after their last reader, which is exactly when the
// per-value path frees them. Values read by a node's bodies count as read by that
// node (the bodies run inside its step), so they are planned too. Graph outputs go to
// the sink; inputs, captures and constants are someone else's memory.
void Executable::plan_lifetimes() {
  // INFER_CPU_PLAN_MEMORY=0 keeps the per-value allocations, to measure what planning
  // gains (or to rule it out when chasing a memory bug).
  static const bool enabled = [] {
    const char* env = std::getenv("INFER_CPU_PLAN_MEMORY");
    return env == nullptr || std::string(env) != "0";
  }();
  if (!enabled) return;
  std::vector<char> is_output(slots_.size(), 0);
  for (int s : outputs_) is_output[s] = 1;
  bool all_static = true;
  for (size_t s = 0; s < slots_.size(); ++s) {
    Slot& slot = slots_[s];
    if (slot.producer < 0 || slot.first_output >= 0 || is_output[s]) continue;
    slot.plan_index = static_cast<int>(planned_slots_.size());
    planned_slots_.push_back(static_cast<int>(s));
    PlanInterval iv;
    iv.first = slot.producer;
    iv.last = std::max(slot.last_use, slot.producer);
    iv.bytes = slot.static_bytes;
    lifetimes_.push_back(iv);
    all_static = all_static && slot.static_shape;
  }
  if (!planned_slots_.empty() && all_static) {
    static_plan_ = std::make_shared<PlanEntry>();
    static_plan_->plan = plan_memory(lifetimes_, kAlignment);
    if (!subgraph_) {
      size_t separate = 0;
      for (size_t size : static_plan_->plan.sizes) separate += size;
      host_.log(INFER_LOG_INFO, cat("partition '", name_, "': ", planned_slots_.size(),
                                    " intermediate values share a ", static_plan_->plan.total,
                                    "-byte block per concurrent run (", separate,
                                    " bytes if each had its own)"));
    }
  }
}

size_t Executable::cached_plans() const {
  std::lock_guard<std::mutex> lock(plan_mu_);
  return plan_cache_.size();
}

void Executable::append_key(std::vector<int64_t>& key, infer_dtype dtype, const int64_t* dims,
                            size_t rank) {
  key.push_back(static_cast<int64_t>(dtype));
  key.push_back(static_cast<int64_t>(rank));
  key.insert(key.end(), dims, dims + rank);
}

std::shared_ptr<Executable::PlanEntry> Executable::find_plan(
    const std::vector<int64_t>& key) const {
  std::lock_guard<std::mutex> lock(plan_mu_);
  for (const auto& entry : plan_cache_)
    if (entry->key == key) {
      entry->last_used = ++plan_clock_;
      return entry;
    }
  return nullptr;
}

void Executable::add_plan(std::vector<int64_t> key, const std::vector<size_t>& sizes) const {
  std::vector<PlanInterval> intervals = lifetimes_;
  for (size_t i = 0; i < intervals.size(); ++i) intervals[i].bytes = sizes[i];
  auto entry = std::make_shared<PlanEntry>();
  entry->key = std::move(key);
  entry->plan = plan_memory(intervals, kAlignment);
  std::lock_guard<std::mutex> lock(plan_mu_);
  // Two runs of a new signature may both have recorded it; the first plan stays.
  for (const auto& e : plan_cache_)
    if (e->key == entry->key) return;
  if (plan_cache_.size() >= kMaxCachedPlans) {
    auto oldest = std::min_element(
        plan_cache_.begin(), plan_cache_.end(),
        [](const auto& a, const auto& b) { return a->last_used < b->last_used; });
    plan_cache_.erase(oldest);  // runs still using it keep it alive
  }
  entry->last_used = ++plan_clock_;
  plan_cache_.push_back(std::move(entry));
}

Result<std::unique_ptr<Executable::Workspace>> Executable::take_workspace(PlanEntry& entry) const {
  {
    std::lock_guard<std::mutex> lock(entry.mu);
    if (!entry.idle.empty()) {
      std::unique_ptr<Workspace> ws = std::move(entry.idle.back());
      entry.idle.pop_back();
      return ws;
    }
  }
  // Every workspace is in use (or none exists yet): one more, kept for later runs.
  auto ws = std::make_unique<Workspace>(host_, slots_.size(), outputs_.size());
  if (entry.plan.total > 0) {
    ws->block = host_.raw()->host_alloc(host_.raw()->host_ctx, entry.plan.total, kAlignment);
    if (ws->block == nullptr)
      return Status(INFER_STATUS_OUT_OF_MEMORY,
                    cat("out of host memory allocating ", entry.plan.total,
                        " bytes for the intermediate values of '", name_, "'"));
  }
  return ws;
}

template <typename Bind, typename Run>
Status Executable::run_with_memory(const std::shared_ptr<PlanEntry>& entry,
                                   const std::vector<int64_t>* key, Bind&& bind,
                                   Run&& run) const {
  if (entry != nullptr) {
    CPU_ASSIGN_OR_RETURN(std::unique_ptr<Workspace> ws, take_workspace(*entry));
    Lease lease(entry, std::move(ws));
    RunState& state = lease.workspace().state;
    state.reset();
    state.block = static_cast<uint8_t*>(lease.workspace().block);
    state.plan = &entry->plan;
    CPU_RETURN_IF_ERROR(bind(state));
    return run(state);
  }
  // No plan for this signature yet: allocate per value while recording the sizes, and
  // plan them once the run succeeded.
  RunState state(host_, slots_.size(), outputs_.size());
  std::vector<size_t> recorded(planned_slots_.size(), 0);
  if (key != nullptr) state.recorded = &recorded;
  CPU_RETURN_IF_ERROR(bind(state));
  Status st = run(state);
  if (st.is_ok() && key != nullptr) add_plan(*key, recorded);
  return st;
}

void Executable::bind_constants(RunState& state) const {
  for (size_t s = 0; s < slots_.size(); ++s)
    if (slots_[s].is_const) {
      state.values[s] = slots_[s].const_tensor;
      state.ready[s] = 1;
    }
}

Status Executable::validate_inputs(const infer_execute_args& args) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const infer_tensor& t = args.inputs[i];
    const Slot& slot = slots_[inputs_[i]];
    if (t.rank > 0 && t.dims == nullptr)
      return invalid("input ", i, " ('", slot.name, "'): dims is NULL");
    if (slot.dtype != INFER_DTYPE_UNDEFINED && t.dtype != slot.dtype)
      return invalid("input ", i, " ('", slot.name, "') is ", dtype_name(t.dtype), ", expected ",
                     dtype_name(slot.dtype));
    for (size_t r = 0; r < t.rank; ++r)
      if (t.dims[r] < 0)
        return invalid("input ", i, " ('", slot.name, "') has a negative dim in ",
                       dims_str(Dims(t.dims, t.dims + t.rank)));
    CPU_RETURN_IF_ERROR(check_abi_tensor(t, t.dtype, t.dims, t.rank, [&] {
      return cat("input ", i, " ('", slot.name, "')");
    }));
  }
  return Status::ok();
}

void Executable::bind_inputs(const infer_execute_args& args, RunState& state) const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const infer_tensor& t = args.inputs[i];
    const int s = inputs_[i];
    bind_abi_tensor(t, t.dtype, t.dims, t.rank, &state.values[s]);
    state.ready[s] = 1;
  }
  bind_constants(state);
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
  return validate_inputs(args);
}

Status Executable::run_steps(RunState& state, OutputSink& sink,
                             const infer_run_context* run) const {
  const infer_host_services* h = host_.raw();
  const bool can_cancel =
      INFER_HAS_FIELD(h, infer_host_services, is_cancelled) && h->is_cancelled != nullptr;
  if (profile_ != nullptr) profile_->add_run();
  for (size_t n = 0; n < steps_.size(); ++n) {
    const Step& step = steps_[n];
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
    const auto start = profile_ != nullptr ? std::chrono::steady_clock::now()
                                           : std::chrono::steady_clock::time_point{};
    Status st = step.kernel->run(ctx);
    if (profile_ != nullptr)
      profile_->add(n, std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count());
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

// The signature key is built in a per-thread buffer that keeps its capacity, so finding
// the plan of a known signature allocates nothing. Nested bodies run only after the key
// has been used (a recording run copies it first).
static std::vector<int64_t>& key_buffer() {
  thread_local std::vector<int64_t> key;
  key.clear();
  return key;
}

Status Executable::execute(const infer_execute_args& args) const {
  CPU_RETURN_IF_ERROR(check_args(args));
  std::shared_ptr<PlanEntry> entry = static_plan_;
  std::vector<int64_t> recording_key;
  if (entry == nullptr && !planned_slots_.empty()) {
    std::vector<int64_t>& key = key_buffer();
    for (size_t i = 0; i < inputs_.size(); ++i)
      append_key(key, args.inputs[i].dtype, args.inputs[i].dims, args.inputs[i].rank);
    entry = find_plan(key);
    if (entry == nullptr) recording_key = key;
  }
  AbiSink sink(host_, args);
  return run_with_memory(
      entry, entry == nullptr && !planned_slots_.empty() ? &recording_key : nullptr,
      [&](RunState& state) {
        bind_inputs(args, state);
        return Status::ok();
      },
      [&](RunState& state) { return run_steps(state, sink, args.run); });
}

Status Executable::run_body(std::span<const Tensor* const> inputs,
                            std::span<const Tensor* const> captures, const infer_run_context* run,
                            std::vector<OwnedTensor>* outputs) const {
  if (inputs.size() != inputs_.size())
    return internal("body '", name_, "' takes ", inputs_.size(), " inputs, got ", inputs.size());
  if (captures.size() != captures_.size())
    return internal("body '", name_, "' captures ", captures_.size(), " values, got ",
                    captures.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Slot& slot = slots_[inputs_[i]];
    if (inputs[i] == nullptr) return internal("body input ", i, " ('", slot.name, "') is NULL");
    // Bodies declare their input types; a value of another type (e.g. a loop-carried
    // value whose type changes) is refused rather than misread.
    if (slot.dtype != INFER_DTYPE_UNDEFINED && inputs[i]->dtype != slot.dtype)
      return invalid("body '", name_, "' input '", slot.name, "' is declared ",
                     dtype_name(slot.dtype), " but gets ", dtype_name(inputs[i]->dtype));
  }
  for (size_t j = 0; j < captures.size(); ++j)
    if (captures[j] == nullptr || (captures[j]->data == nullptr && captures[j]->bytes() > 0))
      return internal("captured value '", slots_[capture_slots_[j]].name, "' is not available");
  // A body's signature covers its captures too: intermediate shapes may depend on them.
  std::shared_ptr<PlanEntry> entry = static_plan_;
  std::vector<int64_t> recording_key;
  if (entry == nullptr && !planned_slots_.empty()) {
    std::vector<int64_t>& key = key_buffer();
    for (const Tensor* t : inputs) append_key(key, t->dtype, t->dims.data(), t->dims.size());
    for (const Tensor* t : captures) append_key(key, t->dtype, t->dims.data(), t->dims.size());
    entry = find_plan(key);
    if (entry == nullptr) recording_key = key;
  }
  outputs->clear();
  outputs->resize(outputs_.size());
  BodySink sink(host_, outputs);
  Status st = run_with_memory(
      entry, entry == nullptr && !planned_slots_.empty() ? &recording_key : nullptr,
      [&](RunState& state) {
        for (size_t i = 0; i < inputs.size(); ++i) {
          state.values[inputs_[i]] = *inputs[i];
          state.ready[inputs_[i]] = 1;
        }
        for (size_t j = 0; j < captures.size(); ++j) {
          state.values[capture_slots_[j]] = *captures[j];
          state.ready[capture_slots_[j]] = 1;
        }
        bind_constants(state);
        return Status::ok();
      },
      [&](RunState& state) { return run_steps(state, sink, run); });
  if (!st.is_ok()) outputs->clear();
  return st;
}

}  // namespace infer::cpu
