/* A test plugin whose driver is "missing": it loads, creates an instance and reports
 * zero devices with an UNAVAILABLE reason, as the ABI asks of a plugin on a machine
 * without its hardware. Every other entry exists (the host requires them) but is never
 * reached, since there is no device to call them with. */
#include <stdlib.h>

#include "infer/plugin_api.h"

struct infer_plugin {
  const infer_host_services* host;
};

static const infer_host_services* g_host = NULL;

static infer_status* unsupported(void) {
  return g_host ? g_host->status_create(g_host->host_ctx, INFER_STATUS_UNSUPPORTED,
                                        "nodevice: there is no device")
                : NULL;
}

static infer_status* plugin_create(const infer_host_services* host, infer_plugin** out) {
  infer_plugin* p = (infer_plugin*)malloc(sizeof *p);
  if (p == NULL) return host->status_create(host->host_ctx, INFER_STATUS_OUT_OF_MEMORY, "oom");
  p->host = host;
  g_host = host;
  *out = p;
  return NULL;
}

static void plugin_destroy(infer_plugin* plugin) { free(plugin); }

static infer_status* get_devices(infer_plugin* plugin, infer_device** devices, size_t capacity,
                                 size_t* count) {
  (void)devices;
  (void)capacity;
  *count = 0;
  return plugin->host->status_create(plugin->host->host_ctx, INFER_STATUS_UNAVAILABLE,
                                     "no Frobnicator driver: /dev/frob0 is missing");
}

static infer_status* device_get_props(infer_device* d, infer_device_props* out) {
  (void)d;
  (void)out;
  return unsupported();
}
static infer_status* query_capability(infer_device* d, const infer_node_view* n,
                                      infer_capability* out) {
  (void)d;
  (void)n;
  (void)out;
  return unsupported();
}
static infer_status* buffer_alloc(infer_device* d, infer_memory_kind k, size_t s, size_t a,
                                  infer_buffer** out) {
  (void)d;
  (void)k;
  (void)s;
  (void)a;
  (void)out;
  return unsupported();
}
static void buffer_free(infer_buffer* b) { (void)b; }
static infer_status* stream_create(infer_device* d, infer_stream** out) {
  (void)d;
  (void)out;
  return unsupported();
}
static void stream_destroy(infer_stream* s) { (void)s; }
static infer_status* event_create(infer_device* d, infer_event** out) {
  (void)d;
  (void)out;
  return unsupported();
}
static void event_destroy(infer_event* e) { (void)e; }
static infer_status* stream_signal(infer_stream* s, infer_event* e, uint64_t v) {
  (void)s;
  (void)e;
  (void)v;
  return unsupported();
}
static infer_status* stream_wait(infer_stream* s, infer_event* e, uint64_t v) {
  (void)s;
  (void)e;
  (void)v;
  return unsupported();
}
static infer_status* event_wait(infer_event* e, uint64_t v, uint64_t t) {
  (void)e;
  (void)v;
  (void)t;
  return unsupported();
}
static infer_status* copy_batch(infer_stream* s, const infer_copy_region* r, size_t n) {
  (void)s;
  (void)r;
  (void)n;
  return unsupported();
}
static infer_status* compile(infer_device* d, const infer_graph_view* g,
                             const infer_compile_options* o, infer_executable** out) {
  (void)d;
  (void)g;
  (void)o;
  (void)out;
  return unsupported();
}
static void executable_destroy(infer_executable* e) { (void)e; }
static infer_status* execute(infer_executable* e, infer_stream* s, const infer_execute_args* a) {
  (void)e;
  (void)s;
  (void)a;
  return unsupported();
}

static const infer_plugin_api kApi = {
    .struct_size = sizeof(infer_plugin_api),
    .abi_major = INFER_ABI_VERSION_MAJOR,
    .abi_minor = INFER_ABI_VERSION_MINOR,
    .min_host_minor = 0,
    .name = "nodevice",
    .version = "test",
    .description = "a plugin whose hardware is absent",
    .plugin_create = plugin_create,
    .plugin_destroy = plugin_destroy,
    .get_devices = get_devices,
    .device_get_props = device_get_props,
    .query_capability = query_capability,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .stream_signal = stream_signal,
    .stream_wait = stream_wait,
    .event_wait = event_wait,
    .copy_batch = copy_batch,
    .compile = compile,
    .executable_destroy = executable_destroy,
    .execute = execute,
};

INFER_PLUGIN_EXPORT const infer_plugin_api* infer_plugin_entry(uint32_t major, uint32_t minor) {
  (void)minor;
  return major == INFER_ABI_VERSION_MAJOR ? &kApi : NULL;
}
