// The state of one run of the plan (a Session::run, or one micro-batch of it): where each
// value lives on each device, the streams, events and memory the run's steps took, and
// the bookkeeping that releases steps in dependency order. Each run has its own
// RunState, so runs never share mutable state (the plan's pools and arenas are
// thread-safe); the micro-batches of one split run are linked only through the chain
// (see chain()) and a shared RunGroup.
//
// Threads: steps run as tasks in the session's oneTBB arena (the arena the cpu plugin's
// parallel_for uses too); device work is only enqueued there, never waited for.
// Completion callbacks come from plugin threads and only count down and enqueue tasks,
// never block. The thread that called Session::run waits on a condition variable (it is
// the application's thread, not a worker) until every step has finished.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "plugin_host/run_context.hpp"
#include "runtime/execution_plan.hpp"
#include "runtime/trace.hpp"

namespace infer::runtime {

// A graph input as a run sees it: the application's tensor, or a slice of it along axis
// 0 (a micro-batch). The bytes stay the application's; the run only reads them.
struct HostInput {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t bytes = 0;
};
std::vector<HostInput> host_inputs_of(const std::vector<const Tensor*>& tensors);

// A value materialized on one device (or, in the host column, on the host).
struct Resident {
  bool present = false;
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;
  std::vector<int64_t> dims;
  size_t bytes = 0;
  DeviceArena::Block block;        // device columns
  const void* host_src = nullptr;  // host column: the application's input tensor
  Tensor host_tensor;              // host column: an output read back by a copy
};

// What the runs of one split Session::run share: a failure in one makes the others skip
// their remaining steps, and each finished run is announced to the thread that starts
// the next ones.
struct RunGroup {
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  size_t finished = 0;  // runs that finished every step; guarded by mu
};

class RunState : public std::enable_shared_from_this<RunState> {
 public:
  RunState(const ExecutionPlan& plan, tbb::task_arena& arena,
           std::shared_ptr<RunGroup> group = nullptr);
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  // Places the inputs (declaration order, already validated): mapped devices get their
  // copy in the arena now, the host column points at the application's bytes, which
  // must stay valid until the run has finished.
  Status bind_inputs(const std::vector<HostInput>& inputs);
  // Makes `next` (the following micro-batch) queue each pipelined step (PlanStep::
  // pipelined) behind this run's instance of it: released when this run has enqueued it,
  // with a stream wait on its completion event. Call before either run starts. This
  // run's events must stay with it (release_resources not called) until `next` has
  // finished.
  void chain(std::shared_ptr<RunState> next);
  // Drops the link to the next micro-batch once both have finished, so that a long
  // chain is not destroyed recursively.
  void unchain() { next_.reset(); }
  // Whether every step has finished (wait() would return at once).
  bool finished() const;
  // Enqueues the steps without predecessors and returns. With `run_first_here`, the
  // calling thread runs one of them itself inside the arena (then it must not be a
  // worker of that arena).
  void start(bool run_first_here);
  // Blocks until every step finished; returns the first error any step reported.
  Status wait();
  Status execute() {
    start(true);
    return wait();
  }
  // The graph outputs in declaration order (after a successful wait()).
  Result<std::vector<Tensor>> collect_outputs(const std::vector<HostInput>& inputs);
  // Gives the streams, events and memory back. Must run on the calling thread after
  // wait(), whatever it returned.
  void release_resources();

  size_t copies() const { return copies_.load(); }
  size_t copy_bytes() const { return copy_bytes_.load(); }

  // The intervals of the steps that completed (trace.hpp says what the times mean), after
  // wait(). `previous` is the micro-batch this one was chained behind, if any: its steps'
  // completions are among what the chained steps waited for.
  void append_trace(const RunState* previous, uint64_t run, int64_t micro_batch,
                    std::vector<TraceInterval>& out) const;

 private:
  // A completion callback may run inside the plugin's event_on_complete call, on the
  // registering thread, with plugin code still on the stack below it. Finishing the step
  // there could end the run, let the application destroy the session and unload the
  // plugin under that stack. So a callback that fires during registration only records
  // its status, and the registering thread delivers it once the plugin call returned.
  struct Completion {
    static constexpr int kRegistering = 0;
    static constexpr int kRegistered = 1;
    static constexpr int kFiredEarly = 2;
    std::atomic<int> state{kRegistering};
    Status status;  // written by the callback before it publishes kFiredEarly
  };
  enum Which { kDone = 0, kStagedDownload = 1 };

