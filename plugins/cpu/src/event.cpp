#include "event.hpp"

#include <algorithm>
#include <chrono>

namespace infer::cpu {

Event::~Event() {
  std::vector<Callback> cbs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cbs.swap(callbacks_);
    if (!cbs.empty()) ++firing_;
  }
  if (!cbs.empty())
    run_callbacks(cbs, Status(INFER_STATUS_CANCELLED, "event destroyed before it was signalled"));
}

void Event::run_callbacks(const std::vector<Callback>& cbs, const Status& status) {
  if (cbs.empty()) return;
  infer_status* s = status.is_ok() ? nullptr : host_->status(status.code(), status.message());
  for (const Callback& cb : cbs) cb.fn(cb.user, s);
  if (s != nullptr) host_->raw()->status_free(s);
  {
    std::lock_guard<std::mutex> lock(mu_);
    --firing_;
  }
  cv_.notify_all();
}

void Event::signal(uint64_t value) {
  std::vector<Callback> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (value > value_) value_ = value;
    if (failed_) return;  // callbacks already ran with the failure
    for (size_t i = 0; i < callbacks_.size();) {
      if (callbacks_[i].value <= value_) {
        ready.push_back(callbacks_[i]);
        callbacks_[i] = callbacks_.back();
        callbacks_.pop_back();
      } else {
        ++i;
      }
    }
    if (!ready.empty()) ++firing_;
  }
  cv_.notify_all();
  run_callbacks(ready, Status::ok());
}

void Event::fail(const Status& failure) {
  std::vector<Callback> all;
  Status sticky;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_) {
      failed_ = true;
      failure_ = failure;
    }
    sticky = failure_;
    all.swap(callbacks_);
    if (!all.empty()) ++firing_;
  }
  cv_.notify_all();
  run_callbacks(all, sticky);
}

Status Event::wait(uint64_t value, uint64_t timeout_ns) {
  std::unique_lock<std::mutex> lock(mu_);
  auto done = [&] { return (failed_ || value_ >= value) && firing_ == 0; };
  if (timeout_ns == UINT64_MAX) {
    cv_.wait(lock, done);
  } else if (!cv_.wait_for(lock,
                           std::chrono::nanoseconds(static_cast<int64_t>(
                               std::min<uint64_t>(timeout_ns, static_cast<uint64_t>(INT64_MAX)))),
                           done)) {
    return Status(INFER_STATUS_TIMEOUT,
                  cat("event wait for value ", value, " timed out at value ", value_));
  }
  if (failed_) return failure_;
  return Status::ok();
}

Status Event::query(uint64_t* value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return failure_;
  *value = value_;
  return Status::ok();
}

void Event::on_complete(uint64_t value, infer_event_callback_fn cb, void* user) {
  Status now;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_ && value_ < value) {
      callbacks_.push_back({value, cb, user});
      return;
    }
    now = failed_ ? failure_ : Status::ok();
    ++firing_;
  }
  run_callbacks({{value, cb, user}}, now);
}

}  // namespace infer::cpu
