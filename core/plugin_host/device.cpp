#include "plugin_host/device.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>

#include "plugin_host/plugin_instance.hpp"
#include "plugin_host/status_bridge.hpp"

namespace infer::host {
namespace {

using Groups = std::vector<std::vector<size_t>>;

// The sink handed to propose_groups. A C callback: nothing may escape it.
void collect_group(void* sink_ctx, const size_t* node_indices, size_t count) {
  if (sink_ctx == nullptr || node_indices == nullptr || count == 0) return;
  try {
    static_cast<Groups*>(sink_ctx)->emplace_back(node_indices, node_indices + count);
  } catch (...) {
    // Out of memory: the proposal is dropped, which only costs a fusion opportunity.
  }
}

}  // namespace

Device::Device(std::shared_ptr<const PluginInstance> owner, infer_device* device, size_t index,
               const DeviceProps* props)
    : owner_(std::move(owner)), device_(device), index_(index), props_(props) {}

const std::string& Device::plugin_name() const { return owner_->name(); }

std::string Device::describe() const {
  return owner_->name() + ":" + std::to_string(index_) + " (" + props_->name + ")";
}

Status Device::fail(infer_status* status, const char* what) const {
  return take_status(
      status, "plugin '" + owner_->name() + "' device " + std::to_string(index_) + ": " + what);
}

Result<Capability> Device::query_capability(const infer_node_view& node) const {
  infer_capability cap{};
  cap.struct_size = sizeof(cap);
  cap.support = INFER_SUPPORT_NO;
  cap.est_time_us = -1;
  cap.est_memory_bytes = -1;
  cap.compute_dtype = INFER_DTYPE_UNDEFINED;
  INFER_RETURN_IF_ERROR(
      fail(owner_->api().query_capability(device_, &node, &cap), "query_capability"));
  cap.reason[INFER_REASON_MAX - 1] = '\0';
  if (cap.support != INFER_SUPPORT_NO && cap.support != INFER_SUPPORT_YES &&
      cap.support != INFER_SUPPORT_PREFERRED) {
    return internal_error("plugin '" + owner_->name() + "' answered support value " +
                          std::to_string(static_cast<int>(cap.support)) + " for node '" +
                          (node.name ? node.name : "") + "' (expected 0, 1 or 2)");
  }
  Capability out;
  out.support = cap.support;
  out.est_time_us = cap.est_time_us;
  out.est_memory_bytes = cap.est_memory_bytes;
  out.reason = cap.reason;
  out.compute_dtype = cap.compute_dtype;
  return out;
}

bool Device::can_propose_groups() const { return owner_->api().propose_groups != nullptr; }

Result<std::vector<std::vector<size_t>>> Device::propose_groups(
    const infer_graph_view& graph) const {
  Groups groups;
  if (!can_propose_groups()) return groups;  // fallback: no proposals
  INFER_RETURN_IF_ERROR(fail(owner_->api().propose_groups(device_, &graph, collect_group, &groups),
                             "propose_groups"));
  return groups;
}

Result<Buffer> Device::allocate(infer_memory_kind kind, size_t size, size_t alignment) const {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return invalid_argument(describe() + ": buffer alignment " + std::to_string(alignment) +
                            " is not a power of two");
  }
  infer_buffer* buffer = nullptr;
  INFER_RETURN_IF_ERROR(
      fail(owner_->api().buffer_alloc(device_, kind, size, alignment, &buffer), "buffer_alloc"));
  if (buffer == nullptr)
    return internal_error(describe() + ": buffer_alloc succeeded but returned no buffer");
  return Buffer(owner_, buffer, size, kind, false);
}

