// Executable::compile: from a graph view to a Program (see executable.hpp).
#include <cstring>
#include <unordered_map>

#include "capability.hpp"
#include "executable.hpp"

namespace infer::vk {
namespace {

NodeInfo copy_node(const infer_node_view& node) {
  NodeInfo info;
  info.name = node.name ? node.name : "";
  info.op_type = node.op_type ? node.op_type : "";
  info.domain = node.domain ? node.domain : "";
  info.opset = node.opset;
  info.num_inputs = node.num_inputs;
  info.num_outputs = node.num_outputs;
  for (size_t i = 0; i < node.num_attrs; ++i) {
    const infer_attr_view& a = node.attrs[i];
    if (a.name == nullptr) continue;
    Attr attr;
    attr.type = a.type;
    attr.i = a.i;
    attr.f = a.f;
    if (a.s) attr.s.assign(a.s, a.s_len);
    if (a.type == INFER_ATTR_INTS && a.ints) attr.ints.assign(a.ints, a.ints + a.count);
    if (a.type == INFER_ATTR_FLOATS && a.floats) attr.floats.assign(a.floats, a.floats + a.count);
    info.attrs[a.name] = std::move(attr);
  }
  return info;
}

class ProgramBuilder {
 public:
  ProgramBuilder(Device& device, std::string name) : device_(device) {
    program_->name = std::move(name);
  }

  MaybeFailure build(const infer_graph_view& graph) {
    for (size_t i = 0; i < graph.num_inputs; ++i) {
      const infer_value_view* v = graph.inputs[i];
      if (v == nullptr) return invalid("graph input " + std::to_string(i) + " is NULL");
      if (ids_.count(v)) return invalid("graph input '" + value_name(v) + "' is listed twice");
      program_->inputs.push_back(add_value(v, Program::Value::Source::kGraphInput));
    }
    for (size_t n = 0; n < graph.num_nodes; ++n) {
      if (graph.nodes[n] == nullptr) return invalid("node " + std::to_string(n) + " is NULL");
      if (MaybeFailure f = add_node(*graph.nodes[n])) return f;
    }
    for (size_t i = 0; i < graph.num_outputs; ++i) {
      const infer_value_view* v = graph.outputs[i];
      if (v == nullptr) return invalid("graph output " + std::to_string(i) + " is NULL");
      auto it = ids_.find(v);
      size_t id = 0;
      if (it != ids_.end()) {
        id = it->second;
      } else if (v->const_data != nullptr) {
        if (MaybeFailure f = constant_id(*v, &id)) return f;
      } else {
        return invalid("graph output '" + value_name(v) +
                       "' is neither computed by a node, a graph input nor a constant");
      }
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
      value.dtype = v->dtype;
      value.view_rank = v->rank;
      if (v->rank > 0 && v->dims != nullptr) value.view_dims.assign(v->dims, v->dims + v->rank);
      ids_[v] = program_->values.size();
    }
    program_->values.push_back(std::move(value));
    return program_->values.size() - 1;
  }

  // A constant: validated and uploaded once, shared by every consumer.
  MaybeFailure constant_id(const infer_value_view& v, size_t* id) {
    if (auto it = ids_.find(&v); it != ids_.end()) {
      *id = it->second;
      return std::nullopt;
    }
    if (v.rank < 0 || (v.rank > 0 && v.dims == nullptr))
      return invalid("constant '" + value_name(&v) + "' has an unknown shape");
    std::vector<int64_t> dims(v.dims, v.dims + v.rank);
    for (int64_t d : dims)
      if (d < 0) return invalid("constant '" + value_name(&v) + "' has a symbolic dim");
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
    step.node = copy_node(node);
    const std::string label = step.node.describe();
    // Never trust that the host only hands over nodes we said YES to: check again.
    std::string reason;
    if (check_node(device_, node, &step.kernel, &reason) == INFER_SUPPORT_NO)
      return failure(INFER_STATUS_UNSUPPORTED, "vulkan: " + label + ": " + reason);
    for (size_t i = 0; i < node.num_inputs; ++i) {
      const infer_value_view* v = node.inputs[i];
      int64_t id = -1;
      if (v == nullptr) {
        // An omitted optional input stays -1.
      } else if (auto it = ids_.find(v); it != ids_.end()) {
        id = static_cast<int64_t>(it->second);
      } else if (v->const_data != nullptr) {
        size_t cid = 0;
        if (MaybeFailure f = constant_id(*v, &cid)) return f;
        id = static_cast<int64_t>(cid);
      } else {
        return invalid(label + ": input '" + value_name(v) +
                       "' is neither a graph input, a constant, nor an earlier node's output");
      }
      step.inputs.push_back(id);
    }
    for (size_t i = 0; i < node.num_outputs; ++i) {
      const infer_value_view* v = node.outputs[i];
      if (v != nullptr && ids_.count(v))
        return invalid(label + ": output '" + value_name(v) + "' is already defined");
      // An omitted output still gets a value: the kernel may write it regardless.
      step.outputs.push_back(
          static_cast<int64_t>(add_value(v, Program::Value::Source::kNodeOutput)));
    }
    program_->steps.push_back(std::move(step));
    return std::nullopt;
  }

  Device& device_;
  std::shared_ptr<Program> program_ = std::make_shared<Program>();
  std::unordered_map<const infer_value_view*, size_t> ids_;
  size_t uploaded_bytes_ = 0;
};

}  // namespace

MaybeFailure Executable::compile(Device& device, const infer_graph_view& graph,
                                 const infer_compile_options* options,
                                 std::unique_ptr<Executable>* out) {
  std::string name = "partition";
  if (INFER_HAS_FIELD(options, infer_compile_options, partition_name) && options->partition_name)
    name = options->partition_name;
  else if (graph.name)
    name = graph.name;
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
