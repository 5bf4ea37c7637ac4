#include "infer/test_support/runner.hpp"

#include <mutex>

#include "infer/plugin.hpp"

namespace infer::test {
namespace {

// Generous, so a slow sanitizer build never trips it; a plugin that never signals is a
// bug the test should report instead of hanging.
constexpr uint64_t kWaitTimeoutNs = 120ull * 1000 * 1000 * 1000;

StatusInfo prefixed(StatusInfo st, const std::string& step) {
  if (!st.ok()) st.message = step + ": " + st.message;
  return st;
}

StatusInfo failure(infer_status_code code, std::string message) {
  return StatusInfo{code, std::move(message)};
}

// A stream plus an event on it, with a counter for successive signals.
class StreamSession {
 public:
  StreamSession(const infer_plugin_api* api, infer_device* device) : api_(api), device_(device) {}
  ~StreamSession() {
    if (stream_) api_->stream_destroy(stream_);
    if (event_) api_->event_destroy(event_);
  }
  StatusInfo init() {
    StatusInfo st = prefixed(take_status(api_->stream_create(device_, &stream_)), "stream_create");
    if (!st.ok()) {
      stream_ = nullptr;
      return st;
    }
    st = prefixed(take_status(api_->event_create(device_, &event_)), "event_create");
    if (!st.ok()) event_ = nullptr;
    return st;
  }
  infer_stream* stream() const { return stream_; }
  infer_event* event() const { return event_; }
  uint64_t next_value() { return ++value_; }
  StatusInfo wait(uint64_t value) {
    return take_status(api_->event_wait(event_, value, kWaitTimeoutNs));
  }
  // Enqueues the regions, then a signal, and waits for it.
  StatusInfo copy_and_wait(const std::vector<infer_copy_region>& regions) {
    if (regions.empty()) return {};
    StatusInfo st = prefixed(take_status(api_->copy_batch(stream_, regions.data(), regions.size())),
                             "copy_batch");
    if (!st.ok()) return st;
    uint64_t v = next_value();
    st = prefixed(take_status(api_->stream_signal(stream_, event_, v)), "stream_signal");
    if (!st.ok()) return st;
    return prefixed(wait(v), "waiting for copies");
  }

 private:
  const infer_plugin_api* api_;
  infer_device* device_;
  infer_stream* stream_ = nullptr;
  infer_event* event_ = nullptr;
  uint64_t value_ = 0;
};

infer_copy_region region() {
  infer_copy_region r{};
  r.struct_size = sizeof(infer_copy_region);
  return r;
}

// Tries buffer_map; returns true with *ptr set when the buffer is host-mapped, false
// when the plugin wants copies instead (NULL function or UNSUPPORTED), or a failure.
StatusInfo try_map(const infer_plugin_api* api, infer_buffer* buffer, void** ptr, bool* mapped,
                   bool allow_map) {
  *mapped = false;
  if (!allow_map || api->buffer_map == nullptr) return {};
  StatusInfo st = take_status(api->buffer_map(buffer, ptr));
  if (st.code == INFER_STATUS_UNSUPPORTED) return {};
  if (!st.ok()) return prefixed(st, "buffer_map");
  *mapped = true;
  return {};
}

// What the alloc_output callback records for one output.
struct OutputSlot {
  bool allocated = false;
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;
  std::vector<int64_t> dims;
  infer_buffer* buffer = nullptr;
  size_t bytes = 0;
};

struct AllocContext {
  const infer_plugin_api* api;
  const infer_host_services* host;
  infer_device* device;
  std::mutex mu;
  std::vector<OutputSlot> outputs;  // sized once: dims pointers handed out stay valid
};

infer_status* alloc_output_cb(void* ctx, size_t index, infer_dtype dtype, size_t rank,
                              const int64_t* dims, infer_tensor* out) {
  auto* c = static_cast<AllocContext*>(ctx);
  const sdk::Host host(c->host);
  std::lock_guard<std::mutex> lock(c->mu);
  if (out == nullptr)
    return host.status(INFER_STATUS_INVALID_ARGUMENT, "alloc_output: out is NULL");
  if (index >= c->outputs.size())
    return host.error(INFER_STATUS_INVALID_ARGUMENT,
                      "alloc_output: index %zu out of range (%zu outputs)", index,
                      c->outputs.size());
  OutputSlot& slot = c->outputs[index];
  if (slot.allocated)
    return host.error(INFER_STATUS_INVALID_ARGUMENT, "alloc_output: output %zu allocated twice",
                      index);
  if (sdk::dtype_size(dtype) == 0 && dtype != INFER_DTYPE_INT4 && dtype != INFER_DTYPE_UINT4)
    return host.error(INFER_STATUS_INVALID_ARGUMENT,
                      "alloc_output: output %zu has dtype %d without a size", index,
                      static_cast<int>(dtype));
  if (rank > 0 && dims == nullptr)
    return host.error(INFER_STATUS_INVALID_ARGUMENT, "alloc_output: output %zu: dims is NULL",
                      index);
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] < 0)
      return host.error(INFER_STATUS_INVALID_ARGUMENT,
                        "alloc_output: output %zu dim %zu is negative", index, i);
  slot.dtype = dtype;
  slot.dims.assign(dims, dims + rank);
  slot.bytes = sdk::tensor_bytes(dtype, sdk::element_count(slot.dims.data(), rank));
  infer_status* st = c->api->buffer_alloc(c->device, INFER_MEMORY_DEVICE_LOCAL,
                                          std::max<size_t>(slot.bytes, 1), 64, &slot.buffer);
  if (st != nullptr) return st;
  slot.allocated = true;
  *out = infer_tensor{};
  out->struct_size = sizeof(infer_tensor);
  out->dtype = dtype;
  out->rank = rank;
  out->dims = slot.dims.data();
  out->buffer = slot.buffer;
  out->offset = 0;
  out->size_bytes = slot.bytes;
  return nullptr;
}

}  // namespace

