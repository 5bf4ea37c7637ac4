// RunState: input placement, step scheduling, completion, outputs and clean-up. The work
// each step enqueues is in run_steps.cpp.
#include "runtime/run_state.hpp"

#include <cstring>
#include <exception>

#include "plugin_host/tsan_annotations.hpp"


namespace infer::runtime {

std::vector<HostInput> host_inputs_of(const std::vector<const Tensor*>& tensors) {
  std::vector<HostInput> inputs;
  inputs.reserve(tensors.size());
  for (const Tensor* t : tensors)
    inputs.push_back(HostInput{t->dtype(), t->shape(), t->data(), t->size_bytes()});
  return inputs;
}

RunState::RunState(const ExecutionPlan& plan, tbb::task_arena& arena,
                   std::shared_ptr<RunGroup> group)
    : plan_(plan),
      arena_(arena),
      group_(std::move(group)),
      residents_(plan.dense_count * plan.columns()),
      steps_(plan.steps.size()),
      pending_(new std::atomic<size_t>[plan.steps.size()]) {
  // A step without predecessors still waits for one release: start()'s. So a chained
  // step of a later micro-batch cannot be released by its chain before its run started.
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const size_t preds = plan.steps[s].num_predecessors;
    pending_[s].store(preds == 0 ? 1 : preds);
  }
}

RunState::~RunState() = default;

Status RunState::bind_inputs(const std::vector<HostInput>& inputs) {
  for (size_t i = 0; i < plan_.graph_inputs.size(); ++i) {
    Resident& r = at(plan_.graph_inputs[i], kHostDevice);
    r.present = true;
    r.dtype = static_cast<infer_dtype>(inputs[i].dtype);
    r.dims = inputs[i].dims;
    r.bytes = inputs[i].bytes;
    r.host_src = inputs[i].data;
  }
  for (const InputBinding& b : plan_.bindings) {
    const HostInput& t = inputs[b.input_index];
    const PlanDevice& dev = plan_.devices[b.device];
    HostWork work{"input '" + plan_.values[b.value].name + "' (host -> " + dev.backend + ")",
                  t.bytes, TraceClock::now(), {}};
    Result<DeviceArena::Block> block = dev.arena->allocate(t.bytes);
    if (!block.is_ok())
      return block.status().with_context("input '" + plan_.values[b.value].name + "' on " +
                                         dev.backend);
    binding_blocks_.emplace_back(b.device, *block);
    if (t.bytes > 0) std::memcpy(block->host_ptr, t.data, t.bytes);
    work.end = TraceClock::now();
    host_work_.push_back(std::move(work));
    Resident& r = at(b.value, b.device);
    r.present = true;
    r.dtype = static_cast<infer_dtype>(t.dtype);
    r.dims = t.dims;
    r.bytes = t.bytes;
    r.block = *block;
  }
  return Status::ok();
}

void RunState::chain(std::shared_ptr<RunState> next) {
  for (size_t s = 0; s < plan_.steps.size(); ++s)
    if (plan_.steps[s].pipelined) next->pending_[s].fetch_add(1, std::memory_order_relaxed);
  next_ = std::move(next);
}

void RunState::start(bool run_first_here) {
  const size_t total = plan_.steps.size();
  if (total == 0) {
    // Nothing will ever call finish_step: announce the (empty) run as finished now.
    if (group_) {
      std::lock_guard lock(group_->mu);
      ++group_->finished;
      group_->cv.notify_all();
    }
    return;
  }
  std::vector<size_t> ready;
  for (size_t s = 0; s < total; ++s)
    if (plan_.steps[s].num_predecessors == 0 &&
        pending_[s].fetch_sub(1, std::memory_order_acq_rel) == 1)
      ready.push_back(s);
  if (ready.empty()) return;
  for (size_t i = 0; i + 1 < ready.size(); ++i) dispatch(ready[i]);
  if (!run_first_here) {
    dispatch(ready.back());
    return;
  }
  // The calling thread takes one ready step itself (inside the arena, so a CPU kernel's
  // parallel_for spreads over the workers), rather than only handing work over and
  // sleeping: a model that is one CPU partition then runs without a thread switch.
  // When the arena's slot for outside threads is taken (another run is in it), oneTBB
  // hands this body to a thread already inside.
  const size_t first = ready.back();
  auto body = host::tsan::handoff([this, first] { run_step(first); });
  arena_.execute(body);
  host::tsan::acquire();
}

