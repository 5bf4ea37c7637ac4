// The ABI surface of the cpu plugin: the exported entry point and the function table.
// Every function is noexcept and funnels C++ exceptions into statuses (sdk::guarded),
// so nothing but a status crosses the boundary.
//
// Execution model: the device is the host CPU. Buffers are host memory, streams run
// each piece of work synchronously on the calling thread when it is enqueued (after the
// waits enqueued before it), and compute uses only the host's parallel_for.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include "abi_objects.hpp"
#include "executable.hpp"
#include "kernel_registry.hpp"
#include "precision.hpp"
#include "prepack.hpp"
#include "simd/isa.hpp"

namespace infer::cpu {
namespace {

constexpr size_t kMinAlignment = 64;

const sdk::Host& host_of(infer_device* d) { return d->plugin->host; }

infer_status* bad_arg(const sdk::Host& host, const char* what) {
  return host.error(INFER_STATUS_INVALID_ARGUMENT, "cpu: %s", what);
}

// ---- plugin and device -------------------------------------------------------------

infer_status* plugin_create(const infer_host_services* services, infer_plugin** out) noexcept {
  // Without status_create no error can be reported; leaving *out NULL is all we can do.
  if (out != nullptr) *out = nullptr;
  if (services == nullptr || out == nullptr || services->status_create == nullptr) return nullptr;
  const sdk::Host host(services);
  return sdk::guarded(host, [&]() -> infer_status* {
    *out = nullptr;
    if (services->abi_major != INFER_ABI_VERSION_MAJOR)
      return host.error(INFER_STATUS_UNSUPPORTED, "cpu: host ABI major %u, plugin needs %u",
                        services->abi_major, INFER_ABI_VERSION_MAJOR);
    if (services->host_alloc == nullptr || services->host_free == nullptr ||
        services->status_free == nullptr || services->status_code == nullptr ||
        services->status_message == nullptr)
      return host.status(INFER_STATUS_INVALID_ARGUMENT,
                         "cpu: host services lack host_alloc/host_free/status functions");
    // An INFER_CPU_ISA this CPU cannot honour fails loudly: a benchmark or test that
    // asked for one variant must never silently measure another.
    const simd::IsaChoice& isa = simd::selected_isa();
    if (!isa.error.empty())
      return host.status(INFER_STATUS_UNAVAILABLE, "cpu: " + isa.error);
    auto* p = new infer_plugin();
    p->host = host;
    p->device.plugin = p;
    *out = p;
    return nullptr;
  });
}

void plugin_destroy(infer_plugin* plugin) noexcept { delete plugin; }

infer_status* get_devices(infer_plugin* plugin, infer_device** devices, size_t capacity,
                          size_t* count) noexcept {
  if (plugin == nullptr || count == nullptr) return nullptr;
  *count = 1;
  if (devices != nullptr && capacity >= 1) devices[0] = &plugin->device;
  return nullptr;
}

infer_status* device_get_props(infer_device* device, infer_device_props* out) noexcept {
  const sdk::Host& host = host_of(device);
  if (out == nullptr) return bad_arg(host, "device_get_props: out is NULL");
  // Write only the fields the host's struct has room for.
  infer_device_props p{};
  std::snprintf(p.name, sizeof p.name, "CPU (%s)", simd::isa_name(simd::selected_isa().isa));
  std::snprintf(p.vendor, sizeof p.vendor, "host");
  p.kind = INFER_DEVICE_CPU;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  p.memory_bytes =
      pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  const infer_host_services* h = host.raw();
  p.compute_units = h->num_threads ? static_cast<uint32_t>(h->num_threads(h->host_ctx)) : 1;
  p.host_addressable = true;
  const size_t size = std::min(out->struct_size, sizeof p);
  const size_t keep = out->struct_size;
  if (size > sizeof(size_t))
    std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
                reinterpret_cast<const char*>(&p) + sizeof(size_t), size - sizeof(size_t));
  out->struct_size = keep;
  return nullptr;
}

// ---- capability --------------------------------------------------------------------

infer_status* query_capability(infer_device* device, const infer_node_view* node,
                               infer_capability* out) noexcept {
  const sdk::Host& host = host_of(device);
  if (node == nullptr || out == nullptr)
    return bad_arg(host, "query_capability: node or out is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    auto selected = select_kernel(*node);
    if (!selected.is_ok()) {
      out->support = INFER_SUPPORT_NO;
      sdk::set_reason(out, selected.status().message());
      return nullptr;
    }
    out->support = INFER_SUPPORT_YES;
    sdk::set_reason(out, "");
    const infer_dtype narrower = node_compute_dtype(host, *node);
    if (narrower != INFER_DTYPE_UNDEFINED) sdk::set_compute_dtype(out, narrower);
    return nullptr;
  });
}

