// The ABI surface of the Vulkan plugin: the one exported symbol and the function table.
//
// Every function here is a thin C shim: it checks the pointers it was given, calls into
// the C++ objects, and converts the result into an infer_status* through the host. The
// SDK's sdk::EntryPoint (plugin_glue.hpp) words the "is NULL" errors and runs each body
// inside sdk::guarded, so no C++ exception ever crosses the ABI.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "capability.hpp"
#include "copy.hpp"
#include "handles.hpp"

namespace infer::vk {
namespace {

sdk::EntryPoint entry(const sdk::Host& host, const char* function) {
  return sdk::EntryPoint(host, "vulkan", function);
}

// An enum the host passed, as its raw integer. A C host may pass any int; in C++, reading
// a value outside the enumerators' range through the enum type is undefined behaviour
// (UBSan reports it), so the value is read bytewise and range-checked before use.
template <typename E>
int raw_enum(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// ---- Plugin instance -----------------------------------------------------------------

infer_status* plugin_create(const infer_host_services* services, infer_plugin** out) {
  if (out != nullptr) *out = nullptr;
  // Without status_create no error can be reported at all (see the SDK example).
  if (services == nullptr || !INFER_HAS_FIELD(services, infer_host_services, status_create) ||
      services->status_create == nullptr || out == nullptr)
    return nullptr;
  sdk::Host host(services);
  if (!INFER_HAS_FIELD(services, infer_host_services, host_free) || !services->status_free ||
      !services->status_code || !services->status_message)
    return host.status(INFER_STATUS_INVALID_ARGUMENT,
                       "vulkan: the host services table lacks the status services");
  return entry(host, "plugin_create").run([&] {
    return sdk::make_handle<Plugin>(out, [&](auto* p) { return Plugin::create(services, p); });
  });
}

void plugin_destroy(infer_plugin* plugin) { delete from_handle(plugin); }

// ---- Devices -------------------------------------------------------------------------

infer_status* get_devices(infer_plugin* p, infer_device** devices, size_t capacity, size_t* count) {
  Plugin* plugin = from_handle(p);
  const auto call = entry(plugin->host(), "get_devices");
  if (count == nullptr) return call.null_argument("count");
  *count = 0;
  // Devices are found on first use (opening the loader is slow), and a machine without
  // any is UNAVAILABLE with the reason the probe gave.
  return call.run([&]() -> infer_status* {
    if (MaybeFailure f = plugin->ensure_initialized()) return to_status(plugin->host(), f);
    const auto& all = plugin->devices();
    if (all.empty())
      return plugin->host().status(INFER_STATUS_UNAVAILABLE, plugin->unavailable_reason());
    *count = all.size();
    if (devices != nullptr)
      for (size_t i = 0; i < all.size() && i < capacity; ++i) devices[i] = to_handle(all[i].get());
    return nullptr;
  });
}

infer_status* device_get_props(infer_device* d, infer_device_props* out) {
  Device* device = from_handle(d);
  if (out == nullptr) return entry(device->host(), "device_get_props").null_argument("out");
  device->fill_props(out);
  return nullptr;
}

// ---- Capability ----------------------------------------------------------------------

infer_status* query_capability_fn(infer_device* d, const infer_node_view* node,
                                  infer_capability* out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "query_capability");
  if (node == nullptr || out == nullptr) return call.null_argument("node or out");
  return call.run([&] { query_capability(*device, *node, out); });
}

// ---- Memory --------------------------------------------------------------------------

infer_status* buffer_alloc(infer_device* d, infer_memory_kind kind, size_t size, size_t alignment,
                           infer_buffer** out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "buffer_alloc");
  if (out == nullptr) return call.null_argument("out");
  const int raw_kind = raw_enum(kind);
  if (raw_kind < INFER_MEMORY_DEVICE_LOCAL || raw_kind > INFER_MEMORY_HOST_PINNED)
    return call.error(INFER_STATUS_INVALID_ARGUMENT,
                      "unknown memory kind " + std::to_string(raw_kind));
  return call.run([&] {
    return sdk::make_handle<Buffer>(out, [&](auto* b) {
      return Buffer::create(*device, kind, size, alignment,
                            "a buffer of " + std::to_string(size) + " bytes", b);
    });
  });
}

void buffer_free(infer_buffer* buffer) { delete from_handle(buffer); }

infer_status* buffer_map(infer_buffer* b, void** host_ptr) {
  Buffer* buffer = from_handle(b);
  const sdk::Host& host = buffer->device().host();
  if (host_ptr == nullptr) return entry(host, "buffer_map").null_argument("host_ptr");
  // UNSUPPORTED, not an error of the caller: the host reacts by copying through a stream.
  if (!buffer->host_mappable())
    return host.status(INFER_STATUS_UNSUPPORTED,
                       "vulkan: DEVICE_LOCAL memory is not host-addressable on this device "
                       "(option unified_memory is off or unavailable); copy it through a stream "
                       "with copy_batch");
  *host_ptr = buffer->mapped();
  return nullptr;
}

// ---- Streams -------------------------------------------------------------------------
// Streams and events are shared with the submissions in flight, so their handles are
// holders of a shared_ptr (handles.hpp).

infer_status* stream_create(infer_device* d, infer_stream** out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "stream_create");
  if (out == nullptr) return call.null_argument("out");
  return call.run([&]() -> MaybeFailure {
    auto handle = std::make_unique<StreamHandle>();
    if (MaybeFailure f = Stream::create(*device, &handle->stream)) return f;
    device->scheduler().add_stream(handle->stream);
    *out = to_handle(handle.release());
    return std::nullopt;
  });
}

