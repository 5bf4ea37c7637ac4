// Executable::compile: from a graph view to a Program.
#include <cstring>

#include "capability.hpp"
#include "executable.hpp"
#include "prepack.hpp"

namespace infer::example {
namespace {

// Builds a Program; holds the maps that only compilation needs.
class ProgramBuilder {
 public:
  ProgramBuilder(Device& device, std::string name) : device_(device) {
    program_->name = std::move(name);
  }

  MaybeFailure build(const infer_graph_view& graph) {
    // Graph inputs, then the nodes in order; sdk::walk_graph checks the lists.
    auto input = [&](const infer_value_view& v) {
      program_->inputs.push_back(add_value(v, Program::Value::Source::kGraphInput));
    };
    auto node = [&](const infer_node_view& n) { return add_node(n); };
    if (MaybeFailure f = sdk::walk_graph(graph, ids_, context(), input, node)) return f;
    for (size_t i = 0; i < graph.num_outputs; ++i)
      if (MaybeFailure f = add_output(graph.outputs[i])) return f;
    return std::nullopt;
  }

  std::shared_ptr<const Program> finish() { return std::move(program_); }
  size_t uploaded_bytes() const { return uploaded_bytes_; }

 private:
  // "example: partition 'p': ", the start of every message about the graph view.
  std::string context() const { return "example: partition '" + program_->name + "': "; }
  Failure invalid(const std::string& what) const {
    return failure(INFER_STATUS_INVALID_ARGUMENT, context() + what);
  }

  size_t add_value(const infer_value_view& v, Program::Value::Source source) {
    Program::Value value;
    value.source = source;
    value.name = value_name(&v);
    value.view = sdk::TensorInfo::of(v);
    // float32, except the 8-bit input of a DequantizeLinear (checked by capability).
    if (v.dtype != INFER_DTYPE_UINT8 && v.dtype != INFER_DTYPE_INT8)
      value.view.dtype = INFER_DTYPE_FLOAT32;
    program_->values.push_back(std::move(value));
    const size_t id = program_->values.size() - 1;
    ids_.assign(&v, id);
    return id;
  }

  // Uploads `bytes` (the constant's data, or its prepacked form) into device memory. The
  // device cannot read host memory, so this is the one time the weights cross the link;
  // a real plugin would enqueue the upload on an internal transfer queue, the example
  // writes its own memory directly.
  MaybeFailure add_constant(const infer_value_view& v, const void* bytes, Dims dims, size_t* id) {
    const size_t size = static_cast<size_t>(element_count(dims)) * sizeof(float);
    Program::Value value;
    value.source = Program::Value::Source::kConstant;
    value.name = value_name(&v);
    value.view = {INFER_DTYPE_FLOAT32, static_cast<int64_t>(dims.size()), dims};
    value.const_dims = std::move(dims);
    if (MaybeFailure f = Buffer::allocate(device_, INFER_MEMORY_DEVICE_LOCAL, size, 64,
                                          "constant '" + value.name + "'", &value.device_copy))
      return f;
    std::memcpy(value.device_copy->data(), bytes, size);
    uploaded_bytes_ += size;
    program_->values.push_back(std::move(value));
    *id = program_->values.size() - 1;
    return std::nullopt;
  }

  // A constant as the model has it: validated, uploaded once, shared by its consumers.
  MaybeFailure constant_id(const infer_value_view& v, size_t* id) {
    Dims dims;
    if (std::optional<std::string> why = sdk::constant_dims(v, &dims)) return invalid(*why);
    const size_t expected = static_cast<size_t>(element_count(dims)) * sizeof(float);
    if (v.const_size != expected)
      return invalid("constant '" + value_name(&v) + "' has " + std::to_string(v.const_size) +
                     " bytes, expected " + std::to_string(expected) + " for float32 " +
                     dims_string(dims));
    if (MaybeFailure f = add_constant(v, v.const_data, std::move(dims), id)) return f;
    ids_.assign(&v, *id);
    return std::nullopt;
  }

