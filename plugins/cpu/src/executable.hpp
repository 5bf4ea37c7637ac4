// A compiled partition: one kernel per node, in the graph's topological order, over a
// table of value slots (graph inputs, constants used in place, and values the nodes
// produce). Every per-run buffer lives in a RunState that one run has to itself, so one
// executable may run from many threads at once.
//
// Intermediate values (produced by a node, not graph outputs) live in one planned
// block per run: memory_plan.hpp places them by lifetime so that values never live at
// the same time share bytes. The sizes come from the declared static shapes when every
// intermediate has one (one plan for all runs), else from the first run with a given
// signature (the dtypes and dims of the inputs, and of the captures for a body), which
// allocates per value as before while it records them. Plans are cached per signature
// (the 8 most recently used). Each plan keeps a pool of workspaces (a block plus a
// RunState whose vectors keep their capacity), so a steady-state run takes one from the
// pool and allocates no tensor memory. A kernel that asks for more bytes than the plan
// holds for a value (data-dependent shapes: NonZero, Unique, ...) gets host_alloc'd
// memory for that value in that run. INFER_CPU_PLAN_MEMORY=0 turns planning off.
//
// The same machinery compiles the bodies of control-flow nodes (If/Loop/Scan):
// compile_subgraph() accepts values captured from enclosing graphs, and run_body() runs
// the body on tensors the calling kernel owns, returning the outputs in host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "kernel.hpp"
#include "memory_plan.hpp"
#include "node_profile.hpp"
#include "status.hpp"

namespace infer::cpu {

// A tensor whose data this object owns (allocated with the host's host_alloc and freed
// with host_free). Movable, not copyable. What a body run hands back to its kernel.
class OwnedTensor {
 public:
  OwnedTensor() = default;
  ~OwnedTensor() { reset(); }
  OwnedTensor(OwnedTensor&& o) noexcept : host_(o.host_), t_(std::move(o.t_)) {
    o.host_ = nullptr;
    o.t_.data = nullptr;
  }
  OwnedTensor& operator=(OwnedTensor&& o) noexcept {
    if (this != &o) {
      reset();
      host_ = o.host_;
      t_ = std::move(o.t_);
      o.host_ = nullptr;
      o.t_.data = nullptr;
    }
    return *this;
  }
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;

  // Uninitialized data for dtype/dims (no allocation when the tensor is empty).
  static Result<OwnedTensor> allocate(const sdk::Host& host, infer_dtype dtype, const Dims& dims);
  // A copy of `src`'s data.
  static Result<OwnedTensor> copy_of(const sdk::Host& host, const Tensor& src);

  const Tensor& tensor() const { return t_; }
  Tensor& tensor() { return t_; }
  bool empty_slot() const { return t_.dtype == INFER_DTYPE_UNDEFINED; }

 private:
  void reset();
  const sdk::Host* host_ = nullptr;  // set when t_.data is ours to free
  Tensor t_;
};

class Executable {
 public:
  static Result<std::unique_ptr<Executable>> compile(const sdk::Host& host, infer_device* device,
                                                     const infer_graph_view& graph);
  // Compiles the body of a control-flow node. A value that a node (or a nested body)
  // reads, or that the body returns, and that is neither a body input, a constant nor
  // produced by an earlier node of the body is captured from an enclosing graph: it is
  // listed in captures() and bound by run_body().
  static Result<std::unique_ptr<Executable>> compile_subgraph(const sdk::Host& host,
                                                              const infer_graph_view& graph);
  // Checks what can be checked before running (counts, buffers, input dtypes and
  // sizes); execute() repeats these checks, so calling this is optional.
  Status check_args(const infer_execute_args& args) const;
  // Runs every node. Errors name the node: "node 'g' (Gather): index 7 out of range ...".
  Status execute(const infer_execute_args& args) const;

  // Runs a body compiled by compile_subgraph(): inputs[i] is body input i, captures[j]
  // the value captures()[j]; both are borrowed for the call. On success *outputs holds
  // one tensor per body output, in host memory the caller now owns.
  Status run_body(std::span<const Tensor* const> inputs, std::span<const Tensor* const> captures,
                  const infer_run_context* run, std::vector<OwnedTensor>* outputs) const;

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  // Values captured from enclosing graphs (compile_subgraph only), by view pointer. The
  // pointers are identities for matching against the enclosing graph's views, never
  // dereferenced after compilation.
  std::span<const infer_value_view* const> captures() const { return captures_; }