// ---- memory ------------------------------------------------------------------------

infer_status* buffer_alloc(infer_device* device, infer_memory_kind, size_t size, size_t alignment,
                           infer_buffer** out) noexcept {
  const sdk::Host& host = host_of(device);
  if (out == nullptr) return bad_arg(host, "buffer_alloc: out is NULL");
  if (alignment != 0 && (alignment & (alignment - 1)) != 0)
    return host.error(INFER_STATUS_INVALID_ARGUMENT,
                      "cpu: buffer_alloc: alignment %zu is not a power of two", alignment);
  return sdk::guarded(host, [&]() -> infer_status* {
    *out = nullptr;
    const infer_host_services* h = host.raw();
    // All memory kinds are the same host memory on this device.
    void* p = h->host_alloc(h->host_ctx, size == 0 ? 1 : size, std::max(alignment, kMinAlignment));
    if (p == nullptr)
      return host.error(INFER_STATUS_OUT_OF_MEMORY, "cpu: out of host memory allocating %zu bytes",
                        size);
    auto* b = new infer_buffer();
    b->device = device;
    b->data = p;
    b->size = size;
    b->owned = true;
    *out = b;
    return nullptr;
  });
}

void buffer_free(infer_buffer* buffer) noexcept {
  if (buffer == nullptr || buffer->magic != kCpuBufferMagic) return;
  if (buffer->owned) {
    const infer_host_services* h = host_of(buffer->device).raw();
    h->host_free(h->host_ctx, buffer->data);
  }
  buffer->magic = 0;
  delete buffer;
}

infer_status* buffer_import_host(infer_device* device, void* host_ptr, size_t size,
                                 infer_buffer** out) noexcept {
  const sdk::Host& host = host_of(device);
  if (out == nullptr || (host_ptr == nullptr && size > 0))
    return bad_arg(host, "buffer_import_host: NULL pointer");
  return sdk::guarded(host, [&]() -> infer_status* {
    auto* b = new infer_buffer();
    b->device = device;
    b->data = host_ptr;
    b->size = size;
    b->owned = false;
    *out = b;
    return nullptr;
  });
}

infer_status* buffer_map(infer_buffer* buffer, void** host_ptr) noexcept {
  if (buffer == nullptr || buffer->magic != kCpuBufferMagic || host_ptr == nullptr) return nullptr;
  *host_ptr = buffer->data;
  return nullptr;
}

// ---- streams and events ------------------------------------------------------------

infer_status* stream_create(infer_device* device, infer_stream** out) noexcept {
  const sdk::Host& host = host_of(device);
  if (out == nullptr) return bad_arg(host, "stream_create: out is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    auto* s = new infer_stream();
    s->device = device;
    *out = s;
    return nullptr;
  });
}

// Work runs when it is enqueued, so nothing is ever left to wait for.
void stream_destroy(infer_stream* stream) noexcept { delete stream; }

infer_status* event_create(infer_device* device, infer_event** out) noexcept {
  const sdk::Host& host = host_of(device);
  if (out == nullptr) return bad_arg(host, "event_create: out is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    *out = new infer_event(device);
    return nullptr;
  });
}

void event_destroy(infer_event* event) noexcept { delete event; }

infer_status* stream_signal(infer_stream* stream, infer_event* event, uint64_t value) noexcept {
  const sdk::Host& host = host_of(stream->device);
  if (event == nullptr) return bad_arg(host, "stream_signal: event is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    std::lock_guard<std::mutex> lock(stream->mu);
    stream->state.signal(event, value);
    return nullptr;
  });
}

infer_status* stream_wait(infer_stream* stream, infer_event* event, uint64_t value) noexcept {
  const sdk::Host& host = host_of(stream->device);
  if (event == nullptr) return bad_arg(host, "stream_wait: event is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    std::lock_guard<std::mutex> lock(stream->mu);
    stream->state.add_wait(event, value);
    return nullptr;
  });
}

infer_status* event_signal_host(infer_event* event, uint64_t value) noexcept {
  return sdk::guarded(host_of(event->device), [&]() -> infer_status* {
    event->event.signal(value);
    return nullptr;
  });
}

infer_status* event_wait(infer_event* event, uint64_t value, uint64_t timeout_ns) noexcept {
  const sdk::Host& host = host_of(event->device);
  return sdk::guarded(
      host, [&]() -> infer_status* { return to_abi(host, event->event.wait(value, timeout_ns)); });
}

