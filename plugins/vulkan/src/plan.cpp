// build_plan: a Program instantiated for concrete input shapes (see executable.hpp).
#include <algorithm>
#include <string>

#include "executable.hpp"

namespace infer::vk {
namespace {

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

// First-fit placement of the arena's tensors by lifetime: a block is reused once its
// tensor's last reader has run.
class ArenaPlanner {
 public:
  explicit ArenaPlanner(VkDeviceSize alignment) : alignment_(alignment) {}
  VkDeviceSize place(VkDeviceSize bytes) {
    bytes = align_up(std::max<VkDeviceSize>(bytes, 1), alignment_);
    VkDeviceSize at = 0;
    auto it = live_.begin();
    for (; it != live_.end(); ++it) {
      if (it->first >= at + bytes) break;
      at = std::max(at, align_up(it->first + it->second, alignment_));
    }
    live_.insert(it, {at, bytes});
    high_ = std::max(high_, at + bytes);
    return at;
  }
  void release(VkDeviceSize offset) {
    for (auto it = live_.begin(); it != live_.end(); ++it)
      if (it->first == offset) {
        live_.erase(it);
        return;
      }
  }
  VkDeviceSize high_water() const { return high_; }

 private:
  VkDeviceSize alignment_;
  std::vector<std::pair<VkDeviceSize, VkDeviceSize>> live_;  // sorted by offset
  VkDeviceSize high_ = 0;
};

VkDeviceSize tensor_bytes(infer_dtype dtype, const std::vector<int64_t>& dims) {
  return sdk::tensor_bytes(dtype, sdk::element_count(dims.data(), dims.size()));
}

}  // namespace

MaybeFailure build_plan(Device& device, const Program& program,
                        const std::vector<std::vector<int64_t>>& input_dims,
                        std::shared_ptr<const Plan>* out) {
  auto plan = std::make_shared<Plan>();
  const size_t nv = program.values.size();
  plan->dims.resize(nv);
  plan->dtypes.resize(nv);
  std::vector<bool> known(nv, false);
  auto internal = [&](const std::string& what) {
    return failure(INFER_STATUS_INTERNAL, "vulkan: partition '" + program.name + "': " + what);
  };

  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const size_t id = program.inputs[i];
    plan->dims[id] = input_dims[i];
    plan->dtypes[id] = program.values[id].view.dtype;
    known[id] = true;
  }
  for (size_t id = 0; id < nv; ++id) {
    const Program::Value& v = program.values[id];
    if (v.source != Program::Value::Source::kConstant) continue;
    plan->dims[id] = v.view.dims;
    plan->dtypes[id] = v.view.dtype;
    known[id] = true;
  }

