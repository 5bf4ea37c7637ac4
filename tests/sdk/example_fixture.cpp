#include "example_fixture.hpp"

#include <algorithm>

#include "infer_test_paths.hpp"

namespace infer::test::example {
namespace {

constexpr uint64_t kSyncTimeoutNs = 5ull * 1000 * 1000 * 1000;

}  // namespace

std::string example_plugin_path() {
  return std::string(INFER_PLUGIN_OUTPUT_DIR) + "/libinfer_plugin_example.so";
}

void ExampleTest::SetUp() {
  statuses_at_start_ = TestHost::live_statuses();
  load({});
}

void ExampleTest::TearDown() {
  destroy_all();
  EXPECT_EQ(TestHost::live_statuses(), statuses_at_start_)
      << "statuses created during the test were not freed";
}

void ExampleTest::destroy_all() {
  if (!handle_) return;
  // Streams first: destroying one waits for its queue, which may still reference the
  // events and buffers below.
  for (infer_stream* s : streams_) api()->stream_destroy(s);
  for (infer_executable* x : executables_) api()->executable_destroy(x);
  for (infer_buffer* b : buffers_) api()->buffer_free(b);
  for (infer_event* e : events_) api()->event_destroy(e);
  streams_.clear();
  executables_.clear();
  buffers_.clear();
  events_.clear();
  if (plugin_ != nullptr) api()->plugin_destroy(plugin_);
  plugin_ = nullptr;
  device_ = nullptr;
  handle_.reset();
}

void ExampleTest::load(const std::map<std::string, std::string>& options) {
  destroy_all();
  // PluginHandle does the dlopen and the entry-point call; the instance is created here,
  // because the options must be in the TestHost before plugin_create reads them.
  std::string error;
  LoadOptions lo;
  lo.create_instance = false;
  handle_ = PluginHandle::load(example_plugin_path(), &error, lo);
  ASSERT_NE(handle_, nullptr) << error;
  for (const auto& [key, value] : options) host().set_option(key, value);
  ASSERT_OK(take_status(api()->plugin_create(handle_->services(), &plugin_)));
  ASSERT_NE(plugin_, nullptr);
  size_t count = 0;
  ASSERT_OK(take_status(api()->get_devices(plugin_, &device_, 1, &count)));
  ASSERT_EQ(count, 1u);
  ASSERT_NE(device_, nullptr);
}

StatusInfo ExampleTest::try_create(const std::map<std::string, std::string>& options) {
  destroy_all();
  std::string error;
  LoadOptions lo;
  lo.create_instance = false;
  handle_ = PluginHandle::load(example_plugin_path(), &error, lo);
  if (!handle_) return StatusInfo{INFER_STATUS_INTERNAL, error};
  for (const auto& [key, value] : options) host().set_option(key, value);
  infer_plugin* plugin = nullptr;
  StatusInfo st = take_status(api()->plugin_create(handle_->services(), &plugin));
  if (plugin != nullptr) api()->plugin_destroy(plugin);
  return st;
}

infer_stream* ExampleTest::new_stream() {
  infer_stream* s = nullptr;
  EXPECT_OK(take_status(api()->stream_create(device_, &s)));
  if (s) streams_.push_back(s);
  return s;
}

infer_event* ExampleTest::new_event() {
  infer_event* e = nullptr;
  EXPECT_OK(take_status(api()->event_create(device_, &e)));
  if (e) events_.push_back(e);
  return e;
}

infer_buffer* ExampleTest::new_buffer(size_t size, infer_memory_kind kind) {
  infer_buffer* b = nullptr;
  EXPECT_OK(take_status(api()->buffer_alloc(device_, kind, size, 64, &b)));
  if (b) buffers_.push_back(b);
  return b;
}

void ExampleTest::free_buffer(infer_buffer* buffer) {
  auto it = std::find(buffers_.begin(), buffers_.end(), buffer);
  ASSERT_NE(it, buffers_.end());
  buffers_.erase(it);
  api()->buffer_free(buffer);
}

infer_copy_region ExampleTest::region() {
  infer_copy_region r{};
  r.struct_size = sizeof r;
  return r;
}

StatusInfo ExampleTest::sync(infer_stream* stream, infer_event* event, uint64_t value) {
  StatusInfo st = take_status(api()->stream_signal(stream, event, value));
  if (!st.ok()) return st;
  return take_status(api()->event_wait(event, value, kSyncTimeoutNs));
}

StatusInfo ExampleTest::copy_to_device(infer_buffer* dst, size_t offset, const void* src,
                                       size_t size) {
  infer_stream* s = new_stream();
  infer_event* e = new_event();
  infer_copy_region r = region();
  r.src_host = src;
  r.dst_buffer = dst;
  r.dst_offset = offset;
  r.size_bytes = size;
  StatusInfo st = take_status(api()->copy_batch(s, &r, 1));
  if (!st.ok()) return st;
  return sync(s, e, 1);
}

StatusInfo ExampleTest::copy_to_host(void* dst, infer_buffer* src, size_t offset, size_t size) {
  infer_stream* s = new_stream();
  infer_event* e = new_event();
  infer_copy_region r = region();
  r.src_buffer = src;
  r.src_offset = offset;
  r.dst_host = dst;
  r.size_bytes = size;
  StatusInfo st = take_status(api()->copy_batch(s, &r, 1));
  if (!st.ok()) return st;
  return sync(s, e, 1);
}

std::vector<float> ExampleTest::read_floats(infer_buffer* buffer, size_t offset, size_t count) {
  std::vector<float> out(count, -12345.0f);
  EXPECT_OK(copy_to_host(out.data(), buffer, offset, count * sizeof(float)));
  return out;
}

ExampleTest::OutputSlots ExampleTest::output_slots(size_t count) {
  OutputSlots slots;
  slots.owner = this;
  slots.buffers.assign(count, nullptr);
  slots.dims.resize(count);
  return slots;
}

namespace {

infer_status* alloc_output_cb(void* ctx, size_t index, infer_dtype dtype, size_t rank,
                              const int64_t* dims, infer_tensor* out) {
  auto* slots = static_cast<ExampleTest::OutputSlots*>(ctx);
  ++slots->calls;
  EXPECT_EQ(dtype, INFER_DTYPE_FLOAT32);
  EXPECT_LT(index, slots->buffers.size());
  EXPECT_EQ(slots->buffers[index], nullptr) << "output " << index << " allocated twice";
  slots->dims[index].assign(dims, dims + rank);
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) count *= dims[i];
  infer_buffer* b = slots->owner->new_output_buffer(static_cast<size_t>(count) * sizeof(float));
  slots->buffers[index] = b;
  *out = infer_tensor{};
  out->struct_size = sizeof *out;
  out->dtype = dtype;
  out->rank = rank;
  out->dims = slots->dims[index].data();
  out->buffer = b;
  out->size_bytes = static_cast<size_t>(count) * sizeof(float);
  return nullptr;
}

}  // namespace

