#include "event.hpp"

#include <string>
#include <utility>

#include "device.hpp"

namespace infer::vk {

MaybeFailure Event::create(Device& device, std::shared_ptr<Event>* out) {
  std::shared_ptr<Event> e(new Event(device));
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  if (VkResult r = device.vk().vkCreateSemaphore(device.handle(), &info, nullptr, &e->semaphore_);
      r != VK_SUCCESS) {
    e->semaphore_ = VK_NULL_HANDLE;
    return vk_failure(r, "vkCreateSemaphore for an event");
  }
  *out = std::move(e);
  return std::nullopt;
}

Event::~Event() {
  cancel_callbacks();
  device_.bury(semaphore_);
}

void Event::cancel_callbacks() {
  std::vector<Callback> left;
  MaybeFailure f;
  {
    std::lock_guard lock(mu_);
    left = std::move(pending_);
    pending_.clear();
    if (left.empty()) return;
    f = failure_ ? failure_
                 : MaybeFailure(failure(INFER_STATUS_CANCELLED,
                                        "vulkan: event destroyed before its callbacks' values "
                                        "were reached"));
    ++firing_;
  }
  fire(left, f);
}

std::vector<Event::Callback> Event::take_ready() {
  std::vector<Callback> ready, still_pending;
  for (const Callback& cb : pending_)
    (failure_ || cb.value <= counter_ ? ready : still_pending).push_back(cb);
  pending_ = std::move(still_pending);
  if (!ready.empty()) ++firing_;  // fire() counts it down
  return ready;
}

void Event::fire(const std::vector<Callback>& callbacks, const MaybeFailure& f) {
  if (callbacks.empty()) return;
  // The callback borrows the status for the call; we own it and free it afterwards.
  infer_status* status = to_status(device_.host(), f);
  for (const Callback& cb : callbacks) cb.fn(cb.user, status);
  if (status != nullptr) device_.host().raw()->status_free(status);
  {
    std::lock_guard lock(mu_);
    --firing_;
  }
  cv_.notify_all();
}

void Event::flush_host_signal() {
  // With no device signal pending, the semaphore holds the highest value that any
  // completed signal set: semaphore_floor_. (The host never reads the semaphore itself;
  // see scheduler.hpp.)
  if (gpu_pending_ > 0 || host_target_ <= semaphore_floor_) return;
  VkSemaphoreSignalInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  info.semaphore = semaphore_;
  info.value = host_target_;
  // A failure here means the device is lost; every waiter then fails through the stream
  // that hits the lost device, so there is nothing better to do than go on.
  if (device_.vk().vkSignalSemaphore(device_.handle(), &info) != VK_SUCCESS) return;
  semaphore_floor_ = host_target_;
}

MaybeFailure Event::signal_from_host(uint64_t value) {
  {
    std::lock_guard lock(mu_);
    if (failure_) return failure_;
    if (value < counter_)
      return failure(INFER_STATUS_INVALID_ARGUMENT,
                     "vulkan: event_signal_host: value " + std::to_string(value) +
                         " is below the counter " + std::to_string(counter_) +
                         " (timeline counters only grow)");
    if (value > max_signal_) {
      max_signal_ = value;
      host_target_ = value;
      flush_host_signal();
    }
  }
  advance(value);
  // Batches that wait for this event may be submittable now.
  device_.scheduler().poke();
  return std::nullopt;
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

bool Event::resolved(uint64_t value) const {
  std::lock_guard lock(mu_);
  return failure_.has_value() || counter_ >= value;
}

MaybeFailure Event::failure_state() const {
  std::lock_guard lock(mu_);
  return failure_;
}

bool Event::signal_submitted(uint64_t value) const {
  std::lock_guard lock(mu_);
  return failure_.has_value() || counter_ >= value || max_signal_ >= value;
}

bool Event::claim_gpu_signal(uint64_t value) {
  std::lock_guard lock(mu_);
  if (value <= max_signal_) return false;
  max_signal_ = value;
  ++gpu_pending_;
  return true;
}

void Event::gpu_signal_done(uint64_t value, const MaybeFailure& f, bool never_submitted) {
  {
    std::lock_guard lock(mu_);
    --gpu_pending_;
    if (never_submitted) {
      // Release device waiters: they proceed on garbage, but the failure below sticks
      // and reaches every consumer through the host-side state.
      if (value > host_target_) host_target_ = value;
    } else if (value > semaphore_floor_) {
      semaphore_floor_ = value;
    }
    flush_host_signal();
  }
  if (f)
    fail(*f);
  else
    advance(value);
}

Event::WaitResult Event::wait(uint64_t value,
                              std::optional<std::chrono::steady_clock::time_point> deadline,
                              Failure* failure_out) {
  std::unique_lock lock(mu_);
  // Done once the value is reached (or the event failed) and no callback released by
  // that is still running: a host may free a callback's data once its wait returns.
  auto done = [&] { return (failure_.has_value() || counter_ >= value) && firing_ == 0; };
  if (deadline) {
    if (!cv_.wait_until(lock, *deadline, done)) return WaitResult::kTimedOut;
  } else {
    cv_.wait(lock, done);
  }
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

}  // namespace infer::vk
