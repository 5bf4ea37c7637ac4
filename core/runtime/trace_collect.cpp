// RunState::append_trace: turns what one run observed (when each step was enqueued, when
// its completion reached the host) into trace intervals, by the rule trace.hpp states.
#include "runtime/run_state.hpp"

namespace infer::runtime {

void RunState::append_trace(const RunState* previous, uint64_t run, int64_t micro_batch,
                            std::vector<TraceInterval>& out) const {
  auto add = [&](std::string device, std::string queue, const char* category, std::string name,
                 TraceClock::time_point start, TraceClock::time_point end, int64_t bytes) {
    TraceInterval i;
    i.device = std::move(device);
    i.queue = std::move(queue);
    i.category = category;
    i.name = std::move(name);
    // Callbacks of two events may reach the host in either order even when the device
    // completed them in order; an interval never ends before it starts.
    i.start = start < end ? start : end;
    i.end = end;
    i.run = run;
    i.micro_batch = micro_batch;
    i.bytes = bytes;
    out.push_back(std::move(i));
  };

  for (size_t s = 0; s < steps_.size(); ++s) {
    const StepRun& r = steps_[s];
    if (!r.ok) continue;
    const PlanStep& st = plan_.steps[s];
    // The device could not start before the host enqueued the work, nor before the host
    // had seen every event the work waits for complete: the steps of this run it was
    // released early for, and the previous micro-batch's instance of the same step.
    TraceClock::time_point start = r.t_issue;
    auto not_before = [&](TraceClock::time_point t) {
      if (t > start) start = t;
    };
    for (size_t w : st.stream_waits) not_before(steps_[w].t_done);
    if (r.chain_wait != nullptr && previous != nullptr) not_before(previous->steps_[s].t_done);

    if (st.kind == PlanStep::Kind::kExecute) {
      const std::string& backend = plan_.devices[plan_.partitions[st.index].device].backend;
      add(backend, backend + " compute", "compute", st.trace_name, start, r.t_done, -1);
      continue;
    }
    const PlanCopy& c = plan_.copies[st.index];
    const auto bytes = static_cast<int64_t>(r.bytes);
    switch (c.mode) {
      case CopyMode::kHostMemcpy:
        add("host", "host copy", "copy", st.trace_name, start, r.t_done, bytes);
        break;
      case CopyMode::kUpload: {
        const std::string& backend = plan_.devices[c.dst_device].backend;
        add(backend, backend + " copy h2d", "copy", st.trace_name, start, r.t_done, bytes);
        break;
      }
      case CopyMode::kDownload: {
        const std::string& backend = plan_.devices[c.src_device].backend;
        add(backend, backend + " copy d2h", "copy", st.trace_name, start, r.t_done, bytes);
        break;
      }
      case CopyMode::kStaged: {
        const std::string& src = plan_.devices[c.src_device].backend;
        const std::string& dst = plan_.devices[c.dst_device].backend;
        add(src, src + " copy d2h", "copy", st.trace_name + ", to the host", start, r.t_done1,
            bytes);
        add(dst, dst + " copy h2d", "copy", st.trace_name + ", from the host", r.t_issue2,
            r.t_done, bytes);
        break;
      }
    }
  }
  for (const HostWork& w : host_work_)
    add("host", "host copy", "copy", w.name, w.start, w.end, static_cast<int64_t>(w.bytes));
}

}  // namespace infer::runtime
