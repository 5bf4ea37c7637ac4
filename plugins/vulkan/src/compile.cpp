// Executable::compile: from a graph view to a Program (see executable.hpp).
#include <cstring>

#include "capability.hpp"
#include "executable.hpp"

namespace infer::vk {
namespace {

class ProgramBuilder {
 public:
  ProgramBuilder(Device& device, std::string name) : device_(device) {
    program_->name = std::move(name);
  }

  MaybeFailure build(const infer_graph_view& graph) {
    if (MaybeFailure f = sdk::walk_graph(
            graph, ids_, "vulkan: partition '" + program_->name + "': ",
            [&](const infer_value_view& v) {
              program_->inputs.push_back(add_value(&v, Program::Value::Source::kGraphInput));
            },
            [&](const infer_node_view& node) { return add_node(node); }))
      return f;
    // Unlike the SDK example, any value may be a graph output: a node's, a graph input
    // passed through, or a constant (the plan copies the last two).
    for (size_t i = 0; i < graph.num_outputs; ++i) {
      const infer_value_view* v = graph.outputs[i];
      if (v == nullptr) return invalid("graph output " + std::to_string(i) + " is NULL");
      size_t id = 0;
      if (MaybeFailure f = value_id(*v, &id, [&] {
            return "graph output '" + value_name(v) +
                   "' is neither computed by a node, a graph input nor a constant";
          }))
        return f;
      program_->outputs.push_back(id);
    }
    return std::nullopt;
  }

  std::shared_ptr<const Program> finish() { return std::move(program_); }
  size_t uploaded_bytes() const { return uploaded_bytes_; }

 private:
  Failure invalid(const std::string& what) const {
    return failure(INFER_STATUS_INVALID_ARGUMENT,
                   "vulkan: partition '" + program_->name + "': " + what);
  }

  size_t add_value(const infer_value_view* v, Program::Value::Source source) {
    Program::Value value;
    value.source = source;
    if (v != nullptr) {
      value.name = value_name(v);
      value.view = sdk::TensorInfo::of(*v);
      ids_.assign(v, program_->values.size());
    }
    program_->values.push_back(std::move(value));
    return program_->values.size() - 1;
  }

  // The id of `v`: a value numbered before, or a constant uploaded now. When it is
  // neither, the failure says what `unknown()` returns.
  template <typename Message>
  MaybeFailure value_id(const infer_value_view& v, size_t* id, Message&& unknown) {
    switch (ids_.classify(&v, id)) {
      case sdk::ValueIds::Input::kOmitted:
      case sdk::ValueIds::Input::kKnown:
        return std::nullopt;
      case sdk::ValueIds::Input::kConstant:
        return constant_id(v, id);
      case sdk::ValueIds::Input::kUnknown:
        break;
    }
    return invalid(unknown());
  }

  // A constant: validated and uploaded once, shared by every consumer.
  MaybeFailure constant_id(const infer_value_view& v, size_t* id) {
    std::vector<int64_t> dims;
    if (std::optional<std::string> why = sdk::constant_dims(v, &dims)) return invalid(*why);
    const size_t expected = sdk::tensor_bytes(v.dtype, sdk::element_count(dims.data(), dims.size()));
    if (sdk::dtype_size(v.dtype) == 0 && v.dtype != INFER_DTYPE_INT4 && v.dtype != INFER_DTYPE_UINT4)
      return invalid("constant '" + value_name(&v) + "' has dtype " + dtype_name(v.dtype) +
                     ", which has no element size");
    if (v.const_size != expected)
      return invalid("constant '" + value_name(&v) + "' has " + std::to_string(v.const_size) +
                     " bytes, expected " + std::to_string(expected) + " for " +
                     dtype_name(v.dtype) + dims_text(dims));
    *id = add_value(&v, Program::Value::Source::kConstant);
    Program::Value& value = program_->values[*id];
    value.host_data = v.const_data;
    value.host_bytes = v.const_size;
    // Uploaded now, once: the weights cross to the device at compile time, not per run.
    if (MaybeFailure f = Buffer::create(device_, INFER_MEMORY_DEVICE_LOCAL, v.const_size, 256,
                                        "constant '" + value.name + "'", &value.device_copy))
      return f;
    if (MaybeFailure f = device_.upload(*value.device_copy, v.const_data, v.const_size)) {
      f->message = "uploading constant '" + value.name + "': " + f->message;
      return f;
    }
    uploaded_bytes_ += v.const_size;
    return std::nullopt;
  }

  MaybeFailure add_node(const infer_node_view& node) {
    Program::Step step;
    step.node = NodeInfo::of(node);
    const std::string label = step.node.describe();
    // Never trust that the host only hands over nodes we said YES to: check again.
    std::string reason;
    if (check_node(device_, node, &step.kernel, &reason) == INFER_SUPPORT_NO)
      return failure(INFER_STATUS_UNSUPPORTED, "vulkan: " + label + ": " + reason);
    for (size_t i = 0; i < node.num_inputs; ++i) {
      const infer_value_view* v = node.inputs[i];
      if (v == nullptr) {
        step.inputs.push_back(-1);  // an omitted optional input
        continue;
      }
      size_t id = 0;
      if (MaybeFailure f =
              value_id(*v, &id, [&] { return sdk::ValueIds::unknown_input(label, v); }))
        return f;
      step.inputs.push_back(static_cast<int64_t>(id));
    }
    for (size_t i = 0; i < node.num_outputs; ++i) {
      const infer_value_view* v = node.outputs[i];
      if (std::optional<std::string> why = ids_.check_node_output(label, v)) return invalid(*why);
      // An omitted output still gets a value: the kernel may write it regardless.
      step.outputs.push_back(
          static_cast<int64_t>(add_value(v, Program::Value::Source::kNodeOutput)));
    }
    program_->steps.push_back(std::move(step));
    return std::nullopt;
  }

  Device& device_;
  std::shared_ptr<Program> program_ = std::make_shared<Program>();
  sdk::ValueIds ids_;
  size_t uploaded_bytes_ = 0;
};

}  // namespace

MaybeFailure Executable::compile(Device& device, const infer_graph_view& graph,
                                 const infer_compile_options* options,
                                 std::unique_ptr<Executable>* out) {
  const std::string name = sdk::partition_name(graph, options);
  ProgramBuilder builder(device, name);
  if (MaybeFailure f = builder.build(graph)) return f;
  device.host().log(INFER_LOG_DEBUG, "vulkan: compiled partition '" + name + "': " +
                                         std::to_string(graph.num_nodes) + " nodes, " +
                                         std::to_string(builder.uploaded_bytes()) +
                                         " bytes of constants uploaded");
  out->reset(new Executable(device, builder.finish()));
  return std::nullopt;
}

}  // namespace infer::vk
