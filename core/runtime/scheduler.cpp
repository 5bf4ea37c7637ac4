#include "runtime/scheduler.hpp"

#include <new>
#include <string>

#include "runtime/micro_batch.hpp"
#include "runtime/run_state.hpp"

namespace infer::runtime {

std::vector<std::string> Scheduler::input_names() const {
  std::vector<std::string> names;
  for (ir::ValueId v : plan_.graph_inputs) names.push_back(plan_.values[v].name);
  return names;
}

std::vector<std::string> Scheduler::output_names() const {
  std::vector<std::string> names;
  for (const OutputSource& o : plan_.outputs) names.push_back(plan_.values[o.value].name);
  return names;
}

Result<std::vector<Tensor>> Scheduler::run(const std::vector<const Tensor*>& inputs,
                                           RunStats* stats) const {
  const uint64_t run = options_.trace != nullptr ? options_.trace->next_run() : 0;
  if (options_.micro_batches > 1) {
    INFER_ASSIGN_OR_RETURN(int64_t rows,
                           micro_batch_rows(input_names(), inputs, options_.micro_batches));
    // An empty batch has nothing to pipeline.
    if (rows > 0) return run_pipelined(inputs, rows, run, stats);
  }
  return run_whole(inputs, run, stats);
}

Result<std::vector<Tensor>> Scheduler::run_whole(const std::vector<const Tensor*>& inputs,
                                                 uint64_t run, RunStats* stats) const {
  const std::vector<HostInput> host = host_inputs_of(inputs);
  // Shared: tasks and completion callbacks hold a reference, so the state outlives the
  // last of them even if they are still unwinding when this thread moves on.
  auto state = std::make_shared<RunState>(plan_, *arena_);
  Status status = state->bind_inputs(host);
  if (status.is_ok()) status = state->execute();
  Result<std::vector<Tensor>> outputs = status;
  if (status.is_ok()) outputs = state->collect_outputs(host);
  state->release_resources();
  if (stats != nullptr) {
    stats->copies = state->copies();
    stats->copy_bytes = state->copy_bytes();
    stats->micro_batches = 1;
  }
  if (options_.trace != nullptr) {
    std::vector<TraceInterval> intervals;
    state->append_trace(nullptr, run, -1, intervals);
    options_.trace->record(std::move(intervals));
  }
  return outputs;
}

Result<std::vector<Tensor>> Scheduler::run_pipelined(const std::vector<const Tensor*>& inputs,
                                                     int64_t rows, uint64_t run,
                                                     RunStats* stats) const {
  const size_t count = options_.micro_batches;
  auto group = std::make_shared<RunGroup>();
  std::vector<std::shared_ptr<RunState>> states(count);
  for (size_t i = 0; i < count; ++i) states[i] = std::make_shared<RunState>(plan_, *arena_, group);
  for (size_t i = 0; i + 1 < count; ++i) states[i]->chain(states[i + 1]);

  std::vector<std::vector<HostInput>> slices(count);
  std::vector<Status> errors(count);
  std::vector<std::vector<Tensor>> parts(count);
  size_t bound = 0;    // runs whose inputs were bound (their resources need releasing)
  size_t started = 0;  // runs started
  size_t released = 0;

  // Run i's events are what the chained steps of run i+1 wait for, so run i keeps them
  // until run i+1 has finished too (or will never start). Its outputs are read just
  // before, since outputs on a mapped device live in memory the release gives back.
  auto release_one = [&](size_t i) {
    if (i < started) {
      errors[i] = states[i]->wait();
      // After a failure elsewhere the run skipped its remaining steps: it has no outputs,
      // and the failure that stopped it is reported by its own run.
      if (errors[i].is_ok() && !group->failed.load()) {
        try {
          Result<std::vector<Tensor>> outs = states[i]->collect_outputs(slices[i]);
          if (outs.is_ok())
            parts[i] = std::move(outs).value();
          else
            errors[i] = outs.status();
        } catch (const std::bad_alloc&) {
          errors[i] = unavailable("reading the outputs: out of host memory");
        }
      }
    }
    states[i]->release_resources();
  };
  auto release_finished = [&](bool all_done) {
    while (released < bound && states[released]->finished() &&
           (all_done || (released + 1 < started && states[released + 1]->finished())))
      release_one(released++);
  };

  // Whatever happens here, the runs already started read the application's inputs
  // until they finish: an exception must not skip the wait below.
  try {
    for (size_t i = 0; i < count; ++i) {
      {
        std::unique_lock lock(group->mu);
        group->cv.wait(lock, [&] {
          return i - group->finished < kPipelineDepth || group->failed.load();
        });
      }
      release_finished(false);
      if (group->failed.load()) break;
      slices[i] = slice_inputs(inputs, i, rows);
      ++bound;
      Status bound_ok = states[i]->bind_inputs(slices[i]);
      if (!bound_ok.is_ok()) {
        errors[i] = bound_ok;
        group->failed.store(true);
        break;
      }
      states[i]->start(false);
      ++started;
    }
  } catch (const std::bad_alloc&) {
    errors[started] = unavailable("starting the micro-batch: out of host memory");
    group->failed.store(true);
  }
  {
    std::unique_lock lock(group->mu);
    group->cv.wait(lock, [&] { return group->finished == started; });
  }
  // The last runs (and a run whose binding failed, which never started) go now.
  release_finished(true);
  while (released < bound) release_one(released++);

  if (options_.trace != nullptr) {
    std::vector<TraceInterval> intervals;
    for (size_t i = 0; i < started; ++i)
      states[i]->append_trace(i > 0 ? states[i - 1].get() : nullptr, run,
                              static_cast<int64_t>(i), intervals);
    options_.trace->record(std::move(intervals));
  }
  if (stats != nullptr) {
    stats->copies = 0;
    stats->copy_bytes = 0;
    for (size_t i = 0; i < started; ++i) {
      stats->copies += states[i]->copies();
      stats->copy_bytes += states[i]->copy_bytes();
    }
    stats->micro_batches = count;
  }
  for (const auto& s : states) s->unchain();

  for (size_t i = 0; i < count; ++i)
    if (!errors[i].is_ok())
      return errors[i].with_context("micro-batch " + std::to_string(i) + " of " +
                                    std::to_string(count));
  parts.resize(started);
  if (started != count)
    return internal_error("micro-batching stopped after " + std::to_string(started) + " of " +
                          std::to_string(count) + " micro-batches without an error");
  return concat_outputs(output_names(), parts);
}

}  // namespace infer::runtime
