#include "runtime/step_graph_builder.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace infer::runtime {
namespace {

constexpr size_t kBound = static_cast<size_t>(-2);  // written by an input binding

CopyMode copy_mode(const ExecutionPlan& plan, size_t src, size_t dst) {
  const bool src_readable = src == kHostDevice || plan.devices[src].mappable;
  const bool dst_writable = dst == kHostDevice || plan.devices[dst].mappable;
  if (src_readable && dst_writable) return CopyMode::kHostMemcpy;
  if (src_readable) return CopyMode::kUpload;
  if (dst_writable) return CopyMode::kDownload;
  return CopyMode::kStaged;
}

void set_copy_devices(const PlanCopy& c, PlanStep& step) {
  switch (c.mode) {
    case CopyMode::kHostMemcpy:
      step.exec_device = step.done_device = kHostDevice;
      break;
    case CopyMode::kUpload:
      step.exec_device = step.done_device = c.dst_device;
      break;
    case CopyMode::kDownload:
      step.exec_device = step.done_device = c.src_device;
      break;
    case CopyMode::kStaged:
      step.exec_device = c.src_device;
      step.done_device = c.dst_device;
      break;
  }
}

void fill_values(const ir::Graph& g, ExecutionPlan& plan) {
  plan.values.resize(g.value_count());
  for (ir::ValueId v = 0; v < g.value_count(); ++v) {
    const ir::Value& value = g.value(v);
    plan.values[v].name = value.name;
    plan.values[v].dtype = value.dtype;
    plan.values[v].rank = value.shape.rank_known() ? static_cast<int64_t>(value.shape.rank()) : -1;
  }
  plan.dense_index.assign(g.value_count(), -1);
  auto add = [&](ir::ValueId v) {
    if (plan.dense_index[v] < 0) plan.dense_index[v] = static_cast<int32_t>(plan.dense_count++);
  };
  for (ir::ValueId v : g.inputs) add(v);
  for (const PlanPartition& p : plan.partitions)
    for (ir::ValueId v : p.outputs) add(v);
}

}  // namespace

Status build_step_graph(const ir::Graph& g, const partitioner::PartitionPlan& pp,
                        ExecutionPlan& plan) {
  using partitioner::kHost;
  plan.graph_inputs = g.inputs;
  fill_values(g, plan);
  std::map<ir::ValueId, size_t> input_index;
  for (size_t i = 0; i < g.inputs.size(); ++i) input_index.emplace(g.inputs[i], i);

  const size_t num_parts = plan.partitions.size();
  // writer[(value, device)] = the step (or kBound) that makes the value resident there.
  std::map<std::pair<ir::ValueId, size_t>, size_t> writer;
  plan.steps.resize(num_parts + pp.copies.size());

  for (size_t p = 0; p < num_parts; ++p) {
    PlanStep& step = plan.steps[p];
    const PlanPartition& part = plan.partitions[p];
    step.kind = PlanStep::Kind::kExecute;
    step.index = p;
    step.exec_device = step.done_device = part.device;
    step.label = "partition '" + part.name + "' (" + plan.devices[part.device].backend + ")";
    step.trace_name = part.name;
    step.pipelined = true;
    for (ir::ValueId v : part.outputs) writer[{v, part.device}] = p;
  }
  for (size_t c = 0; c < pp.copies.size(); ++c) {
    const partitioner::CopyEdge& edge = pp.copies[c];
    PlanCopy copy;
    copy.value = edge.value;
    copy.src_device = edge.src_backend == kHost ? kHostDevice : edge.src_backend;
    copy.dst_device = edge.dst_backend == kHost ? kHostDevice : edge.dst_backend;
    copy.mode = copy_mode(plan, copy.src_device, copy.dst_device);
    PlanStep& step = plan.steps[num_parts + c];
    step.kind = PlanStep::Kind::kCopy;
    step.index = c;
    set_copy_devices(copy, step);
    const std::string route =
        "(" + plan.device_name(copy.src_device) + " -> " + plan.device_name(copy.dst_device) + ")";
    step.label = "copy of '" + g.value(edge.value).name + "' " + route;
    step.trace_name = "copy '" + g.value(edge.value).name + "' " + route;
    step.pipelined = step.exec_device != kHostDevice && step.exec_device == step.done_device;
    writer[{copy.value, copy.dst_device}] = num_parts + c;
    plan.copies.push_back(copy);
  }

  // Graph inputs that partitions on mapped devices read in place.
  for (size_t p = 0; p < num_parts; ++p) {
    const PlanPartition& part = plan.partitions[p];
    for (ir::ValueId v : part.inputs) {
      auto in = input_index.find(v);
      if (in == input_index.end() || writer.count({v, part.device})) continue;
      if (!plan.devices[part.device].mappable)
        return internal_error("graph input '" + g.value(v).name + "' reaches " +
                              plan.steps[p].label + " without a copy");
      writer[{v, part.device}] = kBound;
      plan.bindings.push_back(InputBinding{in->second, v, part.device});
    }
  }

  // Dependency edges, each released on issue or on completion.
  auto link = [&](size_t from, size_t to) {
    PlanStep& a = plan.steps[from];
    PlanStep& b = plan.steps[to];
    auto& list = (a.done_device != kHostDevice && a.done_device == b.exec_device)
                     ? a.release_on_issue
                     : a.release_on_complete;
    if (std::find(list.begin(), list.end(), to) != list.end()) return;
    list.push_back(to);
    ++b.num_predecessors;
    if (&list == &a.release_on_issue) b.stream_waits.push_back(from);
  };
  for (size_t p = 0; p < num_parts; ++p) {
    const PlanPartition& part = plan.partitions[p];
    for (ir::ValueId v : part.inputs) {
      auto w = writer.find({v, part.device});
      if (w == writer.end())
        return internal_error("no step makes '" + g.value(v).name + "' available to " +
                              plan.steps[p].label);
      if (w->second != kBound) link(w->second, p);
    }
  }
  for (size_t c = 0; c < plan.copies.size(); ++c) {
    const partitioner::CopyEdge& edge = pp.copies[c];
    if (edge.src_partition != kHost) link(edge.src_partition, num_parts + c);
  }

  // Where each graph output is read at the end of a run.
  std::map<ir::ValueId, size_t> producer_device;
  for (const PlanPartition& part : plan.partitions)
    for (ir::ValueId v : part.outputs) producer_device.emplace(v, part.device);
  for (ir::ValueId v : g.outputs) {
    OutputSource src;
    src.value = v;
    if (auto in = input_index.find(v); in != input_index.end()) {
      src.kind = OutputSource::Kind::kGraphInput;
      src.input_index = in->second;
    } else if (g.value(v).is_constant()) {
      src.kind = OutputSource::Kind::kConstant;
      src.constant = g.value(v).constant;
    } else if (writer.count({v, kHostDevice})) {
      src.kind = OutputSource::Kind::kHostCopy;
    } else if (auto pd = producer_device.find(v); pd != producer_device.end()) {
      if (!plan.devices[pd->second].mappable)
        return internal_error("graph output '" + g.value(v).name + "' stays on " +
                              plan.devices[pd->second].backend + " without a copy to the host");
      src.kind = OutputSource::Kind::kDevice;
      src.device = pd->second;
    } else {
      return invalid_argument("graph output '" + g.value(v).name +
                              "' is not produced by any node, nor an input or a constant");
    }
    plan.outputs.push_back(src);
  }
  return Status::ok();
}

}  // namespace infer::runtime