infer_status* event_query(infer_event* event, uint64_t* value) noexcept {
  const sdk::Host& host = host_of(event->device);
  if (value == nullptr) return bad_arg(host, "event_query: value is NULL");
  return sdk::guarded(host,
                      [&]() -> infer_status* { return to_abi(host, event->event.query(value)); });
}

infer_status* event_on_complete(infer_event* event, uint64_t value, infer_event_callback_fn cb,
                                void* user) noexcept {
  const sdk::Host& host = host_of(event->device);
  if (cb == nullptr) return bad_arg(host, "event_on_complete: callback is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    event->event.on_complete(value, cb, user);
    return nullptr;
  });
}

// ---- copies ------------------------------------------------------------------------

Status check_region(const infer_copy_region& r, size_t i) {
  if ((r.src_host == nullptr) == (r.src_buffer == nullptr))
    return invalid("cpu: copy region ", i, ": exactly one of src_host and src_buffer must be set");
  if ((r.dst_host == nullptr) == (r.dst_buffer == nullptr))
    return invalid("cpu: copy region ", i, ": exactly one of dst_host and dst_buffer must be set");
  for (const infer_buffer* b : {r.src_buffer, r.dst_buffer}) {
    if (b == nullptr) continue;
    if (b->magic != kCpuBufferMagic)
      return invalid("cpu: copy region ", i, ": not a cpu plugin buffer");
  }
  if (r.src_buffer &&
      (r.src_offset > r.src_buffer->size || r.src_buffer->size - r.src_offset < r.size_bytes))
    return invalid("cpu: copy region ", i, ": source range ", r.src_offset, "+", r.size_bytes,
                   " exceeds buffer size ", r.src_buffer->size);
  if (r.dst_buffer &&
      (r.dst_offset > r.dst_buffer->size || r.dst_buffer->size - r.dst_offset < r.size_bytes))
    return invalid("cpu: copy region ", i, ": destination range ", r.dst_offset, "+", r.size_bytes,
                   " exceeds buffer size ", r.dst_buffer->size);
  return Status::ok();
}

infer_status* copy_batch(infer_stream* stream, const infer_copy_region* regions,
                         size_t count) noexcept {
  const sdk::Host& host = host_of(stream->device);
  if (count > 0 && regions == nullptr) return bad_arg(host, "copy_batch: regions is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    for (size_t i = 0; i < count; ++i) {
      Status st = check_region(regions[i], i);
      if (!st.is_ok()) return to_abi(host, st);
    }
    std::lock_guard<std::mutex> lock(stream->mu);
    if (!stream->state.begin_work())
      return nullptr;  // skipped: the next signal reports the failure
    for (size_t i = 0; i < count; ++i) {
      const infer_copy_region& r = regions[i];
      const void* src =
          r.src_host ? r.src_host : static_cast<const uint8_t*>(r.src_buffer->data) + r.src_offset;
      void* dst =
          r.dst_host ? r.dst_host : static_cast<uint8_t*>(r.dst_buffer->data) + r.dst_offset;
      if (r.size_bytes > 0) std::memmove(dst, src, r.size_bytes);
    }
    return nullptr;
  });
}

infer_status* copy_cost(infer_device*, infer_copy_direction, infer_copy_cost* out) noexcept {
  if (out == nullptr) return nullptr;
  // A copy is a memcpy in host memory: roughly 10 GB/s and no setup cost to speak of.
  out->bandwidth_bytes_per_us = 10000.0;
  out->latency_us = 0.1;
  return nullptr;
}

// ---- executables -------------------------------------------------------------------

infer_status* compile(infer_device* device, const infer_graph_view* graph,
                      const infer_compile_options*, infer_executable** out) noexcept {
  const sdk::Host& host = host_of(device);
  if (graph == nullptr || out == nullptr) return bad_arg(host, "compile: graph or out is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    *out = nullptr;
    auto compiled = Executable::compile(host, device, *graph);
    if (!compiled.is_ok()) return to_abi(host, compiled.status());
    auto* exe = new infer_executable();
    exe->device = device;
    exe->impl = std::move(compiled).value();
    *out = exe;
    return nullptr;
  });
}

void executable_destroy(infer_executable* exe) noexcept { delete exe; }