  MaybeFailure add_node(const infer_node_view& node) {
    const std::string label = sdk::node_label(node);
    // Never trust that the host only hands over nodes we said YES to: check again.
    const OpInfo* op = nullptr;
    if (std::optional<std::string> why = why_unsupported(node, &op))
      return failure(INFER_STATUS_UNSUPPORTED, *why + " (" + label + ")");

    Program::Step step;
    step.op = op;
    step.node_name = node.name ? node.name : "";
    step.attrs = read_attrs(node);
    // A quantized input's scale and zero point come from its descriptor: the node's
    // inputs 1 and 2 (those same constants) are not uploaded.
    if (op->quantized_input) read_quant_params(node, &step.attrs);
    const size_t num_inputs = op->quantized_input ? 1 : node.num_inputs;
    for (size_t i = 0; i < num_inputs; ++i) {
      const infer_value_view* v = node.inputs[i];
      size_t id = Program::kNone;  // an omitted optional input stays kNone
      if (v != nullptr && use_prepacked_b(*op, node, i, step.attrs)) {
        // Our own layout of a constant: uploaded for this node alone.
        const Dims packed = {v->dims[1], v->dims[0]};  // [N, K]
        if (MaybeFailure f = add_constant(
                *v, read_packed(v->prepacked_data, v->prepacked_size, packed[0], packed[1]), packed,
                &id))
          return f;
        step.attrs.trans_b = true;  // the kernel now reads B as the packed [N, K]
      } else {
        // A graph input, an earlier node's output or a constant already uploaded (kKnown
        // sets id), or a constant seen for the first time.
        switch (ids_.classify(v, &id)) {
          case sdk::ValueIds::Input::kOmitted:
          case sdk::ValueIds::Input::kKnown:
            break;
          case sdk::ValueIds::Input::kConstant:
            if (MaybeFailure f = constant_id(*v, &id)) return f;
            break;
          case sdk::ValueIds::Input::kUnknown:
            return invalid(sdk::ValueIds::unknown_input(label, v));
        }
      }
      step.inputs.push_back(id);
    }
    const infer_value_view* y = node.outputs[0];
    if (std::optional<std::string> why = ids_.check_node_output(label, y)) return invalid(*why);
    step.output = add_value(*y, Program::Value::Source::kNodeOutput);
    program_->steps.push_back(std::move(step));
    return std::nullopt;
  }

  // Whether input i of `node` is a Gemm B that our prepack hook packed (and that the
  // host handed back intact).
  static bool use_prepacked_b(const OpInfo& op, const infer_node_view& node, size_t i,
                              const NodeAttrs& attrs) {
    const infer_value_view* v = node.inputs[i];
    if (op.op_type != "Gemm" || i != 1 || attrs.trans_b) return false;
    if (!INFER_HAS_FIELD(v, infer_value_view, prepacked_size) || v->prepacked_data == nullptr)
      return false;
    return read_packed(v->prepacked_data, v->prepacked_size, v->dims[1], v->dims[0]) != nullptr;
  }

  MaybeFailure add_output(const infer_value_view* v) {
    const std::optional<size_t> id = ids_.find(v);
    const std::string name = value_name(v);
    if (!id || program_->values[*id].source != Program::Value::Source::kNodeOutput) {
      // Pass-through outputs (a graph input or a constant returned as is) would need a
      // copy kernel; the host never forms such partitions, so the example refuses them.
      return failure(INFER_STATUS_UNSUPPORTED, "example: partition '" + program_->name +
                                                   "': output '" + name +
                                                   "' is not computed by a node of it");
    }
    for (size_t listed : program_->outputs)
      if (listed == *id)
        return failure(INFER_STATUS_UNSUPPORTED, "example: partition '" + program_->name +
                                                     "': output '" + name + "' is listed twice");
    program_->outputs.push_back(*id);
    return std::nullopt;
  }

  Device& device_;
  std::shared_ptr<Program> program_ = std::make_shared<Program>();
  sdk::ValueIds ids_;  // view pointer -> value id
  size_t uploaded_bytes_ = 0;
};

}  // namespace

MaybeFailure Executable::compile(Device& device, const infer_graph_view& graph,
                                 const infer_compile_options* options,
                                 std::unique_ptr<Executable>* out) {
  const std::string name = sdk::partition_name(graph, options);
  ProgramBuilder builder(device, name);
  if (MaybeFailure f = builder.build(graph)) return f;
  device.host().log(INFER_LOG_DEBUG, "example: compiled partition '" + name +
                                         "': " + std::to_string(graph.num_nodes) + " nodes, " +
                                         std::to_string(builder.uploaded_bytes()) +
                                         " bytes of constants uploaded");
  out->reset(new Executable(device, builder.finish()));
  return std::nullopt;
}

}  // namespace infer::example
