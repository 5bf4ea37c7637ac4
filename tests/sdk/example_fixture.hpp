// Shared set-up of the example plugin tests: the plugin loaded from the build tree
// through dlopen and the ABI (tests/support's PluginHandle and TestHost), plus small RAII
// helpers for streams, events and buffers and synchronous copy helpers built only from
// ABI calls.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "infer/test_support/test_support.hpp"

namespace infer::test::example {

// Where the in-tree build puts the plugin.
std::string example_plugin_path();

// Checks a StatusInfo in one line: EXPECT_OK(take_status(api->...)).
#define EXPECT_OK(expr)                                                                        \
  do {                                                                                         \
    ::infer::test::StatusInfo st_ = (expr);                                                    \
    EXPECT_TRUE(st_.ok()) << ::infer::test::status_code_name(st_.code) << ": " << st_.message; \
  } while (0)
#define ASSERT_OK(expr)                                                                        \
  do {                                                                                         \
    ::infer::test::StatusInfo st_ = (expr);                                                    \
    ASSERT_TRUE(st_.ok()) << ::infer::test::status_code_name(st_.code) << ": " << st_.message; \
  } while (0)

// Base fixture: loads the plugin with the options given to load() (SetUp loads it with
// none), and destroys every object the test created through the helpers, streams first
// (which drains their queues), in TearDown. TearDown also checks that no status created
// by the plugin leaked.
class ExampleTest : public ::testing::Test {
 public:
  // For direct execute calls: records what the plugin's alloc_output calls asked for and
  // allocates device buffers for them (freed in TearDown).
  struct OutputSlots {
    ExampleTest* owner = nullptr;
    std::vector<infer_buffer*> buffers;      // one per output; nullptr until allocated
    std::vector<std::vector<int64_t>> dims;  // what the plugin asked for
    int calls = 0;
  };
  // execute args with the given inputs and outputs (all borrowed; they must outlive the
  // call), no waits or signals and no run context.
  static infer_execute_args execute_args(const std::vector<infer_tensor>& inputs,
                                         OutputSlots* outputs);
  // A float32 tensor at the start of `buffer`; `dims` is borrowed.
  static infer_tensor f32_tensor(infer_buffer* buffer, const std::vector<int64_t>& dims);

 protected:
  void SetUp() override;
  void TearDown() override;

  // (Re)loads the plugin; the TestHost gets `options` before plugin_create runs.
  void load(const std::map<std::string, std::string>& options);
  // plugin_create with `options`, for tests of its failure; the handle stays unloaded.
  StatusInfo try_create(const std::map<std::string, std::string>& options);

  const infer_plugin_api* api() const { return handle_->api(); }
  PluginHandle& handle() { return *handle_; }
  TestHost& host() { return handle_->host(); }
  infer_plugin* plugin() const { return plugin_; }
  infer_device* device() const { return device_; }

  // Objects destroyed automatically in TearDown.
  infer_stream* new_stream();
  infer_event* new_event();
  infer_buffer* new_buffer(size_t size, infer_memory_kind kind = INFER_MEMORY_DEVICE_LOCAL);
  void free_buffer(infer_buffer* buffer);  // early release (e.g. to test memory accounting)

  // Synchronous helpers: enqueue, signal a private event, wait for it.
  StatusInfo copy_to_device(infer_buffer* dst, size_t offset, const void* src, size_t size);
  StatusInfo copy_to_host(void* dst, infer_buffer* src, size_t offset, size_t size);
  std::vector<float> read_floats(infer_buffer* buffer, size_t offset, size_t count);
  // Enqueues a signal of `event` to `value` on `stream` and waits for it (5 s at most).
  StatusInfo sync(infer_stream* stream, infer_event* event, uint64_t value);

  static infer_copy_region region();

  // Direct execute calls (see OutputSlots).
  OutputSlots output_slots(size_t count);
  // Compiles `graph`; the executable is destroyed in TearDown.
  infer_executable* compile(const infer_graph_view* graph);

 public:
  // For the alloc_output callback.
  infer_buffer* new_output_buffer(size_t size);

 protected:
 private:
  void destroy_all();

  std::unique_ptr<PluginHandle> handle_;
  infer_plugin* plugin_ = nullptr;  // created here, so options can be set first
  infer_device* device_ = nullptr;
  std::vector<infer_stream*> streams_;
  std::vector<infer_event*> events_;
  std::vector<infer_buffer*> buffers_;
  std::vector<infer_executable*> executables_;
  int64_t statuses_at_start_ = 0;
};

// Compiles `graph` on the example's device and runs it once on host data.
RunResult run_on_example(PluginHandle& handle, infer_device* device, const infer_graph_view* graph,
                         const std::vector<HostTensor>& inputs);

}  // namespace infer::test::example
