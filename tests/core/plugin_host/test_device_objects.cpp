// Buffers, streams, events and executables of a device, with and without the optional
// entries (the "nulls" fixture exercises every host fallback).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include "plugin_host/graph_views.hpp"
#include "plugin_host/plugin_instance.hpp"
#include "test_graphs.hpp"
#include "test_util.hpp"

namespace infer::host {
namespace {

using namespace std::chrono_literals;
using testing::fixture_path;

Device first_device(const std::string& fixture, std::shared_ptr<tbb::task_arena> arena = nullptr) {
  auto lib = PluginLibrary::open(fixture_path(fixture));
  EXPECT_TRUE(lib.is_ok()) << lib.status().message();
  InstanceOptions opts;
  opts.arena = std::move(arena);
  auto inst = PluginInstance::create(*lib, opts);
  EXPECT_TRUE(inst.is_ok()) << inst.status().message();
  return (*inst)->device(0);
}

// Reads a buffer back through a stream (works without buffer_map).
std::vector<float> read_back(const Device& d, const Buffer& b, size_t count) {
  std::vector<float> out(count, -99.0f);
  auto stream = d.create_stream();
  auto done = d.create_event();
  EXPECT_TRUE(stream.is_ok() && done.is_ok());
  infer_copy_region r = device_to_host_region(b, 0, out.data(), count * sizeof(float));
  EXPECT_TRUE(stream->copy({&r, 1}).is_ok());
  EXPECT_TRUE(stream->signal(*done, 1).is_ok());
  EXPECT_TRUE(done->wait(1).is_ok());
  return out;
}

TEST(DeviceObjects, BufferMapsWhenThePluginCan) {
  Device d = first_device("good");
  auto buf = d.allocate(INFER_MEMORY_HOST_VISIBLE, 16, 64);
  ASSERT_TRUE(buf.is_ok()) << buf.status().message();
  EXPECT_EQ(buf->size(), 16u);
  EXPECT_EQ(buf->kind(), INFER_MEMORY_HOST_VISIBLE);
  auto mapped = buf->map();
  ASSERT_TRUE(mapped.has_value());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*mapped) % 64, 0u);
  const float values[4] = {1, 2, 3, 4};
  std::memcpy(*mapped, values, sizeof values);
  EXPECT_EQ(read_back(d, *buf, 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(buf->map(), mapped);  // cached
}

TEST(DeviceObjects, WithoutBufferMapTheHostCopiesThroughStreams) {
  Device d = first_device("nulls");
  auto buf = d.allocate(INFER_MEMORY_DEVICE_LOCAL, 16);
  ASSERT_TRUE(buf.is_ok());
  EXPECT_FALSE(buf->map().has_value());
  auto stream = d.create_stream();
  ASSERT_TRUE(stream.is_ok());
  const float values[4] = {5, 6, 7, 8};
  infer_copy_region up = host_to_device_region(values, *buf, 0, sizeof values);
  ASSERT_TRUE(stream->copy({&up, 1}).is_ok());
  EXPECT_EQ(read_back(d, *buf, 4), (std::vector<float>{5, 6, 7, 8}));
}

TEST(DeviceObjects, BadAllocationsAndRegionsAreRefused) {
  Device d = first_device("good");
  auto bad = d.allocate(INFER_MEMORY_DEVICE_LOCAL, 16, 48);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto buf = d.allocate(INFER_MEMORY_DEVICE_LOCAL, 16);
  auto stream = d.create_stream();
  ASSERT_TRUE(buf.is_ok() && stream.is_ok());
  float host[4];
  infer_copy_region both{};
  both.src_host = host;
  both.src_buffer = buf->raw();
  both.dst_host = host;
  both.size_bytes = 4;
  Status s = stream->copy({&both, 1});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("copy region 0"), std::string::npos) << s.message();
}

TEST(DeviceObjects, ImportHostWrapsOrCopies) {
  std::vector<float> weights = {9, 8, 7, 6};
  {
    Device d = first_device("good");
    auto buf = d.import_host(weights.data(), weights.size() * sizeof(float));
    ASSERT_TRUE(buf.is_ok()) << buf.status().message();
    EXPECT_TRUE(buf->aliases_host_memory());
    EXPECT_EQ(buf->map().value_or(nullptr), static_cast<void*>(weights.data()));
  }
  {
    Device d = first_device("nulls");  // no buffer_import_host and no buffer_map
    std::vector<float> temp = weights;
    auto buf = d.import_host(temp.data(), temp.size() * sizeof(float));
    ASSERT_TRUE(buf.is_ok()) << buf.status().message();
    EXPECT_FALSE(buf->aliases_host_memory());
    temp.assign(4, 0.0f);  // the fallback copied: the host memory is free to change
    EXPECT_EQ(read_back(d, *buf, 4), weights);
  }
}

TEST(DeviceObjects, CopyCostAndItsFallback) {
  Device good = first_device("good");
  auto h2d = good.copy_cost(INFER_COPY_HOST_TO_DEVICE);
  ASSERT_TRUE(h2d.is_ok());
  EXPECT_TRUE(h2d->can_copy);
  EXPECT_TRUE(h2d->known);
  EXPECT_DOUBLE_EQ(h2d->bandwidth_bytes_per_us, 1000.0);
  EXPECT_DOUBLE_EQ(h2d->latency_us, 5.0);
  auto d2d = good.copy_cost(INFER_COPY_DEVICE_TO_DEVICE);
  ASSERT_TRUE(d2d.is_ok());
  EXPECT_FALSE(d2d->can_copy);

  Device nulls = first_device("nulls");
  auto unknown = nulls.copy_cost(INFER_COPY_DEVICE_TO_HOST);
  ASSERT_TRUE(unknown.is_ok());
  EXPECT_TRUE(unknown->can_copy);
  EXPECT_FALSE(unknown->known);
}

TEST(DeviceObjects, EventsWaitQueryAndSignal) {
  Device d = first_device("good");
  auto ev = d.create_event();
  auto stream = d.create_stream();
  ASSERT_TRUE(ev.is_ok() && stream.is_ok());
  EXPECT_EQ(ev->query().value(), 0u);
  auto timed_out = ev->wait_for(1, 1ms);
  ASSERT_TRUE(timed_out.is_ok()) << timed_out.status().message();
  EXPECT_FALSE(*timed_out);
  ASSERT_TRUE(stream->signal(*ev, 3).is_ok());
  EXPECT_EQ(ev->query().value(), 3u);
  EXPECT_TRUE(ev->reached(2).value());
  EXPECT_FALSE(ev->reached(4).value());
  EXPECT_TRUE(ev->wait_for(3, 1ms).value());
  ASSERT_TRUE(ev->signal_from_host(5).is_ok());
  EXPECT_TRUE(ev->wait(5).is_ok());
  ASSERT_TRUE(stream->wait(*ev, 5).is_ok());
}

TEST(DeviceObjects, EventQueryFallsBackToAZeroTimeoutWait) {
  Device d = first_device("nulls");
  auto ev = d.create_event();
  ASSERT_TRUE(ev.is_ok());
  EXPECT_EQ(ev->query().status().code(), StatusCode::kUnsupported);
  EXPECT_FALSE(ev->reached(1).value());
  ASSERT_TRUE(ev->signal_from_host(1).is_ok());
  EXPECT_TRUE(ev->reached(1).value());
}

void check_on_complete(const std::string& fixture, bool native) {
  Device d = first_device(fixture, std::make_shared<tbb::task_arena>(2));
  auto ev = d.create_event();
  ASSERT_TRUE(ev.is_ok());
  EXPECT_EQ(ev->has_native_on_complete(), native);
  std::promise<Status> fired;
  std::atomic<int> calls{0};
  ASSERT_TRUE(ev->on_complete(2, [&](const Status& s) {
                  if (calls.fetch_add(1) == 0) fired.set_value(s);
                }).is_ok());
  auto future = fired.get_future();
  ASSERT_TRUE(ev->signal_from_host(1).is_ok());
  EXPECT_EQ(future.wait_for(20ms), std::future_status::timeout);  // not yet at 2
  std::thread([&] { ASSERT_TRUE(ev->signal_from_host(2).is_ok()); }).join();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(future.get().is_ok());
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(calls.load(), 1);
}

TEST(DeviceObjects, OnCompleteNative) { check_on_complete("good", true); }
TEST(DeviceObjects, OnCompleteEmulatedByAHostTask) { check_on_complete("nulls", false); }

TEST(DeviceObjects, EmulatedOnCompleteEndsWhenTheEventIsDropped) {
  Device d = first_device("nulls", std::make_shared<tbb::task_arena>(2));
  std::promise<Status> fired;
  auto future = fired.get_future();
  {
    auto ev = d.create_event();
    ASSERT_TRUE(ev.is_ok());
    ASSERT_TRUE(ev->on_complete(1, [&](const Status& s) { fired.set_value(s); }).is_ok());
  }
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get().code(), StatusCode::kCancelled);
}

