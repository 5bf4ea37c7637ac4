// The ABI surface of the example plugin: the one exported symbol and the function table.
//
// Every function here is a thin C shim. It checks the pointers it was given, calls into
// the C++ objects, and converts the result into an infer_status* through the host. The
// SDK's sdk::EntryPoint (plugin_glue.hpp) does the uniform parts: it names the function
// in "NULL argument" messages and runs each body inside sdk::guarded, so that no C++
// exception can ever cross the ABI (the host is free to be written in C, and an
// exception unwinding into it is undefined behaviour). A body returns nothing on
// success, or a MaybeFailure, which becomes the status the ABI returns.
#include <cstdint>
#include <memory>
#include <string>

#include "capability.hpp"
#include "copy.hpp"
#include "handles.hpp"
#include "prepack.hpp"

namespace infer::example {
namespace {

// The entry point `function` of the example, reporting through `host`.
sdk::EntryPoint entry(const sdk::Host& host, const char* function) {
  return sdk::EntryPoint(host, "example", function);
}

// ---- Plugin instance ---------------------------------------------------------------

infer_status* plugin_create(const infer_host_services* services, infer_plugin** out) {
  if (out != nullptr) *out = nullptr;
  // Without status_create no error can be reported at all. Every host of ABI 0.1 or later
  // (our min_host_minor) provides it, so this only guards against a broken host: the
  // host then gets no plugin and no status.
  if (services == nullptr || !INFER_HAS_FIELD(services, infer_host_services, status_create) ||
      services->status_create == nullptr || out == nullptr)
    return nullptr;
  sdk::Host host(services);
  // The services this plugin calls unconditionally. Optional ones (log, get_option,
  // is_cancelled) are checked where they are used.
  if (!INFER_HAS_FIELD(services, infer_host_services, host_free) || !services->status_free ||
      !services->status_code || !services->status_message || !services->host_alloc ||
      !services->host_free)
    return host.status(INFER_STATUS_INVALID_ARGUMENT,
                       "example: the host services table lacks status or host memory services");
  return entry(host, "plugin_create").run([&] {
    return sdk::make_handle<Plugin>(out, [&](auto* p) { return Plugin::create(services, p); });
  });
}

void plugin_destroy(infer_plugin* plugin) { delete from_handle(plugin); }

// ---- Devices -----------------------------------------------------------------------

infer_status* get_devices(infer_plugin* p, infer_device** devices, size_t capacity, size_t* count) {
  Plugin* plugin = from_handle(p);
  if (count == nullptr) return entry(plugin->host(), "get_devices").null_argument("count");
  // Always exactly one simulated device. A plugin for real hardware reports what the
  // driver found, and with zero devices returns UNAVAILABLE saying why.
  *count = 1;
  if (capacity >= 1 && devices != nullptr) devices[0] = to_handle(&plugin->device());
  return nullptr;
}

infer_status* device_get_props(infer_device* d, infer_device_props* out) {
  Device* device = from_handle(d);
  if (out == nullptr) return entry(device->host(), "device_get_props").null_argument("out");
  device->fill_props(out);
  return nullptr;
}

// ---- Capability --------------------------------------------------------------------

infer_status* query_capability_fn(infer_device* d, const infer_node_view* node,
                                  infer_capability* out) {
  const auto call = entry(from_handle(d)->host(), "query_capability");
  if (node == nullptr || out == nullptr) return call.null_argument("node or out");
  return call.run([&] { query_capability(*node, out); });
}

// ---- Memory ------------------------------------------------------------------------

infer_status* buffer_alloc(infer_device* d, infer_memory_kind kind, size_t size, size_t alignment,
                           infer_buffer** out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "buffer_alloc");
  if (out == nullptr) return call.null_argument("out");
  return call.run([&] {
    const std::string what = "a buffer of " + std::to_string(size) + " bytes";
    return sdk::make_handle<Buffer>(
        out, [&](auto* b) { return Buffer::allocate(*device, kind, size, alignment, what, b); });
  });
}

void buffer_free(infer_buffer* buffer) { delete from_handle(buffer); }

infer_status* buffer_map(infer_buffer* b, void** host_ptr) {
  Buffer* buffer = from_handle(b);
  const sdk::Host& host = buffer->device().host();
  if (host_ptr == nullptr) return entry(host, "buffer_map").null_argument("host_ptr");
  // UNSUPPORTED, not an error of the caller: the host reacts by staging through a stream.
  if (!buffer->host_mappable())
    return host.status(INFER_STATUS_UNSUPPORTED,
                       "example: DEVICE_LOCAL memory is not host-addressable; copy it "
                       "through a stream with copy_batch");
  *host_ptr = buffer->data();
  return nullptr;
}

// ---- Streams -----------------------------------------------------------------------

infer_status* stream_create(infer_device* d, infer_stream** out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "stream_create");
  if (out == nullptr) return call.null_argument("out");
  return call.run([&] { *out = to_handle(new Stream(*device)); });
}

void stream_destroy(infer_stream* stream) { delete from_handle(stream); }

// ---- Timeline events ---------------------------------------------------------------
// The counter, the sticky failure and the callbacks are sdk::Timeline's (see event.hpp):
// these shims only check arguments and enqueue the stream items.

infer_status* event_create(infer_device* d, infer_event** out) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "event_create");
  if (out == nullptr) return call.null_argument("out");
  return call.run([&] { *out = to_handle(new Event(device->host())); });
}

