// Executable::execute: bind, size, allocate, record and enqueue one run (executable.hpp).
#include <string>

#include "executable.hpp"
#include "handles.hpp"

namespace infer::vk {
namespace {

// A descriptor pool for one execution's sets, destroyed when the execution retires.
struct DescriptorPool {
  Device* device = nullptr;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  ~DescriptorPool() {
    if (pool != VK_NULL_HANDLE) device->vk().vkDestroyDescriptorPool(device->handle(), pool, nullptr);
  }
};

// A buffer and offset where a Slot lives in this execution.
struct Bound {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
};

// Plans kept per executable: enough for the shapes a model really sees (batch sizes,
// sequence lengths), bounded for models fed ever-changing shapes.
constexpr size_t kPlanCacheLimit = 32;

}  // namespace

MaybeFailure Executable::plan_for(const std::vector<std::vector<int64_t>>& input_dims,
                                  std::shared_ptr<const Plan>* out) {
  std::vector<int64_t> key;
  for (const auto& dims : input_dims) {
    key.push_back(static_cast<int64_t>(dims.size()));
    key.insert(key.end(), dims.begin(), dims.end());
  }
  {
    std::lock_guard lock(plans_mu_);
    if (auto it = plans_.find(key); it != plans_.end()) {
      *out = it->second;
      return std::nullopt;
    }
  }
  // Built outside the lock (pipeline creation is slow); two threads racing on a new
  // signature both build, and the first to finish wins.
  std::shared_ptr<const Plan> plan;
  if (MaybeFailure f = build_plan(device_, *program_, input_dims, &plan)) return f;
  std::string shapes;
  for (const auto& dims : input_dims) shapes += (shapes.empty() ? "" : " ") + dims_text(dims);
  device_.host().log(INFER_LOG_DEBUG, "vulkan: partition '" + program_->name +
                                          "': plan for inputs " + shapes + ": " +
                                          std::to_string(plan->num_dispatches) +
                                          " dispatches, arena of " +
                                          std::to_string(plan->arena_bytes) + " bytes");
  std::lock_guard lock(plans_mu_);
  // Bound the cache for models fed ever-changing shapes.
  if (plans_.size() >= kPlanCacheLimit) plans_.erase(plans_.begin());
  auto [it, inserted] = plans_.emplace(std::move(key), plan);
  *out = it->second;
  return std::nullopt;
}

MaybeFailure Executable::execute(Stream& stream, const infer_execute_args* args_ptr) {
  const infer_execute_args& args = *args_ptr;
  const Program& program = *program_;
  auto invalid = [&](const std::string& what) {
    return failure(INFER_STATUS_INVALID_ARGUMENT,
                   "vulkan: execute of partition '" + program.name + "': " + what);
  };

  // ---- The argument struct ---------------------------------------------------------------
  // The SDK checks its form against the program; the devices of the stream and the events
  // are ours to check.
  if (&stream.device() != &device_) return invalid("the stream belongs to another device");
  if (std::optional<std::string> why =
          sdk::check_execute_args(args_ptr, program.inputs.size(), program.outputs.size()))
    return invalid(*why);
  Work work;
  auto add_events = [&](const infer_event_value* events, size_t count, const char* role,
                        std::vector<EventRef>* into) -> MaybeFailure {
    for (size_t i = 0; i < count; ++i) {
      const std::shared_ptr<Event>& event = from_handle(events[i].event)->event;
      if (&event->device() != &device_)
        return invalid(role + std::to_string(i) + " is an event of another device");
      into->push_back({event, events[i].value});
    }
    return std::nullopt;
  };
  if (MaybeFailure f = add_events(args.waits, args.num_waits, "wait ", &work.waits)) return f;
  if (MaybeFailure f = add_events(args.signals, args.num_signals, "signal ", &work.signals))
    return f;

  // ---- Inputs ----------------------------------------------------------------------------
  std::vector<std::vector<int64_t>> input_dims(program.inputs.size());
  std::vector<const Buffer*> in_buffers(program.inputs.size());
  std::vector<VkDeviceSize> in_offsets(program.inputs.size());
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const infer_tensor& t = args.inputs[i];
    const Program::Value& value = program.values[program.inputs[i]];
    const std::string label = sdk::input_label(i, value.name);
    std::vector<int64_t> dims;
    if (std::optional<std::string> why = sdk::check_input_tensor(t, label, value.view, &dims))
      return invalid(*why);
    const Buffer* buffer = t.buffer ? from_handle(t.buffer) : nullptr;
    std::optional<sdk::BufferExtent> extent;
    if (buffer != nullptr) extent = sdk::BufferExtent{buffer->size(), &buffer->device() == &device_};
    const size_t bytes = sdk::tensor_bytes(t.dtype, sdk::element_count(dims.data(), dims.size()));
    if (std::optional<std::string> why = sdk::check_tensor_memory(t, label, bytes, extent))
      return invalid(*why);
    input_dims[i] = std::move(dims);
    in_buffers[i] = buffer;
    in_offsets[i] = t.offset;
  }

