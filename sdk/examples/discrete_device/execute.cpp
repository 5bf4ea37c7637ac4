// Executable::execute: bind, size, allocate and enqueue one run of a Program.
#include <string>

#include "capability.hpp"
#include "executable.hpp"
#include "handles.hpp"

namespace infer::example {
namespace {

// Where a value lives for one execution.
struct Location {
  const Buffer* buffer = nullptr;
  size_t offset = 0;
};

// Everything one execution needs on the queue thread. Shared by its kernel items; the
// last one to finish releases the intermediates' device memory.
struct Launch {
  std::shared_ptr<const Program> program;
  std::vector<Dims> dims;                            // concrete dims of every value
  std::vector<Location> where;                       // memory of every value
  std::vector<std::unique_ptr<Buffer>> temporaries;  // intermediates of this run
  const sdk::Host* host = nullptr;
  infer_run_context* run = nullptr;
};

// One kernel launch, on the queue thread.
MaybeFailure run_step(const Launch& launch, size_t step_index) {
  const Program::Step& step = launch.program->steps[step_index];
  // Long runs should stop promptly when the user cancels: poll before every kernel. The
  // host keeps the run context alive until the executions given it have finished.
  if (launch.host->cancelled(launch.run)) {
    return failure(INFER_STATUS_CANCELLED, "example: run cancelled before node '" + step.node_name +
                                               "' (" + std::string(step.op->op_type) + ")");
  }
  auto address = [&](size_t id) {
    const Location& at = launch.where[id];
    return reinterpret_cast<float*>(at.buffer->data() + at.offset);
  };
  KernelArgs args;
  for (size_t id : step.inputs) {
    args.inputs.push_back(id == Program::kNone ? nullptr : address(id));
    args.input_dims.push_back(id == Program::kNone ? nullptr : &launch.dims[id]);
  }
  args.output = address(step.output);
  args.output_dims = &launch.dims[step.output];
  args.attrs = &step.attrs;
  step.op->run(args);
  return std::nullopt;
}

// What the SDK's memory check needs to know about the buffer an input names.
std::optional<sdk::BufferExtent> extent(const Buffer* buffer, const Device& device) {
  if (buffer == nullptr) return std::nullopt;
  return sdk::BufferExtent{buffer->size(), &buffer->device() == &device};
}

size_t float_bytes(const Dims& dims) {
  return static_cast<size_t>(element_count(dims)) * sizeof(float);
}

}  // namespace

MaybeFailure Executable::execute(Stream& stream, const infer_execute_args* args_ptr) const {
  const infer_execute_args& args = *args_ptr;
  const Program& program = *program_;
  auto invalid = [&](const std::string& what) {
    return failure(INFER_STATUS_INVALID_ARGUMENT,
                   "example: execute of partition '" + program.name + "': " + what);
  };

  // ---- The argument struct itself --------------------------------------------------
  // Its size, the counts against the program, the arrays and the events: the checks
  // every plugin makes, written once in the SDK.
  if (&stream.device() != &device_) return invalid("the stream belongs to another device");
  if (std::optional<std::string> why =
          sdk::check_execute_args(args_ptr, program.inputs.size(), program.outputs.size()))
    return invalid(*why);

  auto launch = std::make_shared<Launch>();
  launch->program = program_;
  launch->dims.resize(program.values.size());
  launch->where.resize(program.values.size());
  launch->host = &device_.host();
  launch->run = INFER_HAS_FIELD(args_ptr, infer_execute_args, run) ? args.run : nullptr;

  // ---- Bind the inputs: check each tensor against the graph view -------------------
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const infer_tensor& t = args.inputs[i];
    const size_t id = program.inputs[i];
    const Program::Value& value = program.values[id];
    const std::string label = sdk::input_label(i, value.name);
    // Dtype, rank and every fixed dim as the graph view declared them.
    Dims dims;
    if (std::optional<std::string> why = sdk::check_input_tensor(t, label, value.view, &dims))
      return invalid(*why);
    // Enough memory of this device behind the tensor.
    const auto* buffer = from_handle(t.buffer);
    if (std::optional<std::string> why = sdk::check_tensor_memory(
            t, label, sdk::tensor_bytes(value.view.dtype, element_count(dims)),
            extent(buffer, device_)))
      return invalid(*why);
    launch->dims[id] = std::move(dims);
    launch->where[id] = Location{buffer, t.offset};
  }
  for (size_t id = 0; id < program.values.size(); ++id) {
    const Program::Value& value = program.values[id];
    if (value.source != Program::Value::Source::kConstant) continue;
    launch->dims[id] = value.const_dims;
    launch->where[id] = Location{value.device_copy.get(), 0};
  }