bool RunState::finished() const {
  std::lock_guard lock(mu_);
  return finished_ == plan_.steps.size();
}

Status RunState::wait() {
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, [&] { return finished_ == plan_.steps.size(); });
  return first_error_;
}

void RunState::dispatch(size_t step) {
  arena_.enqueue(host::tsan::handoff([self = shared_from_this(), step] { self->run_step(step); }));
}

void RunState::run_step(size_t step) {
  if (failed()) {
    after_issue(step, Status::ok());  // nothing issued: releases everyone, who skip too
    return;
  }
  Status status;
  steps_[step].t_issue = TraceClock::now();
  try {
    status = issue(step);
  } catch (const std::exception& e) {
    status = internal_error(plan_.steps[step].label + ": " + e.what());
  }
  if (status.is_ok() && steps_[step].deferred) return;
  after_issue(step, status);
}

void RunState::after_issue(size_t step, const Status& status) {
  const PlanStep& st = plan_.steps[step];
  StepRun& r = steps_[step];
  if (!status.is_ok()) fail(status);
  release(st.release_on_issue);
  if (next_ && st.pipelined) next_->chain_release(step, r.issued ? &r.event : nullptr);
  if (!r.issued) {
    // Synchronous (a host memcpy), failed or skipped: over now.
    r.t_done = TraceClock::now();
    r.ok = status.is_ok() && r.t_issue != TraceClock::time_point{};
    release(st.release_on_complete);
    finish_step();
    return;
  }
  when_complete(step, kDone, r.event);
}

void RunState::chain_release(size_t step, const PooledEvent* event) {
  steps_[step].chain_wait = event;
  if (pending_[step].fetch_sub(1, std::memory_order_acq_rel) == 1) dispatch(step);
}

void RunState::when_complete(size_t step, Which which, const PooledEvent& event) {
  Completion& c = steps_[step].completion[which];
  c.state.store(Completion::kRegistering, std::memory_order_relaxed);
  auto self = shared_from_this();
  Status registered = event.event.on_complete(
      event.value, [self, step, which](const Status& s) { self->on_event(step, which, s); });
  if (!registered.is_ok()) {
    // Without a completion callback the only way to learn the outcome is to wait here;
    // it only happens when the plugin refused the registration.
    Status waited = event.event.wait(event.value);
    (which == kDone ? steps_[step].t_done : steps_[step].t_done1) = TraceClock::now();
    deliver(step, which, waited);
    return;
  }
  int expected = Completion::kRegistering;
  if (!c.state.compare_exchange_strong(expected, Completion::kRegistered,
                                       std::memory_order_acq_rel))
    deliver(step, which, c.status);  // it fired during registration
}

void RunState::on_event(size_t step, Which which, const Status& status) {
  (which == kDone ? steps_[step].t_done : steps_[step].t_done1) = TraceClock::now();
  Completion& c = steps_[step].completion[which];
  c.status = status;
  int expected = Completion::kRegistering;
  if (c.state.compare_exchange_strong(expected, Completion::kFiredEarly, std::memory_order_acq_rel))
    return;  // the registering thread delivers it after the plugin call returned
  deliver(step, which, status);
}

void RunState::deliver(size_t step, Which which, const Status& status) {
  if (which == kDone)
    on_step_complete(step, status);
  else
    on_staged_download_done(step, status);
}

void RunState::on_step_complete(size_t step, const Status& status) {
  StepRun& r = steps_[step];
  if (status.is_ok()) {
    r.event_outcome = EventPool::Outcome::kReached;
    r.ok = true;
  } else {
    r.event_outcome = EventPool::Outcome::kFailed;
    r.clean = false;
    fail(status.with_context(plan_.steps[step].label));
  }
  release(plan_.steps[step].release_on_complete);
  finish_step();
}

void RunState::on_staged_download_done(size_t step, const Status& status) {
  StepRun& r = steps_[step];
  if (!status.is_ok()) {
    r.event1_outcome = EventPool::Outcome::kFailed;
    r.clean = false;
    fail(status.with_context(plan_.steps[step].label));
    after_issue(step, Status::ok());
    return;
  }
  r.event1_outcome = EventPool::Outcome::kReached;
  // The upload half runs as a task: a completion callback must not do real work.
  arena_.enqueue(host::tsan::handoff([self = shared_from_this(), step] {
    Status s;
    if (!self->failed()) {
      try {
        s = self->issue_staged_upload(step);
      } catch (const std::exception& e) {
        s = internal_error(self->plan_.steps[step].label + ": " + e.what());
      }
    }
    self->after_issue(step, s);
  }));
}

