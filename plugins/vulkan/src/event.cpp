#include "event.hpp"

#include <utility>

#include "device.hpp"

namespace infer::vk {

Event::Event(Device& device) : Timeline(device.host(), "vulkan"), device_(device) {}

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
  // Callbacks first (CANCELLED, or the sticky failure), while the device is surely alive.
  cancel_callbacks();
  device_.bury(semaphore_);
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
  if (MaybeFailure f = check_host_signal(value)) return f;
  {
    std::lock_guard lock(sem_mu_);
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

bool Event::signal_submitted(uint64_t value) const {
  if (resolved(value)) return true;
  std::lock_guard lock(sem_mu_);
  return max_signal_ >= value;
}

bool Event::claim_gpu_signal(uint64_t value) {
  std::lock_guard lock(sem_mu_);
  if (value <= max_signal_) return false;
  max_signal_ = value;
  ++gpu_pending_;
  return true;
}

void Event::gpu_signal_done(uint64_t value, const MaybeFailure& f, bool never_submitted) {
  {
    std::lock_guard lock(sem_mu_);
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

}  // namespace infer::vk