  // ---- Shapes: every node's output dims from its input dims ------------------------
  // This is why output shapes can be dynamic: they are known as soon as the input dims
  // are, before any kernel has run.
  for (const Program::Step& step : program.steps) {
    std::vector<const Dims*> in;
    for (size_t id : step.inputs) in.push_back(id == Program::kNone ? nullptr : &launch->dims[id]);
    if (std::optional<std::string> why =
            step.op->output_dims(in, step.attrs, &launch->dims[step.output]))
      return invalid("node '" + step.node_name + "' (" + std::string(step.op->op_type) +
                     "): " + *why);
  }

  // ---- Memory: intermediates from the device, outputs from the host ----------------
  std::vector<bool> is_output(program.values.size(), false);
  for (size_t id : program.outputs) is_output[id] = true;
  for (const Program::Step& step : program.steps) {
    if (is_output[step.output]) continue;
    std::unique_ptr<Buffer> temp;
    const std::string what = "intermediate '" + program.values[step.output].name + "'";
    if (MaybeFailure f = Buffer::allocate(device_, INFER_MEMORY_DEVICE_LOCAL,
                                          float_bytes(launch->dims[step.output]), 64, what, &temp))
      return f;
    launch->where[step.output] = Location{temp.get(), 0};
    launch->temporaries.push_back(std::move(temp));
  }
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const size_t id = program.outputs[k];
    const Dims& dims = launch->dims[id];
    const std::string label = "output " + std::to_string(k) + " '" + program.values[id].name + "'";
    infer_tensor t{};
    t.struct_size = sizeof t;
    // Exactly once per output, from inside execute: the host places the tensor in its
    // own memory plan (it may reuse memory across runs) and keeps ownership.
    if (infer_status* s = args.alloc_output(args.alloc_ctx, k, INFER_DTYPE_FLOAT32, dims.size(),
                                            dims.data(), &t)) {
      // We own the host's status now: keep its code and message, add which output it
      // was, and free it.
      return sdk::take_status(device_.host(), s,
                              "example: alloc_output for " + label + " failed: ");
    }
    const auto* buffer = from_handle(t.buffer);
    const size_t bytes = float_bytes(dims);
    if (buffer == nullptr || &buffer->device() != &device_ || !buffer->contains(t.offset, bytes))
      return failure(INFER_STATUS_INTERNAL,
                     "example: alloc_output returned an unusable tensor for " + label + " (needs " +
                         std::to_string(bytes) + " bytes of this device's memory)");
    launch->where[id] = Location{buffer, t.offset};
  }

  // ---- Enqueue: waits, the kernels in order, then the signals ----------------------
  std::vector<WorkItem> items;
  for (size_t i = 0; i < args.num_waits; ++i)
    items.push_back(WorkItem::make_wait(from_handle(args.waits[i].event), args.waits[i].value));
  for (size_t s = 0; s < program.steps.size(); ++s)
    items.push_back(WorkItem::make_task([launch, s] { return run_step(*launch, s); }));
  for (size_t i = 0; i < args.num_signals; ++i)
    items.push_back(
        WorkItem::make_signal(from_handle(args.signals[i].event), args.signals[i].value));
  stream.enqueue(std::move(items));
  return std::nullopt;
}

}  // namespace infer::example