// Everything an execution needs, allocated on one device.
struct Outputs {
  Device device;
  std::vector<Buffer> outputs;
  OutputAllocator allocator() {
    return [this](size_t index, infer_dtype dtype, std::span<const int64_t> dims,
                  infer_tensor* out) -> Status {
      if (index != outputs.size()) return internal_error("outputs allocated out of order");
      size_t count = 1;
      for (int64_t d : dims) count *= static_cast<size_t>(d);
      auto buf = device.allocate(INFER_MEMORY_DEVICE_LOCAL, count * sizeof(float));
      if (!buf.is_ok()) return buf.status();
      out->dtype = dtype;
      out->rank = dims.size();
      out->buffer = buf->raw();
      out->offset = 0;
      out->size_bytes = count * sizeof(float);
      outputs.push_back(std::move(buf).value());
      return Status::ok();
    };
  }
};

TEST(DeviceObjects, CompilesAndExecutesAPartitionUsingConstantsInPlace) {
  Outputs run{first_device("good"), {}};
  std::shared_ptr<GraphViewSet> keep_set;
  Result<Executable> exe = Status(internal_error("not compiled"));
  {
    ir::Model m = testing::add_relu_model();
    auto set = GraphViewSet::build(m);
    ASSERT_TRUE(set.is_ok());
    std::vector<ir::NodeId> ids = {0, 1};
    auto view = (*set)->build_partition_view(ids, {"p0", {}});
    ASSERT_TRUE(view.is_ok()) << view.status().message();
    CompileOptions opts;
    opts.partition_name = "p0";
    opts.keep_alive = {(*set)->constants_keeper()};
    exe = run.device.compile(**view, opts);
    ASSERT_TRUE(exe.is_ok()) << exe.status().message();
    // The IR and the view set go away here; only the keeper holds w's bytes.
  }
  EXPECT_EQ(exe->num_inputs(), 1u);
  EXPECT_EQ(exe->num_outputs(), 1u);
  EXPECT_EQ(exe->name(), "p0");

  const float x[4] = {0.5f, 1, 5, 2};
  auto in = run.device.import_host(const_cast<float*>(x), sizeof x);
  ASSERT_TRUE(in.is_ok());
  const int64_t dims[1] = {4};
  infer_tensor input{};
  input.dtype = INFER_DTYPE_FLOAT32;
  input.rank = 1;
  input.dims = dims;
  input.buffer = in->raw();
  input.size_bytes = sizeof x;
  auto stream = run.device.create_stream();
  auto done = run.device.create_event();
  ASSERT_TRUE(stream.is_ok() && done.is_ok());
  infer_event_value signal{done->raw(), 1};
  ExecuteArgs args;
  args.inputs = {&input, 1};
  args.alloc_output = run.allocator();
  args.signals = {&signal, 1};
  ASSERT_TRUE(exe->execute(*stream, args).is_ok());
  ASSERT_TRUE(done->wait(1).is_ok());
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(read_back(run.device, run.outputs[0], 4), (std::vector<float>{1.5f, 0, 8, 0}));
}

