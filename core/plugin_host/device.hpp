// A device of a plugin instance, and what the host asks of it: properties, capability
// answers, memory, streams, events, copies, compilation and weight prepacking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "infer/plugin_api.h"
#include "infer/status.hpp"
#include "plugin_host/buffer.hpp"
#include "plugin_host/event.hpp"
#include "plugin_host/executable.hpp"
#include "plugin_host/stream.hpp"

namespace infer::host {

class PluginInstance;

struct DeviceProps {
  std::string name;
  std::string vendor;
  infer_device_kind kind = INFER_DEVICE_CPU;
  uint64_t memory_bytes = 0;  // 0 when unknown
  uint32_t compute_units = 0;
  bool host_addressable = false;
};

// One node's capability answer.
struct Capability {
  infer_support support = INFER_SUPPORT_NO;
  double est_time_us = -1;        // < 0: unknown
  int64_t est_memory_bytes = -1;  // < 0: unknown
  std::string reason;
  // infer_capability.compute_dtype: UNDEFINED unless the device computes the node
  // narrower than its dtypes.
  infer_dtype compute_dtype = INFER_DTYPE_UNDEFINED;
  bool supported() const { return support != INFER_SUPPORT_NO; }
};

// A link estimate. `can_copy` false when the plugin answered UNSUPPORTED; `known` false
// when it has no copy_cost entry (the host then assumes it can copy, at unknown cost).
struct CopyCost {
  bool can_copy = true;
  bool known = false;
  double bandwidth_bytes_per_us = 0;
  double latency_us = 0;
};

struct CompileOptions {
  uint32_t optimization_level = 1;
  std::string partition_name;
  // Kept alive by the Executable until executable_destroy returned: pass what owns the
  // view's constant and prepacked data (e.g. GraphViewSet::constants_keeper()).
  std::vector<std::shared_ptr<const void>> keep_alive;
};

// A prepacked constant made by the plugin's prepack hook with host_alloc; `data` frees it
// when the last reference goes (independently of the plugin instance, so it can be
// shared across sessions).
struct PrepackedConstant {
  std::shared_ptr<const void> data;
  size_t size = 0;
};

// A light, copyable handle: the infer_device* is owned by the plugin instance, which this
// handle keeps alive.
class Device {
 public:
  Device() = default;

  bool valid() const { return device_ != nullptr; }
  infer_device* raw() const { return device_; }
  const std::shared_ptr<const PluginInstance>& plugin() const { return owner_; }
  const std::string& plugin_name() const;
  size_t index() const { return index_; }  // position in the plugin's device list
  const DeviceProps& props() const { return *props_; }
  // "cpu:0 (Host CPU)": prefix of messages about this device.
  std::string describe() const;

  // One node's answer. The capability starts as "no, unknown cost"; the plugin's reason
  // is NUL-terminated by the host even if the plugin overran it.
  Result<Capability> query_capability(const infer_node_view& node) const;

  // Fusion proposals as lists of node `index` values; empty when the plugin has no
  // propose_groups. The caller re-checks them.
  bool can_propose_groups() const;
  Result<std::vector<std::vector<size_t>>> propose_groups(const infer_graph_view& graph) const;

  Result<Buffer> allocate(infer_memory_kind kind, size_t size, size_t alignment = 64) const;
  // Wraps host memory (buffer_import_host; the memory must stay alive until the buffer
  // is freed). Fallback without the entry: allocates DEVICE_LOCAL memory and copies the
  // bytes in (through a mapping, or a stream when the buffer cannot be mapped); the
  // host memory is then no longer needed after the call.
  Result<Buffer> import_host(void* host_ptr, size_t size) const;

  Result<Stream> create_stream() const;
  Result<Event> create_event() const;

  // Fallback without copy_cost: {can_copy = true, known = false}.
  Result<CopyCost> copy_cost(infer_copy_direction direction) const;

  Result<Executable> compile(const infer_graph_view& graph, const CompileOptions& options) const;

  // nullopt when the plugin has no prepack hook or declined for this input.
  bool can_prepack() const;
  // Whether a prepacked form replaces the original (INFER_PREPACK_REPLACES_CONSTANT):
  // the host may then free a constant whose only reader got one.
  bool prepack_replaces_constants() const;
  Result<std::optional<PrepackedConstant>> prepack_constant(const infer_node_view& node,
                                                            size_t input_index) const;

 private:
  friend class PluginInstance;
  Device(std::shared_ptr<const PluginInstance> owner, infer_device* device, size_t index,
         const DeviceProps* props);
  Status fail(infer_status* status, const char* what) const;

  std::shared_ptr<const PluginInstance> owner_;
  infer_device* device_ = nullptr;
  size_t index_ = 0;
  const DeviceProps* props_ = nullptr;  // owned by the instance
};

}  // namespace infer::host