void stream_destroy(infer_stream* s) {
  StreamHandle* handle = from_handle(s);
  if (handle == nullptr) return;
  handle->stream->drain();
  handle->stream->device().scheduler().remove_stream(handle->stream.get());
  delete handle;
}

// ---- Timeline events -----------------------------------------------------------------
// Counter, sticky failure, waits and callbacks are sdk::Timeline's (event.hpp).

infer_status* event_create(infer_device* d, infer_event** out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "event_create");
  if (out == nullptr) return call.null_argument("out");
  return call.run([&] {
    return sdk::make_handle<EventHandle>(out, [&](auto* handle) -> MaybeFailure {
      *handle = std::make_unique<EventHandle>();
      return Event::create(*device, &(*handle)->event);
    });
  });
}

void event_destroy(infer_event* e) {
  EventHandle* handle = from_handle(e);
  if (handle == nullptr) return;
  // Callbacks run now (CANCELLED), even if a submission in flight still holds the event.
  handle->event->cancel_callbacks();
  delete handle;
}

// The event of a stream_signal / stream_wait: present, and of the stream's device.
infer_status* check_event(const sdk::EntryPoint& call, Stream& stream, infer_event* event) {
  if (event == nullptr) return call.null_argument("event");
  if (&from_handle(event)->event->device() != &stream.device())
    return call.error(INFER_STATUS_INVALID_ARGUMENT,
                      "the event belongs to another device than the stream");
  return nullptr;
}

infer_status* stream_signal(infer_stream* s, infer_event* event, uint64_t value) {
  Stream& stream = *from_handle(s)->stream;
  const auto call = entry(stream.device().host(), "stream_signal");
  if (infer_status* st = check_event(call, stream, event)) return st;
  return call.run([&] {
    Work work;
    work.signals.push_back({from_handle(event)->event, value});
    stream.enqueue(std::move(work));
  });
}

infer_status* stream_wait(infer_stream* s, infer_event* event, uint64_t value) {
  Stream& stream = *from_handle(s)->stream;
  const auto call = entry(stream.device().host(), "stream_wait");
  if (infer_status* st = check_event(call, stream, event)) return st;
  return call.run([&] { stream.add_wait({from_handle(event)->event, value}); });
}

infer_status* event_signal_host(infer_event* e, uint64_t value) {
  Event& event = *from_handle(e)->event;
  return entry(event.host(), "event_signal_host").run([&] {
    return event.signal_from_host(value);
  });
}

infer_status* event_wait(infer_event* e, uint64_t value, uint64_t timeout_ns) {
  return from_handle(e)->event->wait_status(value, timeout_ns);
}

infer_status* event_query(infer_event* e, uint64_t* value) {
  Event& event = *from_handle(e)->event;
  if (value == nullptr) return entry(event.host(), "event_query").null_argument("value");
  return to_status(event.host(), event.query(value));
}

