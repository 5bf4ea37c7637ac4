#include "scheduler.hpp"

#include <algorithm>
#include <chrono>

#include "device.hpp"
#include "stream.hpp"

namespace infer::vk {
namespace {

// How long one device wait lasts before the thread looks for pokes (new streams to watch,
// entries a host signal released). Completions of watched streams wake it at once.
constexpr uint64_t kPollNs = 1000 * 1000;

}  // namespace

Scheduler::~Scheduler() { stop(); }

void Scheduler::start() { thread_ = std::thread([this] { run(); }); }

void Scheduler::stop() {
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Scheduler::add_stream(const std::shared_ptr<Stream>& stream) {
  std::lock_guard lock(mu_);
  streams_.push_back(stream);
}

void Scheduler::remove_stream(const Stream* stream) {
  std::lock_guard lock(mu_);
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                [&](const std::shared_ptr<Stream>& s) { return s.get() == stream; }),
                 streams_.end());
}

void Scheduler::poke() {
  {
    std::lock_guard lock(mu_);
    ++pokes_;
  }
  cv_.notify_all();
}

void Scheduler::run() {
  const DeviceFns& vk = device_.vk();
  uint64_t seen = 0;
  for (;;) {
    std::vector<std::shared_ptr<Stream>> streams;
    bool stopping = false;
    {
      std::lock_guard lock(mu_);
      streams = streams_;
      seen = pokes_;
      stopping = stopping_;
    }
    // Service until nothing moves: retiring one stream's entry can resolve an event
    // another stream waits for.
    bool progress = true;
    while (progress) {
      progress = false;
      for (const auto& s : streams) progress |= s->service();
    }
    if (stopping) return;
    device_.collect_garbage();

    std::vector<VkFence> fences;
    for (const auto& s : streams) {
      VkFence fence = VK_NULL_HANDLE;
      if (s->pending_fence(&fence)) fences.push_back(fence);
    }
    if (fences.empty()) {
      // Nothing on the device: sleep until poked. The timeout only bounds the cost of a
      // missed notification.
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(200),
                   [&] { return stopping_ || pokes_ != seen; });
      continue;
    }
    // `streams` keeps every fence in the list alive during the wait (a stream recycles
    // its fences only in service(), on this thread).
    VkResult r = vk.vkWaitForFences(device_.handle(), static_cast<uint32_t>(fences.size()),
                                    fences.data(), VK_FALSE, kPollNs);
    if (r != VK_SUCCESS && r != VK_TIMEOUT) {
      device_.host().log(INFER_LOG_ERROR, std::string("vulkan: scheduler: vkWaitForFences failed: ") +
                                              vk_result_name(r));
      // Back off instead of spinning on a lost device; stop() still ends the loop.
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(10), [&] { return stopping_; });
    }
  }
}

}  // namespace infer::vk