StatusInfo upload(PluginHandle& plugin, infer_device* device, const void* data, size_t size,
                  infer_buffer** out, bool allow_map) {
  const infer_plugin_api* api = plugin.api();
  *out = nullptr;
  infer_buffer* buf = nullptr;
  StatusInfo st = prefixed(take_status(api->buffer_alloc(device, INFER_MEMORY_DEVICE_LOCAL,
                                                         std::max<size_t>(size, 1), 64, &buf)),
                           "buffer_alloc");
  if (!st.ok()) return st;
  void* ptr = nullptr;
  bool mapped = false;
  st = try_map(api, buf, &ptr, &mapped, allow_map);
  if (st.ok() && size > 0) {
    if (mapped) {
      std::memcpy(ptr, data, size);
    } else {
      StreamSession s(api, device);
      st = s.init();
      if (st.ok()) {
        infer_copy_region r = region();
        r.src_host = data;
        r.dst_buffer = buf;
        r.size_bytes = size;
        st = s.copy_and_wait({r});
      }
    }
  }
  if (!st.ok()) {
    api->buffer_free(buf);
    return st;
  }
  *out = buf;
  return {};
}

StatusInfo download(PluginHandle& plugin, infer_device* device, infer_buffer* buffer, size_t offset,
                    void* data, size_t size, bool allow_map) {
  const infer_plugin_api* api = plugin.api();
  if (size == 0) return {};
  void* ptr = nullptr;
  bool mapped = false;
  StatusInfo st = try_map(api, buffer, &ptr, &mapped, allow_map);
  if (!st.ok()) return st;
  if (mapped) {
    std::memcpy(data, static_cast<const uint8_t*>(ptr) + offset, size);
    return {};
  }
  StreamSession s(api, device);
  st = s.init();
  if (!st.ok()) return st;
  infer_copy_region r = region();
  r.src_buffer = buffer;
  r.src_offset = offset;
  r.dst_host = data;
  r.size_bytes = size;
  return s.copy_and_wait({r});
}

std::unique_ptr<CompiledGraph> CompiledGraph::compile(PluginHandle& plugin,
                                                      const infer_graph_view* graph,
                                                      StatusInfo* status, infer_device* device,
                                                      uint32_t optimization_level) {
  StatusInfo local;
  StatusInfo& st = status ? *status : local;
  st = {};
  if (device == nullptr) device = plugin.device(0);
  if (device == nullptr) {
    st = failure(INFER_STATUS_UNAVAILABLE, "compile: the plugin reports no device");
    return nullptr;
  }
  infer_compile_options options{};
  options.struct_size = sizeof(options);
  options.optimization_level = optimization_level;
  options.partition_name = graph->name;
  infer_executable* exe = nullptr;
  st = take_status(plugin.api()->compile(device, graph, &options, &exe));
  if (!st.ok()) return nullptr;
  if (exe == nullptr) {
    st = failure(INFER_STATUS_INTERNAL, "compile returned OK without an executable");
    return nullptr;
  }
  std::unique_ptr<CompiledGraph> c(new CompiledGraph());
  c->plugin_ = &plugin;
  c->device_ = device;
  c->exe_ = exe;
  c->num_outputs_ = graph->num_outputs;
  return c;
}

