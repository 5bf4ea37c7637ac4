// Executables (infer_executable): a compiled partition.
//
// compile (compile.cpp) copies the graph view into a Program: numbered values, one Step
// per node with its NodeInfo and OpKernel, and every constant input uploaded once to
// device-local memory. The Program never changes afterwards.
//
// A Plan (plan.cpp) is the Program instantiated for one signature of input shapes: every
// value's dims and where it lives (a graph input or output tensor, a constant, or an
// offset in the per-execution arena), the kernels' dispatches with their pipelines
// resolved, and the copies that alias outputs need. Plans are cached per signature.
//
// execute (execute.cpp) takes the plan for the inputs' shapes, asks the host for the
// outputs, allocates the arena, records every dispatch into one command buffer with a
// barrier between consecutive ones, and enqueues it on the stream with the execution's
// waits and signals. Executing from several threads at once is safe: executions share
// only the immutable Program and Plans.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device.hpp"
#include "op_kernel.hpp"
#include "pipelines.hpp"
#include "stream.hpp"

namespace infer::vk {

struct Program {
  struct Value {
    enum class Source { kGraphInput, kConstant, kNodeOutput };
    Source source = Source::kNodeOutput;
    std::string name;
    // The dtype and shape the graph view declares (UNDEFINED, -1: unknown); execute
    // checks inputs against it, and plans start from it.
    sdk::TensorInfo view;
    // Constants: their dims and bytes on the host, and their copy on the device.
    const void* host_data = nullptr;
    size_t host_bytes = 0;
    std::unique_ptr<Buffer> device_copy;
  };
  struct Step {
    NodeInfo node;
    const OpKernel* kernel = nullptr;
    std::vector<int64_t> inputs;   // value ids; -1 for an omitted input
    std::vector<int64_t> outputs;  // value ids (omitted outputs get an unnamed value)
  };

  std::string name;  // the partition's, for messages
  std::vector<Value> values;
  std::vector<Step> steps;      // topological order
  std::vector<size_t> inputs;   // value ids in binding order
  std::vector<size_t> outputs;  // value ids in return order
};

// Where a tensor lives during one execution; resolved to (VkBuffer, offset) at execute.
struct Slot {
  enum class Kind { kGraphInput, kGraphOutput, kConstant, kArena, kEmpty };
  Kind kind = Kind::kEmpty;
  size_t index = 0;          // graph input/output position, or value id for constants
  VkDeviceSize offset = 0;   // arena offset
  VkDeviceSize bytes = 0;    // the tensor's size (0: bind the placeholder buffer)
};

struct Plan {
  struct Action {
    enum class Kind { kDispatch, kCopy };
    Kind kind = Kind::kDispatch;
    const Pipeline* pipeline = nullptr;
    std::vector<uint32_t> push;
    std::vector<Slot> bindings;
    uint32_t groups[3] = {1, 1, 1};
    Slot src, dst;  // kCopy
  };
  std::vector<std::vector<int64_t>> dims;  // per value
  std::vector<infer_dtype> dtypes;         // per value
  std::vector<Action> actions;
  VkDeviceSize arena_bytes = 0;
  uint32_t num_dispatches = 0;
  uint32_t num_descriptors = 0;
};

class Executable {
 public:
  static MaybeFailure compile(Device& device, const infer_graph_view& graph,
                              const infer_compile_options* options,
                              std::unique_ptr<Executable>* out);
  MaybeFailure execute(Stream& stream, const infer_execute_args* args);
  Device& device() const { return device_; }

 private:
  Executable(Device& device, std::shared_ptr<const Program> program)
      : device_(device), program_(std::move(program)) {}
  // The cached plan for these input dims, built on first use.
  MaybeFailure plan_for(const std::vector<std::vector<int64_t>>& input_dims,
                        std::shared_ptr<const Plan>* out);

  Device& device_;
  std::shared_ptr<const Program> program_;
  std::mutex plans_mu_;
  std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> plans_;  // by shape signature
};

// Builds the plan of `program` for concrete input dims (plan.cpp).
MaybeFailure build_plan(Device& device, const Program& program,
                        const std::vector<std::vector<int64_t>>& input_dims,
                        std::shared_ptr<const Plan>* out);

}  // namespace infer::vk