void event_destroy(infer_event* event) { delete from_handle(event); }

infer_status* stream_signal(infer_stream* s, infer_event* event, uint64_t value) {
  Stream* stream = from_handle(s);
  const auto call = entry(stream->device().host(), "stream_signal");
  if (event == nullptr) return call.null_argument("event");
  return call.run([&] { stream->enqueue({WorkItem::make_signal(from_handle(event), value)}); });
}

infer_status* stream_wait(infer_stream* s, infer_event* event, uint64_t value) {
  Stream* stream = from_handle(s);
  const auto call = entry(stream->device().host(), "stream_wait");
  if (event == nullptr) return call.null_argument("event");
  return call.run([&] { stream->enqueue({WorkItem::make_wait(from_handle(event), value)}); });
}

infer_status* event_signal_host(infer_event* e, uint64_t value) {
  Event* event = from_handle(e);
  return to_status(event->host(), event->signal_from_host(value));
}

infer_status* event_wait(infer_event* e, uint64_t value, uint64_t timeout_ns) {
  return from_handle(e)->wait_status(value, timeout_ns);
}

infer_status* event_query(infer_event* e, uint64_t* value) {
  Event* event = from_handle(e);
  if (value == nullptr) return entry(event->host(), "event_query").null_argument("value");
  return to_status(event->host(), event->query(value));
}

infer_status* event_on_complete(infer_event* e, uint64_t value, infer_event_callback_fn cb,
                                void* user) {
  Event* event = from_handle(e);
  const auto call = entry(event->host(), "event_on_complete");
  if (cb == nullptr) return call.null_argument("cb");
  return call.run([&] { event->on_complete(value, cb, user); });
}

// ---- Copies ------------------------------------------------------------------------

infer_status* copy_batch(infer_stream* s, const infer_copy_region* regions, size_t count) {
  Stream* stream = from_handle(s);
  const auto call = entry(stream->device().host(), "copy_batch");
  if (regions == nullptr && count > 0) return call.null_argument("regions");
  return call.run([&] { return enqueue_copies(*stream, regions, count); });
}

infer_status* copy_cost(infer_device* d, infer_copy_direction direction, infer_copy_cost* out) {
  Device* device = from_handle(d);
  if (out == nullptr) return entry(device->host(), "copy_cost").null_argument("out");
  return to_status(device->host(), device->fill_copy_cost(direction, out));
}

// ---- Executables -------------------------------------------------------------------

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

infer_status* execute(infer_executable* e, infer_stream* stream, const infer_execute_args* args) {
  Executable* executable = from_handle(e);
  const auto call = entry(executable->device().host(), "execute");
  if (stream == nullptr || args == nullptr) return call.null_argument("stream or args");
  return call.run([&] { return executable->execute(*from_handle(stream), args); });
}

// ---- Weight prepacking -------------------------------------------------------------

infer_status* prepack_constant_fn(infer_device* d, const infer_node_view* node, size_t input_index,
                                  void** out_data, size_t* out_size) {
  Device* device = from_handle(d);
  const auto call = entry(device->host(), "prepack_constant");
  if (node == nullptr || out_data == nullptr || out_size == nullptr)
    return call.null_argument("node, out_data or out_size");
  return call.run(
      [&] { return prepack_constant(device->host(), *node, input_index, out_data, out_size); });
}

// The function table. Designated initializers name every entry, so a reader sees at a
// glance which optional entries the example leaves NULL, and why.
constexpr infer_plugin_api kApi = {
    .struct_size = sizeof(infer_plugin_api),
    .abi_major = INFER_ABI_VERSION_MAJOR,
    .abi_minor = INFER_ABI_VERSION_MINOR,
    // Every host service the example uses exists since minor 1.
    .min_host_minor = 1,
    .name = "example",  // must match the file name libinfer_plugin_example.so
    .version = "0.1.0",
    .description =
        "SDK example: a simulated discrete device with its own memory and "
        "asynchronous queues (float32 Add, Sub, Mul, Relu, MatMul, Gemm)",
    .plugin_create = plugin_create,
    .plugin_destroy = plugin_destroy,
    .get_devices = get_devices,
    .device_get_props = device_get_props,
    .query_capability = query_capability_fn,
    // Not provided: the host partitions node by node and compiles whatever contiguous
    // partition it forms; the example can run any such group of its ops.
    .propose_groups = nullptr,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    // Not provided: the device cannot address host memory, so "importing" a host pointer
    // could only mean copying it, which is exactly the host's fallback.
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
    .prepack_constant = prepack_constant_fn,
    // Not INFER_PREPACK_REPLACES_CONSTANT: compile falls back to const_data when a blob
    // does not match, so the host must keep the originals.
    .prepack_flags = 0,
};

}  // namespace
}  // namespace infer::example

// The one exported symbol (the version script sdk/plugin.map hides everything else).
// It must not allocate or start anything: the host may call it just to read the table,
// for instance to list the available plugins.
extern "C" INFER_PLUGIN_EXPORT const infer_plugin_api* infer_plugin_entry(uint32_t host_abi_major,
                                                                          uint32_t host_abi_minor) {
  // A host of another major version may lay out everything differently: decline. For an
  // older minor we still return the table; the host compares it with min_host_minor
  // itself and can then say precisely why it refuses us.
  (void)host_abi_minor;
  if (host_abi_major != INFER_ABI_VERSION_MAJOR) return nullptr;
  return &infer::example::kApi;
}
