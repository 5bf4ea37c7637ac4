// Runs compiled executables on host data through the ABI, the way the host does for a
// device whose memory may not be host-addressable:
//   inputs:  buffer_alloc on the device, then buffer_map + memcpy when the plugin maps
//            buffers, else copy_batch (host to device) on a stream;
//   execute: on the same stream, with an alloc_output callback that allocates device
//            buffers, signalling an event that the host waits for;
//   outputs: buffer_map + memcpy, else copy_batch (device to host) + a second signal.
// Every step's failure comes back as a StatusInfo whose message names the step.
#pragma once

#include <memory>
#include <vector>

#include "infer/plugin_api.h"
#include "infer/test_support/host_tensor.hpp"
#include "infer/test_support/plugin_handle.hpp"
#include "infer/test_support/test_host.hpp"

namespace infer::test {

struct RunOptions {
  // When false, buffer_map is never used: data moves through copy_batch on a stream,
  // the path a device whose memory is not host-addressable takes. Lets a host-
  // addressable plugin exercise the copy path too.
  bool allow_map = true;
};

struct RunResult {
  StatusInfo status;                // the first failure, or OK
  std::vector<HostTensor> outputs;  // one per graph output when status is OK
  bool ok() const { return status.ok(); }
};

// An executable compiled from a graph view; destroyed with the object. Safe to run()
// from several threads at once (each run uses its own stream, event and buffers).
class CompiledGraph {
 public:
  // Compiles `graph` for `device` (default: the plugin's first device). On failure
  // returns nullptr and sets *status (when given).
  static std::unique_ptr<CompiledGraph> compile(PluginHandle& plugin, const infer_graph_view* graph,
                                                StatusInfo* status = nullptr,
                                                infer_device* device = nullptr,
                                                uint32_t optimization_level = 1);
  ~CompiledGraph();
  CompiledGraph(const CompiledGraph&) = delete;
  CompiledGraph& operator=(const CompiledGraph&) = delete;

  RunResult run(const std::vector<HostTensor>& inputs, const RunOptions& options = {}) const;

  infer_executable* executable() const { return exe_; }
  infer_device* device() const { return device_; }

 private:
  CompiledGraph() = default;
  PluginHandle* plugin_ = nullptr;
  infer_device* device_ = nullptr;
  infer_executable* exe_ = nullptr;
  size_t num_outputs_ = 0;
};

// Compiles `graph`, runs it once and destroys the executable. A compile failure comes
// back in the result's status.
RunResult run_graph(PluginHandle& plugin, const infer_graph_view* graph,
                    const std::vector<HostTensor>& inputs, infer_device* device = nullptr,
                    const RunOptions& options = {});

// Device buffer helpers, usable on their own (e.g. for copy tests).
// Allocates a buffer of `size` bytes and fills it from `data` (size bytes).
StatusInfo upload(PluginHandle& plugin, infer_device* device, const void* data, size_t size,
                  infer_buffer** out, bool allow_map = true);
// Reads `size` bytes at `offset` of `buffer` into `data`.
StatusInfo download(PluginHandle& plugin, infer_device* device, infer_buffer* buffer, size_t offset,
                    void* data, size_t size, bool allow_map = true);

}  // namespace infer::test