  struct StepRun {
    host::Stream stream;  // on stream_device (exec_device)
    size_t stream_device = kHostDevice;
    PooledEvent event;  // on event_device (done_device): fires when the step is done
    size_t event_device = kHostDevice;
    host::Stream stream2;  // kStaged: the upload half, on the destination
    size_t stream2_device = kHostDevice;
    PooledEvent event1;  // kStaged: the download half, on the source
    size_t event1_device = kHostDevice;
    std::vector<uint8_t> staging;  // kStaged: the bytes between the two halves
    EventPool::Outcome event_outcome = EventPool::Outcome::kUnused;
    EventPool::Outcome event1_outcome = EventPool::Outcome::kUnused;
    bool clean = true;         // its streams may go back to the pool
    bool issued = false;       // `event` is bound to fire: completion is awaited through it
    bool deferred = false;     // kStaged: the step goes on when the download half completes
    Completion completion[2];  // indexed by Which
    std::mutex blocks_mu;      // alloc_output may be called from several plugin threads
    std::vector<std::pair<size_t, DeviceArena::Block>> blocks;  // (device, block)
    // The previous micro-batch's completion event of this step (chain()): null when
    // there is none, or when that step enqueued nothing. Set before this step is
    // released.
    const PooledEvent* chain_wait = nullptr;
    // For the trace: when the host began enqueueing (t_issue2: the upload half of a
    // staged copy), and when it learned of the completion (t_done1: the download half).
    TraceClock::time_point t_issue, t_issue2, t_done1, t_done;
    bool ok = false;   // the step did its work and completed without error
    size_t bytes = 0;  // copies: the bytes moved
  };
  // Host work outside the steps (inputs written into mapped memory, outputs read out of
  // it), for the trace.
  struct HostWork {
    std::string name;
    size_t bytes = 0;
    TraceClock::time_point start, end;
  };

  // Scheduling (run_state.cpp).
  void dispatch(size_t step);
  void run_step(size_t step);
  void after_issue(size_t step, const Status& status);
  void chain_release(size_t step, const PooledEvent* event);
  void on_staged_download_done(size_t step, const Status& status);
  void release(const std::vector<size_t>& successors);
  // Calls on_step_complete (kDone) or on_staged_download_done (kStagedDownload) once
  // `event` has completed, never from inside the plugin's registration call.
  void when_complete(size_t step, Which which, const PooledEvent& event);
  void on_event(size_t step, Which which, const Status& status);
  void deliver(size_t step, Which which, const Status& status);
  void on_step_complete(size_t step, const Status& status);
  void finish_step();
  void fail(const Status& status);
  bool failed() const {
    return failed_.load(std::memory_order_acquire) ||
           (group_ && group_->failed.load(std::memory_order_acquire));
  }

  // The work of each step (run_steps.cpp). Each sets StepRun::issued once an event is
  // bound to fire, even if it then reports an error.
  Status issue(size_t step);
  Status issue_execute(size_t step);
  Status issue_copy(size_t step);
  Status issue_staged_upload(size_t step);
  Result<DeviceArena::Block> allocate(size_t step, size_t device, size_t bytes);
  std::vector<infer_event_value> waits_of(size_t step) const;

  Resident& at(ir::ValueId v, size_t device) { return residents_[plan_.slot(v, device)]; }

  const ExecutionPlan& plan_;
  tbb::task_arena& arena_;
  const std::shared_ptr<RunGroup> group_;
  std::shared_ptr<RunState> next_;  // chain(): the following micro-batch
  host::RunContext context_;
  std::vector<Resident> residents_;
  std::vector<StepRun> steps_;
  std::unique_ptr<std::atomic<size_t>[]> pending_;  // predecessors left per step
  std::vector<std::pair<size_t, DeviceArena::Block>> binding_blocks_;
  std::vector<HostWork> host_work_;  // touched by the calling thread only

  std::atomic<bool> failed_{false};
  std::atomic<size_t> copies_{0};
  std::atomic<size_t> copy_bytes_{0};
  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  size_t finished_ = 0;  // guarded by mu_
  Status first_error_;   // guarded by mu_
};

}  // namespace infer::runtime
