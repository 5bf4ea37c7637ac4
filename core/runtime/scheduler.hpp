// Runs an ExecutionPlan: places the inputs, releases the steps in dependency order on the
// session's oneTBB arena, and reads the outputs back; with micro-batches, splits the
// batch and pipelines the micro-batches through the plan.
//
// How the work is spread:
//   - Every step is a task in the session's arena, the arena the cpu plugin's
//     parallel_for runs in, so cpu partitions and the host's bookkeeping share one pool.
//   - Steps whose predecessors are done (or enqueued on the same device, ordered there by
//     a stream wait) are released at once, so independent partitions run concurrently.
//   - A device step is only enqueued; its completion callback releases what depends on
//     it. No worker waits for a device.
//   - Micro-batches (SessionOptions::micro_batches): micro-batch i+1 starts while i is in
//     flight (up to kPipelineDepth at once), and each pipelined step of i+1 (PlanStep::
//     pipelined: an execution, an upload, a download) is queued behind the same step of
//     i. So the device sees each step's work in micro-batch order, and the upload of
//     i+1 runs while i computes and while i-1 is downloaded, on whatever queues the
//     plugin gives its copy and compute streams.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "infer/infer.hpp"
#include "runtime/execution_plan.hpp"
#include "runtime/trace.hpp"

namespace infer::runtime {

class Scheduler {
 public:
  // Micro-batches in flight at once: one uploading, one computing, one downloading, and
  // one more so that starting the next (on the calling thread, woken when one finishes)
  // never leaves a queue idle.
  static constexpr size_t kPipelineDepth = 4;

  struct Options {
    size_t micro_batches = 1;        // 1: never split
    TraceRecorder* trace = nullptr;  // records every run when set; outlives the scheduler
  };

  Scheduler(const ExecutionPlan& plan, std::shared_ptr<tbb::task_arena> arena, Options options)
      : plan_(plan), arena_(std::move(arena)), options_(options) {}

  // `inputs` in declaration order, already validated. Fills stats->copies,
  // stats->copy_bytes and stats->micro_batches. Safe to call from several threads at
  // once: each call has its own RunStates. Must not be called from a worker of the
  // session's own arena (the caller blocks until the run is over).
  Result<std::vector<Tensor>> run(const std::vector<const Tensor*>& inputs, RunStats* stats) const;

 private:
  Result<std::vector<Tensor>> run_whole(const std::vector<const Tensor*>& inputs, uint64_t run,
                                        RunStats* stats) const;
  Result<std::vector<Tensor>> run_pipelined(const std::vector<const Tensor*>& inputs,
                                            int64_t rows, uint64_t run, RunStats* stats) const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  const ExecutionPlan& plan_;
  std::shared_ptr<tbb::task_arena> arena_;
  Options options_;
};

}  // namespace infer::runtime