  // Planning figures, for tests and reports: how many values are planned, whether one
  // plan from the declared shapes serves every run, and how many plans are cached.
  size_t planned_values() const { return planned_slots_.size(); }
  bool has_static_plan() const { return static_plan_ != nullptr; }
  size_t cached_plans() const;

  // At most this many signatures keep a plan (least recently used go first).
  static constexpr size_t kMaxCachedPlans = 8;

 private:
  struct Slot {
    std::string name;
    infer_dtype dtype = INFER_DTYPE_UNDEFINED;  // as the view declares it
    int input_index = -1;                       // a graph input
    int capture_index = -1;                     // a value captured from an enclosing graph
    bool is_const = false;
    Tensor const_tensor;    // constant data, used in place
    int first_output = -1;  // the graph output allocated by its producer
    int producer = -1;      // step that produces it
    int last_use = -1;      // step after which a temporary is freed
    int plan_index = -1;    // index among the planned values, or -1
    bool static_shape = false;  // the view declares every dim and a sized dtype
    size_t static_bytes = 0;    // its bytes then
  };
  struct Step {
    std::string node_name, op_type;
    KernelPtr kernel;
    std::vector<int> inputs;      // slot per node input; -1 when omitted
    std::vector<int> outputs;     // slot per node output; -1 when omitted
    std::vector<int> captures;    // slot per kernel->captures() entry
    std::vector<int> free_after;  // temporaries whose last use is this step
    std::string prefix() const { return "node '" + node_name + "' (" + op_type + "): "; }
  };
  class RunState;
  struct Workspace;
  struct PlanEntry;
  class Lease;
  class NodeContext;
  class OutputSink;
  class AbiSink;
  class BodySink;

  // The device is not kept: nothing reads it after compilation (clang's
  // -Wunused-private-field caught the field that held it).
  Executable(const sdk::Host& host, infer_device* /*device*/) : host_(host) {}
  static Result<std::unique_ptr<Executable>> compile_impl(const sdk::Host& host,
                                                          infer_device* device,
                                                          const infer_graph_view& graph,
                                                          bool subgraph);
  Status validate_inputs(const infer_execute_args& args) const;
  void bind_inputs(const infer_execute_args& args, RunState& state) const;
  void plan_lifetimes();
  // The signature of a run: dtype, rank and dims of each tensor, flattened.
  static void append_key(std::vector<int64_t>& key, infer_dtype dtype, const int64_t* dims,
                         size_t rank);
  std::shared_ptr<PlanEntry> find_plan(const std::vector<int64_t>& key) const;
  void add_plan(std::vector<int64_t> key, const std::vector<size_t>& sizes) const;
  Result<std::unique_ptr<Workspace>> take_workspace(PlanEntry& entry) const;
  // Runs with a workspace of `entry`'s plan, or (entry null) in a recording RunState;
  // bind(state) binds inputs and captures, run(state) runs the steps.
  template <typename Bind, typename Run>
  Status run_with_memory(const std::shared_ptr<PlanEntry>& entry, const std::vector<int64_t>* key,
                         Bind&& bind, Run&& run) const;
  void bind_constants(RunState& state) const;
  Status run_steps(RunState& state, OutputSink& sink, const infer_run_context* run) const;
  Status finish_outputs(OutputSink& sink, RunState& state) const;

  sdk::Host host_;
  std::string name_;
  bool subgraph_ = false;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<int> inputs_;                        // slot of each graph input
  std::vector<int> outputs_;                       // slot of each graph output
  std::vector<const infer_value_view*> captures_;  // subgraphs: captured values
  std::vector<int> capture_slots_;                 // slot of each captured value
  std::vector<int> planned_slots_;                 // slot of each planned value
  std::vector<PlanInterval> lifetimes_;            // steps each planned value is live
  std::shared_ptr<PlanEntry> static_plan_;         // when every size is known statically
  mutable std::mutex plan_mu_;                     // guards plan_cache_ and plan_clock_
  mutable std::vector<std::shared_ptr<PlanEntry>> plan_cache_;
  mutable uint64_t plan_clock_ = 0;
  std::unique_ptr<NodeProfile> profile_;  // INFER_CPU_PROFILE only
};

}  // namespace infer::cpu