TEST(DeviceObjects, ExecuteChecksInputsAndCancellation) {
  Outputs run{first_device("good"), {}};
  ir::Model m = testing::add_relu_model();
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok());
  auto view = (*set)->build_partition_view(std::vector<ir::NodeId>{0, 1});
  ASSERT_TRUE(view.is_ok());
  auto exe = run.device.compile(**view, {});
  auto stream = run.device.create_stream();
  ASSERT_TRUE(exe.is_ok() && stream.is_ok());

  ExecuteArgs none;
  none.alloc_output = run.allocator();
  Status wrong = exe->execute(*stream, none);
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.message().find("got 0 inputs, the compiled partition has 1"), std::string::npos)
      << wrong.message();

  auto in = run.device.allocate(INFER_MEMORY_DEVICE_LOCAL, 16);
  ASSERT_TRUE(in.is_ok());
  const int64_t dims[1] = {4};
  infer_tensor input{};
  input.dtype = INFER_DTYPE_FLOAT32;
  input.rank = 1;
  input.dims = dims;
  input.buffer = in->raw();
  input.size_bytes = 16;
  RunContext ctx;
  ctx.cancel();
  ExecuteArgs args;
  args.inputs = {&input, 1};
  args.alloc_output = run.allocator();
  args.run = &ctx;
  Status cancelled = exe->execute(*stream, args);
  EXPECT_EQ(cancelled.code(), StatusCode::kCancelled) << cancelled.message();
  EXPECT_TRUE(run.outputs.empty());
}