Result<Buffer> Device::import_host(void* host_ptr, size_t size) const {
  if (host_ptr == nullptr && size > 0)
    return invalid_argument(describe() + ": import_host of a NULL pointer");
  const infer_plugin_api& api = owner_->api();
  if (api.buffer_import_host != nullptr) {
    infer_buffer* buffer = nullptr;
    INFER_RETURN_IF_ERROR(
        fail(api.buffer_import_host(device_, host_ptr, size, &buffer), "buffer_import_host"));
    if (buffer == nullptr) {
      return internal_error(describe() + ": buffer_import_host succeeded but returned no buffer");
    }
    return Buffer(owner_, buffer, size, INFER_MEMORY_HOST_PINNED, true);
  }
  // Fallback: a device copy of the bytes. Prefer a mapping (no queue round trip), else
  // go through a stream and wait for the copy, so the caller may drop its memory.
  INFER_ASSIGN_OR_RETURN(Buffer buffer, allocate(INFER_MEMORY_DEVICE_LOCAL, size));
  if (size == 0) return buffer;
  if (std::optional<void*> mapped = buffer.map()) {
    std::memcpy(*mapped, host_ptr, size);
    return buffer;
  }
  INFER_ASSIGN_OR_RETURN(Stream stream, create_stream());
  INFER_ASSIGN_OR_RETURN(Event done, create_event());
  infer_copy_region region = host_to_device_region(host_ptr, buffer, 0, size);
  INFER_RETURN_IF_ERROR(stream.copy({&region, 1}));
  INFER_RETURN_IF_ERROR(stream.signal(done, 1));
  INFER_RETURN_IF_ERROR(done.wait(1));
  return buffer;
}

Result<Stream> Device::create_stream() const {
  infer_stream* stream = nullptr;
  INFER_RETURN_IF_ERROR(fail(owner_->api().stream_create(device_, &stream), "stream_create"));
  if (stream == nullptr)
    return internal_error(describe() + ": stream_create succeeded but returned no stream");
  return Stream(owner_, stream);
}

Result<Event> Device::create_event() const {
  infer_event* event = nullptr;
  INFER_RETURN_IF_ERROR(fail(owner_->api().event_create(device_, &event), "event_create"));
  if (event == nullptr)
    return internal_error(describe() + ": event_create succeeded but returned no event");
  auto state = std::make_shared<Event::State>();
  state->owner = owner_;
  state->event = event;
  return Event(std::move(state));
}

Result<CopyCost> Device::copy_cost(infer_copy_direction direction) const {
  CopyCost out;
  const infer_plugin_api& api = owner_->api();
  if (api.copy_cost == nullptr) return out;  // fallback: can copy, cost unknown
  infer_copy_cost cost{};
  cost.struct_size = sizeof(cost);
  infer_status_code code = INFER_STATUS_OK;
  Status st =
      take_status(api.copy_cost(device_, direction, &cost), describe() + ": copy_cost", &code);
  if (code == INFER_STATUS_UNSUPPORTED) {
    out.can_copy = false;
    out.known = true;
    return out;
  }
  INFER_RETURN_IF_ERROR(st);
  out.known = true;
  out.bandwidth_bytes_per_us = cost.bandwidth_bytes_per_us;
  out.latency_us = cost.latency_us;
  return out;
}

Result<Executable> Device::compile(const infer_graph_view& graph,
                                   const CompileOptions& options) const {
  infer_compile_options opts{};
  opts.struct_size = sizeof(opts);
  opts.optimization_level = options.optimization_level;
  opts.partition_name = options.partition_name.c_str();
  infer_executable* exe = nullptr;
  INFER_RETURN_IF_ERROR(fail(owner_->api().compile(device_, &graph, &opts, &exe),
                             ("compile of partition '" + options.partition_name + "'").c_str()));
  if (exe == nullptr) {
    return internal_error(describe() + ": compile of partition '" + options.partition_name +
                          "' succeeded but returned no executable");
  }
  return Executable(owner_, exe, options.partition_name, graph.num_inputs, graph.num_outputs,
                    options.keep_alive);
}

bool Device::can_prepack() const { return owner_->api().prepack_constant != nullptr; }

bool Device::prepack_replaces_constants() const {
  return can_prepack() && (owner_->api().prepack_flags & INFER_PREPACK_REPLACES_CONSTANT) != 0;
}

Result<std::optional<PrepackedConstant>> Device::prepack_constant(const infer_node_view& node,
                                                                  size_t input_index) const {
  std::optional<PrepackedConstant> none;
  if (!can_prepack()) return none;
  void* data = nullptr;
  size_t size = 0;
  INFER_RETURN_IF_ERROR(
      fail(owner_->api().prepack_constant(device_, &node, input_index, &data, &size),
           "prepack_constant"));
  if (data == nullptr) return none;  // declined
  PrepackedConstant out;
  // host_alloc uses posix_memalign, so free() releases it without the plugin instance.
  out.data =
      std::shared_ptr<const void>(data, [](const void* p) { std::free(const_cast<void*>(p)); });
  out.size = size;
  return std::optional<PrepackedConstant>(std::move(out));
}

}  // namespace infer::host
