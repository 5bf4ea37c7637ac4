// The execution plan: everything Session::create decided, in the form the scheduler
// runs. Built once per session; shared by every run (runs keep their own state in
// RunState), so nothing here changes after the build except what the pools and arenas
// hand out, which they guard themselves.
//
// A run is a graph of steps: one per partition (execute its executable on its device)
// and one per copy edge (move a value between devices, or between a device and the
// application's tensors). A step's successors are released either as soon as it has been
// enqueued (when they run on the device its completion event belongs to: the device
// orders the work through stream waits) or when its completion event fires (anything
// else: the host must see the work finished before it can hand the data on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "infer/dtype.hpp"
#include "ir/graph.hpp"
#include "plugin_host/device.hpp"
#include "plugin_host/graph_views.hpp"
#include "runtime/device_arena.hpp"
#include "runtime/event_pool.hpp"
#include "runtime/stream_pool.hpp"

namespace infer::runtime {

// Stands for the host (the application's tensors) where a device index is expected.
inline constexpr size_t kHostDevice = std::numeric_limits<size_t>::max();

// One backend's device 0, with the memory and queues the runs use on it.
struct PlanDevice {
  std::string backend;
  host::Device device;
  // The host reads and writes this device's buffers through mappings (host-addressable
  // device with buffer_map): graph inputs are written in place, outputs read in place.
  bool mappable = false;
  // Destroyed bottom-up: the streams first (which waits for their queued work, and for
  // a plugin with queue threads, for those threads to leave its callbacks), then the
  // events those callbacks came from, then the memory.
  std::unique_ptr<DeviceArena> arena;
  std::unique_ptr<EventPool> events;
  std::unique_ptr<StreamPool> streams;
};

// What a run needs to know about a value without the IR.
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;  // undefined: not known at load time
  int64_t rank = -1;                      // -1: not known at load time
};

struct PlanPartition {
  std::string name;  // "p0"
  size_t device = 0;
  host::Executable executable;
  std::vector<ir::ValueId> inputs;   // in the compiled view's input order
  std::vector<ir::ValueId> outputs;  // in the compiled view's output order
};

// How a copy moves its bytes, chosen from whether each side is host-readable.
enum class CopyMode {
  kHostMemcpy,  // both sides mapped (or the host): memcpy once the source is complete
  kUpload,      // host-readable source -> device: copy_batch on the destination's stream
  kDownload,    // device -> host-writable destination: copy_batch on the source's stream
  kStaged,      // device -> host staging -> another plugin's device
};

struct PlanCopy {
  ir::ValueId value = ir::kNoValue;
  size_t src_device = kHostDevice;  // kHostDevice: the application's input tensor
  size_t dst_device = kHostDevice;  // kHostDevice: the application's output tensor
  CopyMode mode = CopyMode::kHostMemcpy;
};

struct PlanStep {
  enum class Kind { kExecute, kCopy };
  Kind kind = Kind::kExecute;
  size_t index = 0;                  // into partitions or copies
  size_t exec_device = kHostDevice;  // where its (first) work is enqueued
  size_t done_device = kHostDevice;  // whose event says it finished; kHostDevice: synchronous
  size_t num_predecessors = 0;
  std::vector<size_t> release_on_issue;     // successors enqueued on done_device
  std::vector<size_t> release_on_complete;  // every other successor
  // Predecessors released on issue: this step's stream waits for their events.
  std::vector<size_t> stream_waits;
  // Enqueued and completed on one device (an execution, an upload or a download). When a
  // run is split into micro-batches, such a step of micro-batch i+1 is queued behind the
  // same step of micro-batch i with a stream wait, so each step's instances form an
  // in-order queue on the device while different steps (the copy of i+1, the compute of
  // i) overlap.
  bool pipelined = false;
  std::string label;       // "partition 'p0' (cpu)", "copy of 'x' (host -> example)"
  std::string trace_name;  // "p0", "copy 'x' (host -> example)"
};

// A graph input written into a mapped device's arena at the start of each run.
struct InputBinding {
  size_t input_index = 0;  // into graph_inputs
  ir::ValueId value = ir::kNoValue;
  size_t device = 0;
};

// Where each graph output is found at the end of a run.
struct OutputSource {
  enum class Kind { kGraphInput, kConstant, kDevice, kHostCopy };
  Kind kind = Kind::kDevice;
  size_t input_index = 0;      // kGraphInput
  ir::TensorDataPtr constant;  // kConstant
  ir::ValueId value = ir::kNoValue;
  size_t device = kHostDevice;  // kDevice: a mapped device
};

struct ExecutionPlan {
  // Declared first so it is destroyed last: executables may use constant data in place.
  std::shared_ptr<host::GraphViewSet> views;
  std::vector<PlanDevice> devices;  // one per backend, in priority order
  std::vector<PlanPartition> partitions;
  std::vector<PlanCopy> copies;
  std::vector<PlanStep> steps;  // partitions first (same index), then copies
  std::vector<InputBinding> bindings;
  std::vector<ir::ValueId> graph_inputs;  // declaration order
  std::vector<OutputSource> outputs;      // declaration order
  std::vector<ValueInfo> values;          // indexed by ValueId
  // Values that are ever materialized during a run, densely numbered for RunState:
  // dense_index[value] is -1 for the others.
  std::vector<int32_t> dense_index;
  size_t dense_count = 0;

  size_t columns() const { return devices.size() + 1; }  // the devices, then the host
  size_t slot(ir::ValueId v, size_t device) const {
    const size_t column = device == kHostDevice ? devices.size() : device;
    return static_cast<size_t>(dense_index[v]) * columns() + column;
  }
  std::string device_name(size_t device) const {
    return device == kHostDevice ? "host" : devices[device].backend;
  }
};

}  // namespace infer::runtime