infer_buffer* ExampleTest::new_output_buffer(size_t size) { return new_buffer(size); }

infer_execute_args ExampleTest::execute_args(const std::vector<infer_tensor>& inputs,
                                             OutputSlots* outputs) {
  infer_execute_args args{};
  args.struct_size = sizeof args;
  args.num_inputs = inputs.size();
  args.inputs = inputs.data();
  args.num_outputs = outputs->buffers.size();
  args.alloc_output = alloc_output_cb;
  args.alloc_ctx = outputs;
  return args;
}

infer_tensor ExampleTest::f32_tensor(infer_buffer* buffer, const std::vector<int64_t>& dims) {
  infer_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = INFER_DTYPE_FLOAT32;
  t.rank = dims.size();
  t.dims = dims.data();
  t.buffer = buffer;
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  t.size_bytes = static_cast<size_t>(count) * sizeof(float);
  return t;
}

infer_executable* ExampleTest::compile(const infer_graph_view* graph) {
  infer_compile_options options{};
  options.struct_size = sizeof options;
  options.optimization_level = 1;
  options.partition_name = graph->name;
  infer_executable* x = nullptr;
  EXPECT_OK(take_status(api()->compile(device_, graph, &options, &x)));
  if (x) executables_.push_back(x);
  return x;
}

RunResult run_on_example(PluginHandle& handle, infer_device* device, const infer_graph_view* graph,
                         const std::vector<HostTensor>& inputs) {
  return run_graph(handle, graph, inputs, device);
}

}  // namespace infer::test::example