CompiledGraph::~CompiledGraph() {
  if (exe_ != nullptr) plugin_->api()->executable_destroy(exe_);
}

RunResult CompiledGraph::run(const std::vector<HostTensor>& inputs,
                             const RunOptions& options) const {
  const infer_plugin_api* api = plugin_->api();
  RunResult result;
  std::vector<infer_buffer*> in_buffers;
  AllocContext alloc{api, plugin_->services(), device_, {}, {}};
  alloc.outputs.resize(num_outputs_);
  // Frees every buffer this run allocated, whatever path it leaves by.
  struct Cleanup {
    const infer_plugin_api* api;
    std::vector<infer_buffer*>* ins;
    AllocContext* alloc;
    ~Cleanup() {
      for (infer_buffer* b : *ins) api->buffer_free(b);
      for (auto& o : alloc->outputs)
        if (o.buffer) api->buffer_free(o.buffer);
    }
  } cleanup{api, &in_buffers, &alloc};

  std::vector<infer_tensor> tensors(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    size_t expect = sdk::tensor_bytes(t.dtype, t.element_count());
    if (expect != t.bytes.size()) {
      result.status = failure(INFER_STATUS_INVALID_ARGUMENT,
                              "run: input " + std::to_string(i) + " (" + t.describe() + ") has " +
                                  std::to_string(t.bytes.size()) + " bytes, expected " +
                                  std::to_string(expect));
      return result;
    }
    infer_buffer* buf = nullptr;
    result.status =
        prefixed(upload(*plugin_, device_, t.bytes.data(), t.bytes.size(), &buf, options.allow_map),
                 "uploading input " + std::to_string(i));
    if (!result.ok()) return result;
    in_buffers.push_back(buf);
    infer_tensor& it = tensors[i];
    it.struct_size = sizeof(infer_tensor);
    it.dtype = t.dtype;
    it.rank = t.dims.size();
    it.dims = t.dims.data();
    it.buffer = buf;
    it.offset = 0;
    it.size_bytes = t.bytes.size();
  }

  StreamSession s(api, device_);
  result.status = s.init();
  if (!result.ok()) return result;
  infer_event_value signal{s.event(), s.next_value()};
  infer_execute_args args{};
  args.struct_size = sizeof(args);
  args.num_inputs = tensors.size();
  args.inputs = tensors.data();
  args.num_outputs = num_outputs_;
  args.alloc_output = &alloc_output_cb;
  args.alloc_ctx = &alloc;
  args.num_signals = 1;
  args.signals = &signal;
  // Execution errors are reported unprefixed so tests can match the plugin's message.
  result.status = take_status(api->execute(exe_, s.stream(), &args));
  if (!result.ok()) return result;
  result.status = s.wait(signal.value);
  if (!result.ok()) return result;

  for (size_t i = 0; i < alloc.outputs.size(); ++i) {
    OutputSlot& o = alloc.outputs[i];
    if (!o.allocated) {
      result.status = failure(INFER_STATUS_INTERNAL,
                              "run: the plugin never allocated output " + std::to_string(i));
      return result;
    }
    HostTensor t;
    t.dtype = o.dtype;
    t.dims = o.dims;
    t.bytes.resize(o.bytes);
    result.status = prefixed(
        download(*plugin_, device_, o.buffer, 0, t.bytes.data(), o.bytes, options.allow_map),
        "downloading output " + std::to_string(i));
    if (!result.ok()) return result;
    result.outputs.push_back(std::move(t));
  }
  return result;
}

RunResult run_graph(PluginHandle& plugin, const infer_graph_view* graph,
                    const std::vector<HostTensor>& inputs, infer_device* device,
                    const RunOptions& options) {
  RunResult result;
  auto compiled = CompiledGraph::compile(plugin, graph, &result.status, device);
  if (!compiled) return result;
  return compiled->run(inputs, options);
}

}  // namespace infer::test
