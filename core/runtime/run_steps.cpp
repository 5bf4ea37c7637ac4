// The work of one step: executing a partition, or moving a value between devices. Each
// function enqueues device work and returns; none waits for a device.
#include <cstring>
#include <mutex>
#include <string>

#include "runtime/run_state.hpp"

namespace infer::runtime {
namespace {

std::string shape_text(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

infer_tensor tensor_view(const Resident& r) {
  infer_tensor t{};
  t.struct_size = sizeof(infer_tensor);
  t.dtype = r.dtype;
  t.rank = r.dims.size();
  t.dims = r.dims.data();
  t.buffer = r.block.buffer;
  t.offset = r.block.offset;
  t.size_bytes = r.bytes;
  t.quant = nullptr;
  return t;
}

infer_copy_region region() {
  infer_copy_region r{};
  r.struct_size = sizeof(infer_copy_region);
  return r;
}

}  // namespace

Status RunState::issue(size_t step) {
  return plan_.steps[step].kind == PlanStep::Kind::kExecute ? issue_execute(step)
                                                            : issue_copy(step);
}

Result<DeviceArena::Block> RunState::allocate(size_t step, size_t device, size_t bytes) {
  Result<DeviceArena::Block> block = plan_.devices[device].arena->allocate(bytes);
  if (!block.is_ok()) return block.status().with_context(plan_.steps[step].label);
  StepRun& r = steps_[step];
  std::lock_guard lock(r.blocks_mu);
  r.blocks.emplace_back(device, *block);
  return block;
}

std::vector<infer_event_value> RunState::waits_of(size_t step) const {
  std::vector<infer_event_value> waits;
  for (size_t w : plan_.steps[step].stream_waits)
    waits.push_back(infer_event_value{steps_[w].event.event.raw(), steps_[w].event.value});
  if (const PooledEvent* chained = steps_[step].chain_wait)
    waits.push_back(infer_event_value{chained->event.raw(), chained->value});
  return waits;
}

Status RunState::issue_execute(size_t step) {
  const PlanStep& st = plan_.steps[step];
  const PlanPartition& part = plan_.partitions[st.index];
  const PlanDevice& dev = plan_.devices[part.device];
  StepRun& r = steps_[step];

  Result<host::Stream> stream = dev.streams->acquire(StreamUse::kCompute);
  if (!stream.is_ok()) return stream.status().with_context(st.label);
  r.stream = std::move(*stream);
  r.stream_device = part.device;
  Result<PooledEvent> event = dev.events->acquire();
  if (!event.is_ok()) return event.status().with_context(st.label);
  r.event = std::move(*event);
  r.event_device = part.device;

  std::vector<infer_tensor> inputs;
  inputs.reserve(part.inputs.size());
  for (ir::ValueId v : part.inputs) {
    const Resident& res = at(v, part.device);
    if (!res.present)
      return internal_error(st.label + ": input '" + plan_.values[v].name +
                            "' is not available on " + dev.backend);
    inputs.push_back(tensor_view(res));
  }
  const std::vector<infer_event_value> waits = waits_of(step);
  const infer_event_value signal{r.event.event.raw(), r.event.value};

  std::mutex alloc_mu;
  std::vector<bool> allocated(part.outputs.size(), false);
  host::ExecuteArgs args;
  args.inputs = inputs;
  args.waits = waits;
  args.signals = std::span<const infer_event_value>(&signal, 1);
  args.run = &context_;
  args.alloc_output = [&](size_t index, infer_dtype dtype, std::span<const int64_t> dims,
                          infer_tensor* out) -> Status {
    if (index >= part.outputs.size())
      return invalid_argument(st.label + ": output index " + std::to_string(index) +
                              " is out of range (the partition has " +
                              std::to_string(part.outputs.size()) + " outputs)");
    const ir::ValueId v = part.outputs[index];
    const ValueInfo& info = plan_.values[v];
    const auto type = static_cast<DataType>(dtype);
    if (info.dtype != DataType::kUndefined && type != info.dtype)
      return invalid_argument(st.label + ": output '" + info.name + "' allocated as " +
                              std::string(dtype_name(type)) + ", the model says " +
                              std::string(dtype_name(info.dtype)));
    if (info.rank >= 0 && static_cast<int64_t>(dims.size()) != info.rank)
      return invalid_argument(st.label + ": output '" + info.name + "' allocated with shape " +
                              shape_text(dims) + ", the model says rank " +
                              std::to_string(info.rank));
    int64_t count = 1;
    for (int64_t d : dims) {
      if (d < 0)
        return invalid_argument(st.label + ": output '" + info.name +
                                "' allocated with negative dims " + shape_text(dims));
      count *= d;
    }
    {
      std::lock_guard lock(alloc_mu);
      if (allocated[index])
        return invalid_argument(st.label + ": output '" + info.name + "' allocated twice");
      allocated[index] = true;
    }
    const size_t bytes = storage_bytes(type, count);
    INFER_ASSIGN_OR_RETURN(DeviceArena::Block block, allocate(step, part.device, bytes));
    Resident& res = at(v, part.device);
    res.dtype = dtype;
    res.dims.assign(dims.begin(), dims.end());
    res.bytes = bytes;
    res.block = block;
    res.present = true;
    *out = tensor_view(res);
    return Status::ok();
  };

  Status status = part.executable.execute(r.stream, args);
  if (!status.is_ok()) {
    r.clean = false;
    r.event_outcome = EventPool::Outcome::kFailed;  // its state is unknown: never reuse
    return status.with_context(st.label);
  }
  r.issued = true;
  for (size_t i = 0; i < part.outputs.size(); ++i)
    if (!allocated[i]) {
      // A plugin that fails while running (rather than while enqueueing) reports it on
      // the signalled event and may return before allocating its outputs: that failure,
      // not the missing output, is what the user must see. Only this error path waits.
      Status done = r.event.event.wait(r.event.value);
      if (!done.is_ok()) return done.with_context(st.label);
      return internal_error(st.label +
                            ": the plugin returned from execute without allocating "
                            "output '" +
                            plan_.values[part.outputs[i]].name + "'");
    }
  return Status::ok();
}

Status RunState::issue_copy(size_t step) {
  const PlanStep& st = plan_.steps[step];
  const PlanCopy& c = plan_.copies[st.index];
  StepRun& r = steps_[step];
  const Resident& src = at(c.value, c.src_device);
  if (!src.present)
    return internal_error(st.label + ": the value is not available on " +
                          plan_.device_name(c.src_device));
  copies_.fetch_add(1);
  copy_bytes_.fetch_add(src.bytes);
  r.bytes = src.bytes;

  // The destination: a block of the destination's arena, or a new output tensor.
  Resident& dst = at(c.value, c.dst_device);
  void* dst_host = nullptr;
  if (c.dst_device == kHostDevice) {
    dst.host_tensor = Tensor::zeros(static_cast<DataType>(src.dtype), src.dims);
    dst_host = dst.host_tensor.mutable_data();
  } else {
    INFER_ASSIGN_OR_RETURN(dst.block, allocate(step, c.dst_device, src.bytes));
    dst_host = dst.block.host_ptr;
  }
  dst.dtype = src.dtype;
  dst.dims = src.dims;
  dst.bytes = src.bytes;
  const void* src_host = c.src_device == kHostDevice ? src.host_src : src.block.host_ptr;

  if (c.mode == CopyMode::kHostMemcpy) {
    if (src.bytes > 0) std::memcpy(dst_host, src_host, src.bytes);
    dst.present = true;
    return Status::ok();
  }

  // Device work: a stream and a completion event on the device that runs it.
  const size_t run_on = st.exec_device;
  const PlanDevice& dev = plan_.devices[run_on];
  Result<host::Stream> stream = dev.streams->acquire(StreamUse::kCopy);
  if (!stream.is_ok()) return stream.status().with_context(st.label);
  r.stream = std::move(*stream);
  r.stream_device = run_on;
  Result<PooledEvent> event = dev.events->acquire();
  if (!event.is_ok()) return event.status().with_context(st.label);
  PooledEvent& done = c.mode == CopyMode::kStaged ? r.event1 : r.event;
  (c.mode == CopyMode::kStaged ? r.event1_device : r.event_device) = run_on;
  done = std::move(*event);

  std::vector<const PooledEvent*> waits;
  for (size_t w : st.stream_waits) waits.push_back(&steps_[w].event);
  if (r.chain_wait != nullptr) waits.push_back(r.chain_wait);
  for (const PooledEvent* w : waits) {
    Status s = r.stream.wait(w->event, w->value);
    if (!s.is_ok()) {
      r.clean = false;
      return s.with_context(st.label);
    }
  }
  infer_copy_region reg = region();
  reg.size_bytes = src.bytes;
  if (c.mode == CopyMode::kUpload) {
    reg.src_host = src_host;
    reg.dst_buffer = dst.block.buffer;
    reg.dst_offset = dst.block.offset;
  } else {
    reg.src_buffer = src.block.buffer;
    reg.src_offset = src.block.offset;
    if (c.mode == CopyMode::kStaged) {
      r.staging.resize(src.bytes);
      reg.dst_host = r.staging.data();
    } else {
      reg.dst_host = dst_host;
    }
  }
  Status s = reg.size_bytes > 0 ? r.stream.copy(std::span<const infer_copy_region>(&reg, 1))
                                : Status::ok();
  if (s.is_ok()) s = r.stream.signal(done.event, done.value);
  if (!s.is_ok()) {
    r.clean = false;
    (c.mode == CopyMode::kStaged ? r.event1_outcome : r.event_outcome) =
        EventPool::Outcome::kFailed;
    return s.with_context(st.label);
  }
  if (c.mode != CopyMode::kStaged) {
    dst.present = true;
    r.issued = true;
    return Status::ok();
  }
  // The upload half goes on when the download half has completed (it needs the bytes
  // on the host); run_step leaves the step alone since it is deferred.
  r.deferred = true;
  when_complete(step, kStagedDownload, r.event1);
  return Status::ok();
}

Status RunState::issue_staged_upload(size_t step) {
  const PlanStep& st = plan_.steps[step];
  const PlanCopy& c = plan_.copies[st.index];
  StepRun& r = steps_[step];
  Resident& dst = at(c.value, c.dst_device);
  const PlanDevice& dev = plan_.devices[c.dst_device];
  r.t_issue2 = TraceClock::now();

  Result<host::Stream> stream = dev.streams->acquire(StreamUse::kCopy);
  if (!stream.is_ok()) return stream.status().with_context(st.label);
  r.stream2 = std::move(*stream);
  r.stream2_device = c.dst_device;
  Result<PooledEvent> event = dev.events->acquire();
  if (!event.is_ok()) return event.status().with_context(st.label);
  r.event = std::move(*event);
  r.event_device = c.dst_device;

  infer_copy_region reg = region();
  reg.src_host = r.staging.data();
  reg.dst_buffer = dst.block.buffer;
  reg.dst_offset = dst.block.offset;
  reg.size_bytes = dst.bytes;
  Status s = reg.size_bytes > 0 ? r.stream2.copy(std::span<const infer_copy_region>(&reg, 1))
                                : Status::ok();
  if (s.is_ok()) s = r.stream2.signal(r.event.event, r.event.value);
  if (!s.is_ok()) {
    r.clean = false;
    r.event_outcome = EventPool::Outcome::kFailed;
    return s.with_context(st.label);
  }
  dst.present = true;
  r.issued = true;
  return Status::ok();
}

}  // namespace infer::runtime