  std::shared_ptr<const Plan> plan;
  if (MaybeFailure f = plan_for(input_dims, &plan)) return f;

  // ---- Outputs from the host -------------------------------------------------------------
  std::vector<const Buffer*> out_buffers(program.outputs.size());
  std::vector<VkDeviceSize> out_offsets(program.outputs.size());
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const size_t id = program.outputs[k];
    const std::vector<int64_t>& dims = plan->dims[id];
    const infer_dtype dtype = plan->dtypes[id];
    const std::string label = "output " + std::to_string(k) + " '" + program.values[id].name + "'";
    infer_tensor t{};
    t.struct_size = sizeof t;
    // Exactly once per output, from inside execute: the host places the tensor in its
    // own memory plan and keeps ownership.
    if (infer_status* s = args.alloc_output(args.alloc_ctx, k, dtype, dims.size(), dims.data(), &t))
      return sdk::take_status(device_.host(), s, "vulkan: alloc_output for " + label + " failed: ");
    const Buffer* buffer = t.buffer ? from_handle(t.buffer) : nullptr;
    const size_t bytes = sdk::tensor_bytes(dtype, sdk::element_count(dims.data(), dims.size()));
    if (buffer == nullptr || &buffer->device() != &device_ || !buffer->contains(t.offset, bytes))
      return failure(INFER_STATUS_INTERNAL,
                     "vulkan: alloc_output returned an unusable tensor for " + label + " (needs " +
                         std::to_string(bytes) + " bytes of this device's memory)");
    out_buffers[k] = buffer;
    out_offsets[k] = t.offset;
  }

  // A cancelled run enqueues nothing but its failure, which its signals report.
  infer_run_context* run = INFER_HAS_FIELD(args_ptr, infer_execute_args, run) ? args.run : nullptr;
  if (device_.host().cancelled(run)) {
    work.failure = failure(INFER_STATUS_CANCELLED,
                           "vulkan: run of partition '" + program.name + "' cancelled");
    stream.enqueue(std::move(work));
    return std::nullopt;
  }

  // ---- Memory of this execution ----------------------------------------------------------
  std::shared_ptr<Buffer> arena;
  if (plan->arena_bytes > 0) {
    std::unique_ptr<Buffer> b;
    if (MaybeFailure f = Buffer::create(device_, INFER_MEMORY_DEVICE_LOCAL, plan->arena_bytes, 256,
                                        "the scratch arena of partition '" + program.name + "' (" +
                                            std::to_string(plan->arena_bytes) + " bytes)",
                                        &b))
      return f;
    arena = std::move(b);
  }
  // Tensors the host placed at offsets a storage buffer cannot be bound at
  // (minStorageBufferOffsetAlignment) go through an aligned copy in a fix-up buffer.
  const VkDeviceSize align = device_.limits().minStorageBufferOffsetAlignment;
  std::vector<Bound> in_bound(program.inputs.size()), out_bound(program.outputs.size());
  std::vector<VkDeviceSize> fix_in(program.inputs.size(), VK_WHOLE_SIZE),
      fix_out(program.outputs.size(), VK_WHOLE_SIZE);
  VkDeviceSize fix_bytes = 0;
  auto fix_slot = [&](VkDeviceSize bytes) {
    VkDeviceSize at = fix_bytes;
    fix_bytes += (bytes + 255) / 256 * 256;
    return at;
  };
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    in_bound[i] = {in_buffers[i]->handle(), in_offsets[i]};
    const size_t id = program.inputs[i];
    const VkDeviceSize bytes = sdk::tensor_bytes(plan->dtypes[id], sdk::element_count(
                                   plan->dims[id].data(), plan->dims[id].size()));
    if (in_offsets[i] % align != 0 && bytes > 0) fix_in[i] = fix_slot(bytes);
  }
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    out_bound[k] = {out_buffers[k]->handle(), out_offsets[k]};
    const size_t id = program.outputs[k];
    const VkDeviceSize bytes = sdk::tensor_bytes(plan->dtypes[id], sdk::element_count(
                                   plan->dims[id].data(), plan->dims[id].size()));
    if (out_offsets[k] % align != 0 && bytes > 0) fix_out[k] = fix_slot(bytes);
  }
  std::shared_ptr<Buffer> fixup;
  if (fix_bytes > 0) {
    std::unique_ptr<Buffer> b;
    if (MaybeFailure f = Buffer::create(device_, INFER_MEMORY_DEVICE_LOCAL, fix_bytes, 256,
                                        "an alignment fix-up buffer", &b))
      return f;
    fixup = std::move(b);
    for (size_t i = 0; i < fix_in.size(); ++i)
      if (fix_in[i] != VK_WHOLE_SIZE) in_bound[i] = {fixup->handle(), fix_in[i]};
    for (size_t k = 0; k < fix_out.size(); ++k)
      if (fix_out[k] != VK_WHOLE_SIZE) out_bound[k] = {fixup->handle(), fix_out[k]};
  }
  auto resolve = [&](const Slot& s) -> Bound {
    switch (s.kind) {
      case Slot::Kind::kGraphInput: return in_bound[s.index];
      case Slot::Kind::kGraphOutput: return out_bound[s.index];
      case Slot::Kind::kConstant: return {program.values[s.index].device_copy->handle(), 0};
      case Slot::Kind::kArena: return {arena->handle(), s.offset};
      case Slot::Kind::kEmpty: break;
    }
    return {device_.dummy_buffer().handle(), 0};
  };

  // ---- Descriptors -----------------------------------------------------------------------
  auto pool = std::make_shared<DescriptorPool>();
  pool->device = &device_;
  const DeviceFns& vk = device_.vk();
  std::vector<VkDescriptorSet> sets(plan->num_dispatches, VK_NULL_HANDLE);
  if (plan->num_dispatches > 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              std::max<uint32_t>(plan->num_descriptors, 1)};
    VkDescriptorPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    info.maxSets = plan->num_dispatches;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    if (VkResult r = vk.vkCreateDescriptorPool(device_.handle(), &info, nullptr, &pool->pool);
        r != VK_SUCCESS) {
      pool->pool = VK_NULL_HANDLE;
      return vk_failure(r, "vkCreateDescriptorPool");
    }
    std::vector<VkDescriptorSetLayout> layouts;
    for (const Plan::Action& a : plan->actions)
      if (a.kind == Plan::Action::Kind::kDispatch) layouts.push_back(a.pipeline->set_layout);
    VkDescriptorSetAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    alloc.descriptorPool = pool->pool;
    alloc.descriptorSetCount = static_cast<uint32_t>(layouts.size());
    alloc.pSetLayouts = layouts.data();
    if (VkResult r = vk.vkAllocateDescriptorSets(device_.handle(), &alloc, sets.data());
        r != VK_SUCCESS)
      return vk_failure(r, "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos;
    infos.reserve(plan->num_descriptors);
    std::vector<VkWriteDescriptorSet> writes;
    size_t set_index = 0;
    for (const Plan::Action& a : plan->actions) {
      if (a.kind != Plan::Action::Kind::kDispatch) continue;
      for (uint32_t b = 0; b < a.bindings.size(); ++b) {
        const Slot& s = a.bindings[b];
        Bound bound = s.bytes > 0 ? resolve(s) : Bound{device_.dummy_buffer().handle(), 0};
        infos.push_back({bound.buffer, bound.offset, s.bytes > 0 ? s.bytes : VkDeviceSize{16}});
        VkWriteDescriptorSet w{};
        w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w.dstSet = sets[set_index];
        w.dstBinding = b;
        w.descriptorCount = 1;
        w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w.pBufferInfo = &infos.back();
        writes.push_back(w);
      }
      ++set_index;
    }
    vk.vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(),
                              0, nullptr);
  }

  // ---- Record ----------------------------------------------------------------------------
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (MaybeFailure f = stream.begin_commands(QueueKind::kCompute, &cmd)) return f;
  bool first = true;
  auto barrier = [&] {
    if (!first) cmd_barrier(vk, cmd);
    first = false;
  };
  for (size_t i = 0; i < fix_in.size(); ++i) {
    if (fix_in[i] == VK_WHOLE_SIZE) continue;
    const size_t id = program.inputs[i];
    VkBufferCopy c{in_offsets[i], fix_in[i],
                   sdk::tensor_bytes(plan->dtypes[id], sdk::element_count(plan->dims[id].data(),
                                                                          plan->dims[id].size()))};
    vk.vkCmdCopyBuffer(cmd, in_buffers[i]->handle(), fixup->handle(), 1, &c);
    first = false;
  }
  size_t set_index = 0;
  for (const Plan::Action& a : plan->actions) {
    barrier();
    if (a.kind == Plan::Action::Kind::kCopy) {
      Bound src = resolve(a.src), dst = resolve(a.dst);
      VkBufferCopy c{src.offset, dst.offset, a.dst.bytes};
      vk.vkCmdCopyBuffer(cmd, src.buffer, dst.buffer, 1, &c);
      continue;
    }
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a.pipeline->pipeline);
    vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a.pipeline->layout, 0, 1,
                               &sets[set_index++], 0, nullptr);
    if (!a.push.empty())
      vk.vkCmdPushConstants(cmd, a.pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                            static_cast<uint32_t>(a.push.size() * 4), a.push.data());
    vk.vkCmdDispatch(cmd, a.groups[0], a.groups[1], a.groups[2]);
  }
  bool fixed_out = false;
  for (size_t k = 0; k < fix_out.size(); ++k) {
    if (fix_out[k] == VK_WHOLE_SIZE) continue;
    if (!fixed_out) barrier();
    fixed_out = true;
    const size_t id = program.outputs[k];
    VkBufferCopy c{fix_out[k], out_offsets[k],
                   sdk::tensor_bytes(plan->dtypes[id], sdk::element_count(plan->dims[id].data(),
                                                                          plan->dims[id].size()))};
    vk.vkCmdCopyBuffer(cmd, fixup->handle(), out_buffers[k]->handle(), 1, &c);
  }
  // Outputs may be read by the host straight from mapped memory after completion.
  cmd_barrier_to_host(vk, cmd);
  if (VkResult r = vk.vkEndCommandBuffer(cmd); r != VK_SUCCESS) {
    stream.discard_commands(QueueKind::kCompute, cmd);
    return vk_failure(r, "vkEndCommandBuffer");
  }

  work.cmd = cmd;
  work.queue = QueueKind::kCompute;
  work.keep.push_back(plan);
  work.keep.push_back(program_);
  if (arena) work.keep.push_back(arena);
  if (fixup) work.keep.push_back(fixup);
  work.keep.push_back(pool);
  stream.enqueue(std::move(work));
  return std::nullopt;
}

}  // namespace infer::vk