infer_status* execute(infer_executable* exe, infer_stream* stream,
                      const infer_execute_args* args) noexcept {
  const sdk::Host& host = host_of(exe->device);
  if (stream == nullptr || args == nullptr) return bad_arg(host, "execute: stream or args is NULL");
  return sdk::guarded(host, [&]() -> infer_status* {
    // Malformed arguments are refused before anything is enqueued.
    if (Status st = exe->impl->check_args(*args); !st.is_ok())
      return to_abi(host, st.with_prefix("cpu: execute: "));
    if ((args->num_waits > 0 && args->waits == nullptr) ||
        (args->num_signals > 0 && args->signals == nullptr))
      return bad_arg(host, "execute: waits or signals is NULL but its count is not 0");
    for (size_t i = 0; i < args->num_waits; ++i)
      if (args->waits[i].event == nullptr) return bad_arg(host, "execute: a wait event is NULL");
    for (size_t i = 0; i < args->num_signals; ++i)
      if (args->signals[i].event == nullptr)
        return bad_arg(host, "execute: a signal event is NULL");
    std::lock_guard<std::mutex> lock(stream->mu);
    // An execution is its waits, then the work, then its signals, each following the
    // stream's failure rule (stream.hpp).
    StreamState& state = stream->state;
    if (state.begin_work()) {
      for (size_t i = 0; i < args->num_waits; ++i)
        state.wait_item(args->waits[i].event, args->waits[i].value);
      if (state.begin_work()) {
        Status st = exe->impl->execute(*args);
        if (!st.is_ok()) state.fail_work(st);
      }
    }
    for (size_t i = 0; i < args->num_signals; ++i)
      state.signal(args->signals[i].event, args->signals[i].value);
    return nullptr;
  });
}

// ---- weight prepacking ----------------------------------------------------------------

infer_status* prepack_constant(infer_device* device, const infer_node_view* node,
                               size_t input_index, void** out_data, size_t* out_size) noexcept {
  const sdk::Host& host = host_of(device);
  if (node == nullptr || out_data == nullptr || out_size == nullptr)
    return bad_arg(host, "prepack_constant: node, out_data or out_size is NULL");
  *out_data = nullptr;
  *out_size = 0;
  return sdk::guarded(host, [&]() -> infer_status* {
    if (input_index >= node->num_inputs || node->inputs[input_index] == nullptr ||
        node->inputs[input_index]->const_data == nullptr)
      return nullptr;  // declined: not a constant input
    // The packers write straight into the host's memory: no temporary copy of a weight.
    const infer_host_services* h = host.raw();
    size_t wanted = 0;
    void* mem = nullptr;
    const PackAlloc alloc = [&](size_t bytes) {
      wanted = bytes;
      mem = h->host_alloc(h->host_ctx, (bytes + 63) / 64 * 64, kMinAlignment);
      return mem;
    };
    size_t size = 0;
    try {
      if (prepack_weight(*node, input_index, alloc, &size, weight_precision(host)) == nullptr)
        return nullptr;
    } catch (const std::bad_alloc&) {
      if (mem != nullptr) h->host_free(h->host_ctx, mem);
      return host.error(INFER_STATUS_OUT_OF_MEMORY, "cpu: prepack_constant: %zu bytes for '%s'",
                        wanted, node->name ? node->name : "");
    }
    *out_data = mem;
    *out_size = size;
    return nullptr;
  });
}

constexpr infer_plugin_api kApi = {
    sizeof(infer_plugin_api),
    INFER_ABI_VERSION_MAJOR,
    INFER_ABI_VERSION_MINOR,
    /*min_host_minor=*/1,
    "cpu",
    "0.1.0",
    "Reference CPU backend: host memory, synchronous streams, kernels on the host's threads",
    plugin_create,
    plugin_destroy,
    get_devices,
    device_get_props,
    query_capability,
    /*propose_groups=*/nullptr,
    buffer_alloc,
    buffer_free,
    buffer_import_host,
    buffer_map,
    stream_create,
    stream_destroy,
    event_create,
    event_destroy,
    stream_signal,
    stream_wait,
    event_signal_host,
    event_wait,
    event_query,
    event_on_complete,
    copy_batch,
    copy_cost,
    compile,
    executable_destroy,
    execute,
    prepack_constant,
    // Kernels read a weight they prepacked only in that form (kernels/gemm_core.cpp,
    // kernels/conv.cpp), so the host may free the original.
    INFER_PREPACK_REPLACES_CONSTANT,
};

}  // namespace
}  // namespace infer::cpu

extern "C" INFER_PLUGIN_EXPORT const infer_plugin_api* infer_plugin_entry(uint32_t host_abi_major,
                                                                          uint32_t host_abi_minor) {
  if (host_abi_major != INFER_ABI_VERSION_MAJOR || host_abi_minor < infer::cpu::kApi.min_host_minor)
    return nullptr;
  return &infer::cpu::kApi;
}
