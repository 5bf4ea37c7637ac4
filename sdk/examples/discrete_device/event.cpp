#include "event.hpp"

#include <string>
#include <utility>

namespace infer::example {

Event::~Event() {
  // No other thread can touch the event any more: the host destroys it only then.
  std::vector<Callback> left = std::move(pending_);
  pending_.clear();
  if (left.empty()) return;
  Failure gone = failure(INFER_STATUS_CANCELLED,
                         "example: event destroyed before its callbacks' values were reached");
  ++firing_;
  fire(left, failure_ ? failure_ : MaybeFailure(gone));
}

std::vector<Event::Callback> Event::take_ready() {
  std::vector<Callback> ready, still_pending;
  for (const Callback& cb : pending_)
    (failure_ || cb.value <= counter_ ? ready : still_pending).push_back(cb);
  pending_ = std::move(still_pending);
  if (!ready.empty()) ++firing_;  // fire() counts it down
  return ready;
}

void Event::advance(uint64_t value) {
  std::vector<Callback> ready;
  {
    std::lock_guard lock(mu_);
    if (failure_ || value <= counter_) return;
    counter_ = value;
    ready = take_ready();
  }
  cv_.notify_all();
  fire(ready, std::nullopt);
}

MaybeFailure Event::signal_from_host(uint64_t value) {
  {
    std::lock_guard lock(mu_);
    if (failure_) return failure_;
    if (value < counter_) {
      return failure(INFER_STATUS_INVALID_ARGUMENT,
                     "example: event_signal_host: value " + std::to_string(value) +
                         " is below the counter " + std::to_string(counter_) +
                         " (timeline counters only grow)");
    }
  }
  advance(value);
  return std::nullopt;
}

void Event::fail(const Failure& f) {
  std::vector<Callback> ready;
  {
    std::lock_guard lock(mu_);
    if (failure_) return;  // the first failure is the one that sticks
    failure_ = f;
    ready = take_ready();  // all of them: a failure completes every callback
  }
  cv_.notify_all();
  fire(ready, f);
}

Event::WaitResult Event::wait(uint64_t value,
                              std::optional<std::chrono::steady_clock::time_point> deadline,
                              Failure* failure_out) {
  std::unique_lock lock(mu_);
  // Done once the value is reached (or the event failed) and no callback released by
  // that is still running.
  auto done = [&] { return (failure_.has_value() || counter_ >= value) && firing_ == 0; };
  if (deadline) {
    if (!cv_.wait_until(lock, *deadline, done)) return WaitResult::kTimedOut;
  } else {
    cv_.wait(lock, done);
  }
  // A failure wins over a reached value: "every later wait returns that failure".
  if (failure_) {
    *failure_out = *failure_;
    return WaitResult::kFailed;
  }
  return WaitResult::kReached;
}

MaybeFailure Event::query(uint64_t* value) const {
  std::lock_guard lock(mu_);
  *value = counter_;
  return failure_;
}

void Event::on_complete(uint64_t value, infer_event_callback_fn cb, void* user) {
  MaybeFailure now;
  {
    std::lock_guard lock(mu_);
    if (!failure_ && counter_ < value) {
      pending_.push_back(Callback{value, cb, user});
      return;
    }
    now = failure_;
    ++firing_;
  }
  fire({Callback{value, cb, user}}, now);
}

void Event::fire(const std::vector<Callback>& callbacks, const MaybeFailure& f) {
  if (callbacks.empty()) return;
  // The callback borrows the status for the call; we own it and free it afterwards.
  infer_status* status = to_status(host_, f);
  for (const Callback& cb : callbacks) cb.fn(cb.user, status);
  if (status != nullptr) host_.raw()->status_free(status);
  {
    std::lock_guard lock(mu_);
    --firing_;
  }
  cv_.notify_all();
}

}  // namespace infer::example