void RunState::release(const std::vector<size_t>& successors) {
  for (size_t t : successors)
    if (pending_[t].fetch_sub(1, std::memory_order_acq_rel) == 1) dispatch(t);
}

void RunState::finish_step() {
  bool last = false;
  {
    std::lock_guard lock(mu_);
    last = ++finished_ == plan_.steps.size();
    if (last) done_cv_.notify_all();
  }
  // The group outlives this call: this run holds it, and whoever called finish_step
  // holds this run.
  if (last && group_) {
    std::lock_guard lock(group_->mu);
    ++group_->finished;
    group_->cv.notify_all();
  }
}

void RunState::fail(const Status& status) {
  std::lock_guard lock(mu_);
  if (first_error_.is_ok()) first_error_ = status;
  failed_.store(true, std::memory_order_release);
  if (group_) group_->failed.store(true, std::memory_order_release);
}

Result<std::vector<Tensor>> RunState::collect_outputs(const std::vector<HostInput>& inputs) {
  std::vector<Tensor> out;
  out.reserve(plan_.outputs.size());
  for (const OutputSource& src : plan_.outputs) {
    const std::string& name = plan_.values[src.value].name;
    switch (src.kind) {
      case OutputSource::Kind::kGraphInput: {
        const HostInput& in = inputs[src.input_index];
        INFER_ASSIGN_OR_RETURN(Tensor t, Tensor::from_bytes(in.dtype, in.dims, in.data, in.bytes));
        out.push_back(std::move(t));
        break;
      }
      case OutputSource::Kind::kConstant: {
        INFER_ASSIGN_OR_RETURN(
            Tensor t, Tensor::from_bytes(src.constant->dtype(), src.constant->dims(),
                                         src.constant->data(), src.constant->size_bytes()));
        out.push_back(std::move(t));
        break;
      }
      case OutputSource::Kind::kDevice: {
        const Resident& r = at(src.value, src.device);
        if (!r.present) return internal_error("output '" + name + "' was not produced");
        HostWork work{"output '" + name + "' (" + plan_.devices[src.device].backend + " -> host)",
                      r.bytes,
                      TraceClock::now(),
                      {}};
        Tensor t = Tensor::zeros(static_cast<DataType>(r.dtype), r.dims);
        if (r.bytes > 0) std::memcpy(t.mutable_data(), r.block.host_ptr, r.bytes);
        work.end = TraceClock::now();
        host_work_.push_back(std::move(work));
        out.push_back(std::move(t));
        break;
      }
      case OutputSource::Kind::kHostCopy: {
        const Resident& r = at(src.value, kHostDevice);
        if (!r.present) return internal_error("output '" + name + "' was not copied back");
        out.push_back(r.host_tensor);
        break;
      }
    }
  }
  return out;
}

void RunState::release_resources() {
  auto give_stream = [&](host::Stream& s, size_t device, bool clean, StreamUse use) {
    if (!s.valid()) return;
    if (clean)
      plan_.devices[device].streams->release(std::move(s), use);
    else
      s.reset();  // waits for whatever the failed work left queued
  };
  auto give_event = [&](PooledEvent& e, size_t device, EventPool::Outcome outcome) {
    if (e.event.valid()) plan_.devices[device].events->release(std::move(e), outcome);
  };
  for (size_t k = 0; k < steps_.size(); ++k) {
    StepRun& r = steps_[k];
    const StreamUse use =
        plan_.steps[k].kind == PlanStep::Kind::kCopy ? StreamUse::kCopy : StreamUse::kCompute;
    give_stream(r.stream, r.stream_device, r.clean, use);
    give_stream(r.stream2, r.stream2_device, r.clean, use);
    give_event(r.event, r.event_device, r.event_outcome);
    give_event(r.event1, r.event1_device, r.event1_outcome);
    for (auto& [device, block] : r.blocks) plan_.devices[device].arena->release(block);
    r.blocks.clear();
  }
  for (auto& [device, block] : binding_blocks_) plan_.devices[device].arena->release(block);
  binding_blocks_.clear();
}

}  // namespace infer::runtime
