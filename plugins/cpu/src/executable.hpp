// A compiled partition: one kernel per node, in the graph's topological order, over a
// table of value slots (graph inputs, constants used in place, and values the nodes
// produce). execute() keeps every per-run buffer in a local RunState, so one
// executable may run from many threads at once.
//
// The same machinery compiles the bodies of control-flow nodes (If/Loop/Scan):
// compile_subgraph() accepts values captured from enclosing graphs, and run_body() runs
// the body on tensors the calling kernel owns, returning the outputs in host memory.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "kernel.hpp"
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

 private:
  struct Slot {
    std::string name;
    infer_dtype dtype = INFER_DTYPE_UNDEFINED;  // as the view declares it
    int input_index = -1;                       // a graph input
    int capture_index = -1;                     // a value captured from an enclosing graph
    bool is_const = false;
    Tensor const_tensor;    // constant data, used in place
    int first_output = -1;  // the graph output allocated by its producer
    int last_use = -1;      // step after which a temporary is freed
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
  class NodeContext;
  class OutputSink;
  class AbiSink;
  class BodySink;

  Executable(const sdk::Host& host, infer_device* device) : host_(host), device_(device) {}
  static Result<std::unique_ptr<Executable>> compile_impl(const sdk::Host& host,
                                                          infer_device* device,
                                                          const infer_graph_view& graph,
                                                          bool subgraph);
  Status bind_inputs(const infer_execute_args& args, RunState& state) const;
  void bind_constants(RunState& state) const;
  Status run_steps(RunState& state, OutputSink& sink, const infer_run_context* run) const;
  Status finish_outputs(OutputSink& sink, RunState& state) const;

  sdk::Host host_;
  infer_device* device_;
  std::string name_;
  bool subgraph_ = false;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<int> inputs_;                        // slot of each graph input
  std::vector<int> outputs_;                       // slot of each graph output
  std::vector<const infer_value_view*> captures_;  // subgraphs: captured values
  std::vector<int> capture_slots_;                 // slot of each captured value
};

}  // namespace infer::cpu
