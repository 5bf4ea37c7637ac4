// A compiled partition: one kernel per node, in the graph's topological order, over a
// table of value slots (graph inputs, constants used in place, and values the nodes
// produce). execute() keeps every per-run buffer in a local RunState, so one
// executable may run from many threads at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "kernel.hpp"
#include "status.hpp"

namespace infer::cpu {

class Executable {
 public:
  static Result<std::unique_ptr<Executable>> compile(const sdk::Host& host, infer_device* device,
                                                     const infer_graph_view& graph);
  // Checks what can be checked before running (counts, buffers, input dtypes and
  // sizes); execute() repeats these checks, so calling this is optional.
  Status check_args(const infer_execute_args& args) const;
  // Runs every node. Errors name the node: "node 'g' (Gather): index 7 out of range ...".
  Status execute(const infer_execute_args& args) const;

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }

 private:
  struct Slot {
    std::string name;
    infer_dtype dtype = INFER_DTYPE_UNDEFINED;  // as the view declares it
    int input_index = -1;                       // a graph input
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
    std::vector<int> free_after;  // temporaries whose last use is this step
    std::string prefix() const { return "node '" + node_name + "' (" + op_type + "): "; }
  };
  class RunState;
  class NodeContext;

  Executable(const sdk::Host& host, infer_device* device) : host_(host), device_(device) {}
  Status bind_inputs(const infer_execute_args& args, RunState& state) const;
  Status finish_outputs(const infer_execute_args& args, RunState& state) const;

  sdk::Host host_;
  infer_device* device_;
  std::string name_;
  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<int> inputs_;   // slot of each graph input
  std::vector<int> outputs_;  // slot of each graph output
};

}  // namespace infer::cpu