infer_status* event_on_complete(infer_event* e, uint64_t value, infer_event_callback_fn cb,
                                void* user) {
  Event& event = *from_handle(e)->event;
  const auto call = entry(event.host(), "event_on_complete");
  if (cb == nullptr) return call.null_argument("cb");
  return call.run([&] { event.on_complete(value, cb, user); });
}

// ---- Copies --------------------------------------------------------------------------

infer_status* copy_batch(infer_stream* s, const infer_copy_region* regions, size_t count) {
  Stream& stream = *from_handle(s)->stream;
  const auto call = entry(stream.device().host(), "copy_batch");
  if (regions == nullptr && count > 0) return call.null_argument("regions");
  return call.run([&] { return enqueue_copies(stream, regions, count); });
}

infer_status* copy_cost(infer_device* d, infer_copy_direction direction, infer_copy_cost* out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "copy_cost");
  if (out == nullptr) return call.null_argument("out");
  const int raw_direction = raw_enum(direction);
  if (raw_direction < INFER_COPY_HOST_TO_DEVICE || raw_direction > INFER_COPY_DEVICE_TO_DEVICE)
    return call.error(INFER_STATUS_INVALID_ARGUMENT,
                      "unknown copy direction " + std::to_string(raw_direction));
  return to_status(device->host(), device->fill_copy_cost(direction, out));
}

// ---- Executables ---------------------------------------------------------------------

infer_status* compile(infer_device* d, const infer_graph_view* graph,
                      const infer_compile_options* options, infer_executable** out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "compile");
  if (graph == nullptr || out == nullptr) return call.null_argument("graph or out");
  return call.run([&] {
    return sdk::make_handle<Executable>(out, [&](auto* executable) {
      return Executable::compile(*device, *graph, options, executable);
    });
  });
}

void executable_destroy(infer_executable* executable) { delete from_handle(executable); }

infer_status* execute(infer_executable* e, infer_stream* s, const infer_execute_args* args) {
  Executable* executable = from_handle(e);
  const auto call = entry(executable->device().host(), "execute");
  if (s == nullptr || args == nullptr) return call.null_argument("stream or args");
  return call.run([&] { return executable->execute(*from_handle(s)->stream, args); });
}

constexpr infer_plugin_api kApi = {
    .struct_size = sizeof(infer_plugin_api),
    .abi_major = INFER_ABI_VERSION_MAJOR,
    .abi_minor = INFER_ABI_VERSION_MINOR,
    .min_host_minor = 1,
    .name = "vulkan",  // must match the file name libinfer_plugin_vulkan.so
    .version = "0.1.0",
    .description =
        "Vulkan compute: GLSL shaders compiled to SPIR-V at build time; runs on any "
        "Vulkan 1.1 device with timeline semaphores (GPUs, MoltenVK, lavapipe)",
    .plugin_create = plugin_create,
    .plugin_destroy = plugin_destroy,
    .get_devices = get_devices,
    .device_get_props = device_get_props,
    .query_capability = query_capability_fn,
    // Not provided: the host partitions node by node; any group of supported nodes
    // compiles into one executable.
    .propose_groups = nullptr,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    // Not provided: importing host memory needs VK_EXT_external_memory_host and pointer
    // alignment the host's mmap'd weights do not promise; the host's fallback (allocate
    // and copy, once at compile time) is what we would do anyway.
    .buffer_import_host = nullptr,
    .buffer_map = buffer_map,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .stream_signal = stream_signal,
    .stream_wait = stream_wait,
    .event_signal_host = event_signal_host,
    .event_wait = event_wait,
    .event_query = event_query,
    .event_on_complete = event_on_complete,
    .copy_batch = copy_batch,
    .copy_cost = copy_cost,
    .compile = compile,
    .executable_destroy = executable_destroy,
    .execute = execute,
    // Not provided: weights are uploaded as they are; shaders read the ONNX layouts.
    .prepack_constant = nullptr,
    .prepack_flags = 0,
};

}  // namespace
}  // namespace infer::vk

// The one exported symbol (the version script sdk/plugin.map hides everything else). It
// must not allocate or start anything: the host may call it just to read the table.
extern "C" INFER_PLUGIN_EXPORT const infer_plugin_api* infer_plugin_entry(uint32_t host_abi_major,
                                                                          uint32_t host_abi_minor) {
  (void)host_abi_minor;
  if (host_abi_major != INFER_ABI_VERSION_MAJOR) return nullptr;
  return &infer::vk::kApi;
}
