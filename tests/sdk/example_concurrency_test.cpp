// Several host threads executing the same executable at once, each on its own stream:
// the compiled program is shared read-only, each execution has its own shapes and
// intermediates, and every result must be exactly right.
#include <thread>

#include "example_fixture.hpp"

namespace infer::test::example {
namespace {

using ExampleConcurrency = ExampleTest;

TEST_F(ExampleConcurrency, ExecutesFromManyThreadsOnSeparateStreams) {
  // y = Relu(x @ W + b) with W = [[1,0,-1],[0,1,1]] and b = [0, 0, -1]: for x = [p, q]
  // the row is [p, q, q - p - 1] clamped at 0.
  GraphBuilder g;
  g.node("MatMul",
         {TensorSpec::f32("x", {-1, 2}),
          TensorSpec::constant<float>("W", INFER_DTYPE_FLOAT32, {2, 3}, {1, 0, -1, 0, 1, 1})},
         {TensorSpec::f32("xw", {-1, 3})});
  g.node("Add",
         {TensorSpec::f32("xw", {-1, 3}),
          TensorSpec::constant<float>("b", INFER_DTYPE_FLOAT32, {3}, {0, 0, -1})},
         {TensorSpec::f32("t", {-1, 3})});
  g.node("Relu", {TensorSpec::f32("t", {-1, 3})}, {TensorSpec::f32("y", {-1, 3})});
  auto compiled =
      CompiledGraph::compile(handle(), g.graph({"x"}, {"y"}, "shared"), nullptr, device());
  ASSERT_NE(compiled, nullptr);

  constexpr int kThreads = 6;
  constexpr int kRuns = 15;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < kRuns; ++run) {
        // Each thread and run uses its own batch size and values.
        const int64_t batch = 1 + (t + run) % 4;
        std::vector<float> x, expected;
        for (int64_t i = 0; i < batch; ++i) {
          const float p = static_cast<float>(t * 10 + i), q = static_cast<float>(run * 3 - i);
          x.insert(x.end(), {p, q});
          expected.insert(expected.end(),
                          {p > 0 ? p : 0, q > 0 ? q : 0, q - p - 1 > 0 ? q - p - 1 : 0});
        }
        // CompiledGraph::run creates its own stream, event and buffers per call.
        RunResult r = compiled->run({HostTensor::f32({batch, 2}, x)});
        if (!r.ok()) {
          errors[t] = r.status.message;
          return;
        }
        if (r.outputs[0].dims != std::vector<int64_t>{batch, 3} ||
            r.outputs[0].as<float>() != expected) {
          errors[t] = "thread " + std::to_string(t) + " run " + std::to_string(run) +
                      ": wrong result " + r.outputs[0].describe();
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

TEST_F(ExampleConcurrency, StreamsRunIndependently) {
  // A stream blocked on an event does not hold up another stream.
  infer_stream* blocked = new_stream();
  infer_stream* free_stream = new_stream();
  infer_event* gate = new_event();
  infer_event* blocked_done = new_event();
  infer_event* free_done = new_event();
  ASSERT_OK(take_status(api()->stream_wait(blocked, gate, 1)));
  ASSERT_OK(take_status(api()->stream_signal(blocked, blocked_done, 1)));
  ASSERT_OK(sync(free_stream, free_done, 1));
  uint64_t value = 9;
  ASSERT_OK(take_status(api()->event_query(blocked_done, &value)));
  EXPECT_EQ(value, 0u);
  ASSERT_OK(take_status(api()->event_signal_host(gate, 1)));
  ASSERT_OK(take_status(api()->event_wait(blocked_done, 1, 5'000'000'000ull)));
}

}  // namespace
}  // namespace infer::test::example
