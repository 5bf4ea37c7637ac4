// The cuda plugin's ABI entry points (sdk/include/infer/plugin_api.h).
//
// This build probes the NVIDIA driver at run time (cuda_driver.hpp) and reports why it
// offers no device: no driver, the toolkit's stub library, no visible GPU, a driver older
// than CUDA 13, or, on a machine with GPUs, that this build has no kernels yet (memory,
// streams and kernels are the next steps of plugins/cuda/README.md). The partitioner
// then sends every node to the next backend, and infer-run says why in one line.
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "cuda_driver.hpp"
#include "infer/plugin_api.h"

struct infer_plugin {
  const infer_host_services* host = nullptr;
};

namespace {

using infer::cuda::DriverProbe;

infer_status* make_status(const infer_host_services* host, infer_status_code code,
                          const std::string& message) {
  return host->status_create(host->host_ctx, code, message.c_str());
}

// The host never calls the per-device entries of a plugin with no device; they answer
// UNSUPPORTED should one be called anyway. The host pointer of the last instance serves
// for the message (every instance gets the same services table).
const infer_host_services* g_host = nullptr;

infer_status* no_device() {
  return g_host == nullptr
             ? nullptr
             : make_status(g_host, INFER_STATUS_UNSUPPORTED, "cuda: this build offers no device");
}

// Why this build offers no device, from one probe of the driver.
std::string unavailable_reason(const DriverProbe& probe) {
  if (!probe.usable) return probe.reason;
  std::string gpus;
  for (const infer::cuda::GpuInfo& g : probe.gpus)
    gpus +=
        (gpus.empty() ? "" : "; ") + std::to_string(g.ordinal) + ": " + infer::cuda::describe(g);
  return "driver " + infer::cuda::version_text(probe.driver_version) + " (" + probe.library_path +
         ") sees " + std::to_string(probe.gpus.size()) +
         (probe.gpus.size() == 1 ? " GPU (" : " GPUs (") + gpus +
         "), but this build of the cuda plugin has no kernels yet, so it offers no device";
}

infer_status* plugin_create(const infer_host_services* host, infer_plugin** out) {
  auto* p = new (std::nothrow) infer_plugin;
  if (p == nullptr) return make_status(host, INFER_STATUS_OUT_OF_MEMORY, "cuda: out of memory");
  p->host = host;
  g_host = host;
  *out = p;
  return nullptr;
}

void plugin_destroy(infer_plugin* plugin) { delete plugin; }

infer_status* get_devices(infer_plugin* plugin, infer_device** devices, size_t capacity,
                          size_t* count) {
  (void)devices;
  (void)capacity;
  *count = 0;
  std::string reason;
  try {
    reason = unavailable_reason(infer::cuda::probe_driver());
  } catch (const std::exception& e) {
    reason = std::string("probing the CUDA driver failed: ") + e.what();
  }
  return make_status(plugin->host, INFER_STATUS_UNAVAILABLE, reason);
}

infer_status* device_get_props(infer_device*, infer_device_props*) { return no_device(); }
infer_status* query_capability(infer_device*, const infer_node_view*, infer_capability*) {
  return no_device();
}
infer_status* buffer_alloc(infer_device*, infer_memory_kind, size_t, size_t, infer_buffer**) {
  return no_device();
}
void buffer_free(infer_buffer*) {}
infer_status* stream_create(infer_device*, infer_stream**) { return no_device(); }
void stream_destroy(infer_stream*) {}
infer_status* event_create(infer_device*, infer_event**) { return no_device(); }
void event_destroy(infer_event*) {}
infer_status* stream_signal(infer_stream*, infer_event*, uint64_t) { return no_device(); }
infer_status* stream_wait(infer_stream*, infer_event*, uint64_t) { return no_device(); }
infer_status* event_wait(infer_event*, uint64_t, uint64_t) { return no_device(); }
infer_status* copy_batch(infer_stream*, const infer_copy_region*, size_t) { return no_device(); }
infer_status* compile(infer_device*, const infer_graph_view*, const infer_compile_options*,
                      infer_executable**) {
  return no_device();
}
void executable_destroy(infer_executable*) {}
infer_status* execute(infer_executable*, infer_stream*, const infer_execute_args*) {
  return no_device();
}

// Assigned field by field (the optional entries stay NULL): C++ designated initializers
// would have to name every member.
infer_plugin_api make_api() {
  infer_plugin_api a{};
  a.struct_size = sizeof(infer_plugin_api);
  a.abi_major = INFER_ABI_VERSION_MAJOR;
  a.abi_minor = INFER_ABI_VERSION_MINOR;
  a.min_host_minor = 0;
  a.name = "cuda";
  a.version = INFER_PLUGIN_VERSION;
  a.description =
      "NVIDIA GPUs through the CUDA driver API, loaded at run time (this build: driver "
      "probe only, no kernels yet)";
  a.plugin_create = plugin_create;
  a.plugin_destroy = plugin_destroy;
  a.get_devices = get_devices;
  a.device_get_props = device_get_props;
  a.query_capability = query_capability;
  a.buffer_alloc = buffer_alloc;
  a.buffer_free = buffer_free;
  a.stream_create = stream_create;
  a.stream_destroy = stream_destroy;
  a.event_create = event_create;
  a.event_destroy = event_destroy;
  a.stream_signal = stream_signal;
  a.stream_wait = stream_wait;
  a.event_wait = event_wait;
  a.copy_batch = copy_batch;
  a.compile = compile;
  a.executable_destroy = executable_destroy;
  a.execute = execute;
  return a;
}

const infer_plugin_api kApi = make_api();

}  // namespace

extern "C" INFER_PLUGIN_EXPORT const infer_plugin_api* infer_plugin_entry(uint32_t major,
                                                                          uint32_t minor) {
  (void)minor;
  return major == INFER_ABI_VERSION_MAJOR ? &kApi : nullptr;
}