TEST(DeviceObjects, FailureDuringTheWorkSticksToTheEvent) {
  Outputs run{first_device("good"), {}};
  ir::Model m = testing::add_relu_model("Fail");
  auto set = GraphViewSet::build(m);
  ASSERT_TRUE(set.is_ok());
  auto view = (*set)->build_partition_view(std::vector<ir::NodeId>{0, 1});
  ASSERT_TRUE(view.is_ok());
  auto exe = run.device.compile(**view, {});
  auto stream = run.device.create_stream();
  auto done = run.device.create_event();
  auto in = run.device.allocate(INFER_MEMORY_DEVICE_LOCAL, 16);
  ASSERT_TRUE(exe.is_ok() && stream.is_ok() && done.is_ok() && in.is_ok());
  const int64_t dims[1] = {4};
  infer_tensor input{};
  input.dtype = INFER_DTYPE_FLOAT32;
  input.rank = 1;
  input.dims = dims;
  input.buffer = in->raw();
  input.size_bytes = 16;
  infer_event_value signal{done->raw(), 1};
  ExecuteArgs args;
  args.inputs = {&input, 1};
  args.alloc_output = run.allocator();
  args.signals = {&signal, 1};
  ASSERT_TRUE(exe->execute(*stream, args).is_ok());  // enqueued fine; the work failed
  Status w = done->wait(1);
  EXPECT_EQ(w.code(), StatusCode::kInternal);
  EXPECT_NE(w.message().find("fixture: Fail node ran"), std::string::npos) << w.message();
  EXPECT_EQ(done->query().status().code(), StatusCode::kInternal);  // sticky
  std::promise<Status> fired;
  ASSERT_TRUE(done->on_complete(1, [&](const Status& s) { fired.set_value(s); }).is_ok());
  auto f = fired.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get().code(), StatusCode::kInternal);
}

TEST(DeviceObjects, MovedFromHandlesAreEmptyAndSafe) {
  Device d = first_device("good");
  auto buf = d.allocate(INFER_MEMORY_DEVICE_LOCAL, 8);
  ASSERT_TRUE(buf.is_ok());
  Buffer a = std::move(buf).value();
  Buffer b = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_TRUE(b.valid());
  b = Buffer();
  EXPECT_FALSE(b.valid());
  auto ev = d.create_event();
  ASSERT_TRUE(ev.is_ok());
  Event e = std::move(ev).value();
  Event f = std::move(e);
  EXPECT_FALSE(e.valid());
  EXPECT_EQ(e.wait(1).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(f.valid());
}

}  // namespace
}  // namespace infer::host
