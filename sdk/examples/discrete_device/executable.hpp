// Executables (infer_executable): a compiled partition.
//
// compile turns a read-only graph view into a Program: the nodes as a list of steps over
// numbered values, with every constant already uploaded into device memory. The Program
// never changes afterwards, which is what makes executing it from many threads at once
// safe: each execute builds its own Launch (shapes, memory) and only reads the Program.
//
// execute does the host-side half of a run synchronously, because the host needs some
// answers before execute returns (the output shapes, to allocate outputs) and because
// errors found before enqueueing are reported directly: it binds the inputs, computes
// every value's shape from the input dims, allocates intermediates and outputs, and then
// enqueues waits, one kernel per node, and signals on the stream. The kernels themselves
// run later on the stream's queue thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "buffer.hpp"
#include "ops.hpp"
#include "stream.hpp"

namespace infer::example {

// The compiled form of a partition. Immutable once built.
struct Program {
  static constexpr size_t kNone = static_cast<size_t>(-1);  // an omitted optional input

  struct Value {
    enum class Source { kGraphInput, kConstant, kNodeOutput };
    Source source = Source::kNodeOutput;
    std::string name;
    // The dtype and shape the graph view declares (dtype always float32 here, since
    // every op of the example is float32-only): what execute checks inputs against.
    sdk::TensorInfo view;
    // Constants only: their concrete dims and their copy in device memory.
    Dims const_dims;
    std::unique_ptr<Buffer> device_copy;
  };
  struct Step {
    const OpInfo* op = nullptr;
    std::string node_name;
    std::vector<size_t> inputs;  // value ids; kNone for an omitted optional input
    size_t output = kNone;       // value id
    NodeAttrs attrs;
  };

  std::string name;  // for messages: the partition name
  std::vector<Value> values;
  std::vector<Step> steps;      // in the graph view's topological order
  std::vector<size_t> inputs;   // value ids, in graph input order
  std::vector<size_t> outputs;  // value ids, in graph output order
};

class Executable {
 public:
  static MaybeFailure compile(Device& device, const infer_graph_view& graph,
                              const infer_compile_options* options,
                              std::unique_ptr<Executable>* out);

  // Enqueues one execution on `stream` (see the top of this file). Safe to call from
  // several threads at once on different streams.
  MaybeFailure execute(Stream& stream, const infer_execute_args* args) const;

  Device& device() const { return device_; }

 private:
  Executable(Device& device, std::shared_ptr<const Program> program)
      : device_(device), program_(std::move(program)) {}

  Device& device_;
  // Shared with the executions in flight, so that destroying the executable while a
  // queue still holds its kernels cannot free the constants under them.
  std::shared_ptr<const Program> program_;
};

}  // namespace infer::example
