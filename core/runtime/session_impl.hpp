// The Session the public API hands out: an immutable execution plan plus the plugins,
// arena and reports it was built with. run() is safe from many threads at once: each
// run keeps its own state; the plan's executables, weights, pools and arenas are shared,
// and so is the trace recorder (which locks).
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/execution_plan.hpp"
#include "runtime/logger.hpp"
#include "runtime/scheduler.hpp"
#include "runtime/trace.hpp"

namespace infer::runtime {

class SessionImpl final : public Session {
 public:
  struct Parts {
    std::shared_ptr<tbb::task_arena> arena;
    std::vector<Backend> backends;
    std::unique_ptr<ExecutionPlan> plan;
    std::vector<TensorInfo> inputs;
    std::vector<TensorInfo> outputs;
    PlanReport report;
    std::vector<std::string> active_backends;
    int micro_batches = 1;   // SessionOptions::micro_batches, already checked
    std::string trace_path;  // SessionOptions::trace_path
    LogSink log_sink;
    LogLevel log_level = LogLevel::kWarning;
  };
  explicit SessionImpl(Parts parts);
  ~SessionImpl() override;

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs,
                                       RunStats* stats) override;
  Status write_trace() override;
  const PlanReport& plan() const override { return report_; }
  std::vector<std::string> active_backends() const override { return active_; }

 private:
  // Destruction runs bottom-up: the plan (executables, then device memory and queues)
  // goes before the plugin instances, and the arena their services use goes last.
  std::shared_ptr<tbb::task_arena> arena_;
  std::vector<Backend> backends_;
  std::unique_ptr<ExecutionPlan> plan_;
  Logger log_;
  std::unique_ptr<TraceRecorder> trace_;  // null without a trace_path; used by scheduler_
  Scheduler scheduler_;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  PlanReport report_;
  std::vector<std::string> active_;
};

}  // namespace infer::runtime
