// Runs an ExecutionPlan once: places the inputs, releases the steps in dependency order
// on the session's oneTBB arena, and reads the outputs back.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <vector>

#include "infer/infer.hpp"
#include "runtime/execution_plan.hpp"

namespace infer::runtime {

class Scheduler {
 public:
  Scheduler(const ExecutionPlan& plan, std::shared_ptr<tbb::task_arena> arena)
      : plan_(plan), arena_(std::move(arena)) {}

  // `inputs` in declaration order, already validated. Fills stats->copies and
  // stats->copy_bytes. Safe to call from several threads at once: each call has its
  // own RunState. Must not be called from a worker of the session's own arena (the
  // caller blocks until the run is over).
  Result<std::vector<Tensor>> run(const std::vector<const Tensor*>& inputs, RunStats* stats) const;

 private:
  const ExecutionPlan& plan_;
  std::shared_ptr<tbb::task_arena> arena_;
};

}  // namespace infer::runtime
