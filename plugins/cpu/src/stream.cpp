#include "stream.hpp"

#include "abi_objects.hpp"

namespace infer::cpu {

void StreamState::add_wait(infer_event* event, uint64_t value) {
  pending_waits_.emplace_back(event, value);
}

void StreamState::wait_item(infer_event* event, uint64_t value) {
  if (failed_ && reported_) failed_ = reported_ = false;
  if (failed_) return;  // skipped like any work after an unreported failure
  Status st = event->event.wait(value, UINT64_MAX);
  // The producer we waited for failed: its failure flows on to our own signals.
  if (!st.is_ok()) fail_work(st);
}

void StreamState::resolve_waits() {
  auto waits = std::move(pending_waits_);
  pending_waits_.clear();
  for (auto& [event, value] : waits) wait_item(event, value);
}

bool StreamState::begin_work() {
  resolve_waits();
  if (failed_ && reported_) failed_ = reported_ = false;
  return !failed_;
}

void StreamState::fail_work(const Status& failure) {
  failed_ = true;
  reported_ = false;
  failure_ = failure;
}

void StreamState::signal(infer_event* event, uint64_t value) {
  resolve_waits();
  if (failed_) {
    event->event.fail(failure_);
    reported_ = true;
  } else {
    event->event.signal(value);
  }
}

}  // namespace infer::cpu
