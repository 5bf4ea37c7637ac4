// The synchronous stream: each piece of work runs on the calling thread when it is
// enqueued, after the waits enqueued before it. It follows the ABI's failure rule:
// after a failed work item, the stream skips its work up to the next signal, fails that
// signal's event (and any signal right after it), and then runs normally again.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "status.hpp"

struct infer_event;
struct infer_device;

namespace infer::cpu {

class StreamState {
 public:
  // Records a wait; it is honoured (by blocking) before the next work or signal.
  void add_wait(infer_event* event, uint64_t value);
  // Starts a work item: resolves the pending waits, forgets a failure that a signal
  // already reported, and returns false when the item must be skipped because an
  // unreported failure is pending.
  bool begin_work();
  // Waits for one (event, value) as a work item of its own (an execute's waits).
  void wait_item(infer_event* event, uint64_t value);
  // The work item failed: later work is skipped until a signal reports `failure`.
  void fail_work(const Status& failure);
  // A signal: sets the event, or fails it with the pending failure.
  void signal(infer_event* event, uint64_t value);

 private:
  void resolve_waits();
  std::vector<std::pair<infer_event*, uint64_t>> pending_waits_;
  bool failed_ = false;
  bool reported_ = false;
  Status failure_;
};

}  // namespace infer::cpu