  // ---- Shapes and dispatches from every kernel, in order --------------------------------
  std::vector<OpPlan> ops(program.steps.size());
  for (size_t s = 0; s < program.steps.size(); ++s) {
    const Program::Step& step = program.steps[s];
    const std::string label = step.node.describe();
    std::vector<TensorDesc> ins;
    for (int64_t id : step.inputs) {
      TensorDesc d;
      if (id < 0) {
        d.present = false;
        d.dtype = INFER_DTYPE_UNDEFINED;
      } else {
        if (!known[size_t(id)]) return internal(label + ": an input has no shape yet");
        d.dtype = plan->dtypes[size_t(id)];
        d.dims = plan->dims[size_t(id)];
        d.host_data = program.values[size_t(id)].host_data;
      }
      ins.push_back(std::move(d));
    }
    OpPlan& op = ops[s];
    std::string error;
    if (!step.kernel->plan(step.node, ins, &op, &error)) {
      if (error.empty()) error = label + ": the kernel cannot run these inputs";
      return failure(INFER_STATUS_INVALID_ARGUMENT, "vulkan: " + error);
    }
    if (op.outputs.size() != step.outputs.size())
      return internal(label + ": the kernel planned " + std::to_string(op.outputs.size()) +
                      " outputs, the node has " + std::to_string(step.outputs.size()));
    if (!op.alias_of_input.empty() && op.alias_of_input.size() != op.outputs.size())
      return internal(label + ": alias_of_input must be empty or have one entry per output");
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      const size_t id = size_t(step.outputs[o]);
      for (int64_t d : op.outputs[o].dims)
        if (d < 0) return internal(label + ": the kernel planned a negative dim for output " +
                                   std::to_string(o));
      const infer_dtype view_dtype = program.values[id].view.dtype;
      if (view_dtype != INFER_DTYPE_UNDEFINED && view_dtype != op.outputs[o].dtype)
        return internal(label + ": the kernel produces " + dtype_name(op.outputs[o].dtype) +
                        " for output " + std::to_string(o) + ", the graph says " +
                        dtype_name(view_dtype));
      if (sdk::dtype_size(op.outputs[o].dtype) == 0)
        return internal(label + ": output " + std::to_string(o) + " has dtype " +
                        dtype_name(op.outputs[o].dtype) + " without an element size");
      plan->dims[id] = op.outputs[o].dims;
      plan->dtypes[id] = op.outputs[o].dtype;
      known[id] = true;
      const int alias = op.alias_of_input.empty() ? -1 : op.alias_of_input[o];
      if (alias >= 0) {
        if (size_t(alias) >= step.inputs.size() || step.inputs[size_t(alias)] < 0)
          return internal(label + ": output " + std::to_string(o) + " aliases a missing input");
        const size_t in = size_t(step.inputs[size_t(alias)]);
        if (tensor_bytes(plan->dtypes[in], plan->dims[in]) !=
            tensor_bytes(plan->dtypes[id], plan->dims[id]))
          return internal(label + ": output " + std::to_string(o) + " aliases input " +
                          std::to_string(alias) + " of another byte size");
      }
    }
  }

  // ---- Where every value lives -----------------------------------------------------------
  std::vector<Slot> slot(nv);
  std::vector<int64_t> output_of(nv, -1);  // first graph output position of a node output
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const size_t id = program.outputs[k];
    if (program.values[id].source == Program::Value::Source::kNodeOutput && output_of[id] < 0)
      output_of[id] = static_cast<int64_t>(k);
  }
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const size_t id = program.inputs[i];
    slot[id] = Slot{Slot::Kind::kGraphInput, i, 0, tensor_bytes(plan->dtypes[id], plan->dims[id])};
  }
  for (size_t id = 0; id < nv; ++id)
    if (program.values[id].source == Program::Value::Source::kConstant)
      slot[id] = Slot{Slot::Kind::kConstant, id, 0, program.values[id].host_bytes};

  // The arena value a value's bytes live in (itself, or what it aliases), for lifetimes.
  std::vector<int64_t> root(nv, -1);
  std::vector<size_t> last_use(nv, 0);
  for (size_t s = 0; s < program.steps.size(); ++s) {
    const Program::Step& step = program.steps[s];
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      const size_t id = size_t(step.outputs[o]);
      const int alias = ops[s].alias_of_input.empty() ? -1 : ops[s].alias_of_input[o];
      if (alias >= 0 && output_of[id] < 0) root[id] = root[size_t(step.inputs[size_t(alias)])];
      else if (alias < 0 && output_of[id] < 0) root[id] = static_cast<int64_t>(id);
      if (root[id] >= 0) last_use[size_t(root[id])] = std::max(last_use[size_t(root[id])], s);
    }
    for (int64_t id : step.inputs)
      if (id >= 0 && root[size_t(id)] >= 0)
        last_use[size_t(root[size_t(id)])] = std::max(last_use[size_t(root[size_t(id)])], s);
  }
  // A graph output that copies from an arena value reads it after the last step.
  const size_t end_step = program.steps.size();
  for (size_t id : program.outputs)
    if (root[id] >= 0 && output_of[id] < 0) last_use[size_t(root[id])] = end_step;
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const size_t id = program.outputs[k];
    if (output_of[id] != static_cast<int64_t>(k) && root[id] >= 0)
      last_use[size_t(root[id])] = end_step;
  }

  const VkDeviceSize alignment =
      std::max<VkDeviceSize>(256, device.limits().minStorageBufferOffsetAlignment);
  const VkDeviceSize max_range = device.limits().maxStorageBufferRange;
  ArenaPlanner arena(alignment);
  std::vector<std::vector<size_t>> release_after(program.steps.size() + 1);

  for (size_t s = 0; s < program.steps.size(); ++s) {
    const Program::Step& step = program.steps[s];
    const OpPlan& op = ops[s];
    const std::string label = step.node.describe();
    // Outputs first: alias outputs copied into graph outputs, then the rest.
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      const size_t id = size_t(step.outputs[o]);
      const VkDeviceSize bytes = tensor_bytes(plan->dtypes[id], plan->dims[id]);
      const int alias = op.alias_of_input.empty() ? -1 : op.alias_of_input[o];
      if (output_of[id] >= 0) {
        slot[id] = Slot{Slot::Kind::kGraphOutput, size_t(output_of[id]), 0, bytes};
        if (alias >= 0 && bytes > 0) {
          Plan::Action copy;
          copy.kind = Plan::Action::Kind::kCopy;
          copy.src = slot[size_t(step.inputs[size_t(alias)])];
          copy.dst = slot[id];
          plan->actions.push_back(std::move(copy));
        }
      } else if (alias >= 0) {
        slot[id] = slot[size_t(step.inputs[size_t(alias)])];
        slot[id].bytes = bytes;
      } else {
        slot[id] = Slot{Slot::Kind::kArena, 0, arena.place(bytes), bytes};
        release_after[std::max(last_use[id], s)].push_back(slot[id].offset);
      }
    }
    std::vector<Slot> temps;
    for (uint64_t bytes : op.temps) {
      temps.push_back(Slot{Slot::Kind::kArena, 0, arena.place(bytes), bytes});
      release_after[s].push_back(temps.back().offset);
    }
    for (size_t d = 0; d < op.dispatches.size(); ++d) {
      const Dispatch& dispatch = op.dispatches[d];
      const std::string what = label + ": dispatch " + std::to_string(d);
      if (dispatch.shader == nullptr) return internal(what + " has no shader");
      if (dispatch.push.size() * 4 > PipelineCache::kPushConstantBytes)
        return internal(what + " pushes " + std::to_string(dispatch.push.size() * 4) +
                        " bytes of constants, at most 128 fit");
      Plan::Action a;
      a.kind = Plan::Action::Kind::kDispatch;
      a.push = dispatch.push;
      for (int g = 0; g < 3; ++g) {
        a.groups[g] = dispatch.groups[g];
        if (dispatch.groups[g] > device.limits().maxComputeWorkGroupCount[g])
          return internal(what + " (shader '" + dispatch.shader->name + "') has " +
                          std::to_string(dispatch.groups[g]) + " workgroups in dimension " +
                          std::to_string(g) + ", the device allows " +
                          std::to_string(device.limits().maxComputeWorkGroupCount[g]));
      }
      for (const Operand& b : dispatch.bindings) {
        Slot bound;
        switch (b.kind) {
          case Operand::Kind::kInput:
            if (b.index >= step.inputs.size() || step.inputs[b.index] < 0)
              return internal(what + " binds missing input " + std::to_string(b.index));
            bound = slot[size_t(step.inputs[b.index])];
            break;
          case Operand::Kind::kOutput:
            if (b.index >= step.outputs.size())
              return internal(what + " binds missing output " + std::to_string(b.index));
            bound = slot[size_t(step.outputs[b.index])];
            break;
          case Operand::Kind::kTemp:
            if (b.index >= temps.size())
              return internal(what + " binds missing temp " + std::to_string(b.index));
            bound = temps[b.index];
            break;
        }
        if (bound.bytes > max_range)
          return failure(INFER_STATUS_UNSUPPORTED,
                         "vulkan: " + what + " binds a tensor of " + std::to_string(bound.bytes) +
                             " bytes, above the device's maxStorageBufferRange (" +
                             std::to_string(max_range) + ")");
        a.bindings.push_back(bound);
      }
      if (MaybeFailure f = device.pipelines().get(*dispatch.shader, dispatch.spec,
                                                  static_cast<uint32_t>(a.bindings.size()),
                                                  &a.pipeline)) {
        f->message = what + ": " + f->message;
        return f;
      }
      // A dispatch with no workgroups has nothing to do (an empty tensor).
      if (a.groups[0] == 0 || a.groups[1] == 0 || a.groups[2] == 0) continue;
      plan->num_dispatches += 1;
      plan->num_descriptors += static_cast<uint32_t>(a.bindings.size());
      plan->actions.push_back(std::move(a));
    }
    for (VkDeviceSize off : release_after[s]) arena.release(off);
  }

  // Graph outputs that no node writes directly: pass-through inputs and constants, and a
  // value returned twice.
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const size_t id = program.outputs[k];
    if (output_of[id] == static_cast<int64_t>(k)) continue;
    const VkDeviceSize bytes = tensor_bytes(plan->dtypes[id], plan->dims[id]);
    if (bytes == 0) continue;
    Plan::Action copy;
    copy.kind = Plan::Action::Kind::kCopy;
    copy.src = slot[id];
    copy.dst = Slot{Slot::Kind::kGraphOutput, k, 0, bytes};
    plan->actions.push_back(std::move(copy));
  }
  plan->arena_bytes = arena.high_water();
  *out = std::move(plan);
  return std::nullopt;
}

}  // namespace infer::vk
