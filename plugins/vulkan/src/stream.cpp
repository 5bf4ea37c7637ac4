#include "stream.hpp"

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "device.hpp"

namespace infer::vk {
namespace {

// A host step must not throw into the scheduler thread (nothing would catch it), so an
// escaped exception becomes the step's failure like any other error.
MaybeFailure run_host_step(const std::function<MaybeFailure()>& step) {
  try {
    return step();
  } catch (const std::bad_alloc&) {
    return failure(INFER_STATUS_OUT_OF_MEMORY, "vulkan: out of host memory in a host-side step");
  } catch (const std::exception& e) {
    return failure(INFER_STATUS_INTERNAL, std::string("vulkan: host-side step threw: ") + e.what());
  } catch (...) {
    return failure(INFER_STATUS_INTERNAL, "vulkan: host-side step threw an unknown exception");
  }
}

}  // namespace

MaybeFailure Stream::create(Device& device, std::shared_ptr<Stream>* out) {
  std::shared_ptr<Stream> s(new Stream(device));
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  if (VkResult r = device.vk().vkCreateSemaphore(device.handle(), &info, nullptr, &s->timeline_);
      r != VK_SUCCESS) {
    s->timeline_ = VK_NULL_HANDLE;
    return vk_failure(r, "vkCreateSemaphore for a stream");
  }
  for (int q = 0; q < 2; ++q) {
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = device.queue(static_cast<QueueKind>(q)).family;
    if (VkResult r = device.vk().vkCreateCommandPool(device.handle(), &pool, nullptr, &s->pools_[q]);
        r != VK_SUCCESS) {
      s->pools_[q] = VK_NULL_HANDLE;
      return vk_failure(r, "vkCreateCommandPool for a stream");
    }
  }
  *out = std::move(s);
  return std::nullopt;
}

Stream::~Stream() {
  const DeviceFns& vk = device_.vk();
  for (VkFence f : free_fences_) device_.bury(f);
  // Destroying a pool frees its command buffers.
  for (VkCommandPool pool : pools_)
    if (pool != VK_NULL_HANDLE) vk.vkDestroyCommandPool(device_.handle(), pool, nullptr);
  device_.bury(timeline_);
}

void Stream::add_wait(EventRef wait) {
  std::lock_guard lock(mu_);
  next_waits_.push_back(std::move(wait));
}

MaybeFailure Stream::begin_commands(QueueKind queue, VkCommandBuffer* out) {
  const int q = static_cast<int>(queue);
  const DeviceFns& vk = device_.vk();
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  {
    std::lock_guard lock(cmd_mu_);
    if (!recycled_[q].empty()) {
      cmd = recycled_[q].back();
      recycled_[q].pop_back();
    }
  }
  if (cmd == VK_NULL_HANDLE) {
    VkCommandBufferAllocateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    info.commandPool = pools_[q];
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    if (VkResult r = vk.vkAllocateCommandBuffers(device_.handle(), &info, &cmd); r != VK_SUCCESS)
      return vk_failure(r, "vkAllocateCommandBuffers");
  } else if (VkResult r = vk.vkResetCommandBuffer(cmd, 0); r != VK_SUCCESS) {
    return vk_failure(r, "vkResetCommandBuffer");
  }
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (VkResult r = vk.vkBeginCommandBuffer(cmd, &begin); r != VK_SUCCESS) {
    discard_commands(queue, cmd);
    return vk_failure(r, "vkBeginCommandBuffer");
  }
  *out = cmd;
  return std::nullopt;
}

void Stream::discard_commands(QueueKind queue, VkCommandBuffer cmd) {
  if (cmd == VK_NULL_HANDLE) return;
  std::lock_guard lock(cmd_mu_);
  recycled_[static_cast<int>(queue)].push_back(cmd);
}

void Stream::enqueue(Work work) {
  {
    std::lock_guard lock(mu_);
    Entry e;
    e.work = std::move(work);
    // stream_wait's waits come first: they were enqueued before this work.
    if (!next_waits_.empty()) {
      for (EventRef& w : e.work.waits) next_waits_.push_back(std::move(w));
      e.work.waits = std::move(next_waits_);
      next_waits_.clear();
    }
    e.done_value = ++last_value_;
    entries_.push_back(std::move(e));
    pump_locked();
  }
  // Whatever could not be submitted now (a wait not yet signalled, a host step that
  // must wait for earlier work) is the scheduler's to finish.
  device_.scheduler().poke();
}

VkFence Stream::take_fence() {
  if (!free_fences_.empty()) {
    VkFence f = free_fences_.back();
    free_fences_.pop_back();
    return f;
  }
  VkFenceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkFence f = VK_NULL_HANDLE;
  if (device_.vk().vkCreateFence(device_.handle(), &info, nullptr, &f) != VK_SUCCESS)
    return VK_NULL_HANDLE;
  return f;
}

bool Stream::pump_locked() {
  bool progress = false;
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.submitted) continue;
    // Entries are submitted in order: the first unsubmitted one decides.
    if (e.work.pre && !e.pre_done) {
      // The host step reads or writes memory that earlier work may still use: it waits
      // until everything before it has retired and its waits are resolved.
      if (i != 0) return progress;
      bool failed_wait = false;
      for (const EventRef& w : e.work.waits) {
        if (!w.event->resolved(w.value)) return progress;
        if (w.event->failure_state()) failed_wait = true;
      }
      // A poisoned stream skips work up to its next signal (the retire reports it).
      if (!failed_wait && !poison_ && !e.work.failure) {
        if (MaybeFailure f = run_host_step(e.work.pre)) e.work.failure = std::move(f);
      }
      e.pre_done = true;
    }
    for (const EventRef& w : e.work.waits)
      if (!w.event->signal_submitted(w.value)) return progress;
    submit_locked(e);
    progress = true;
  }
  return progress;
}

void Stream::submit_locked(Entry& e) {
  std::vector<VkSemaphore> wait_sems;
  std::vector<uint64_t> wait_values;
  std::vector<VkPipelineStageFlags> wait_stages;
  if (e.done_value > 1) {
    wait_sems.push_back(timeline_);
    wait_values.push_back(e.done_value - 1);
  }
  for (const EventRef& w : e.work.waits) {
    // A confirmed value needs no device wait; a failed event's semaphore may never get
    // there (the failure reaches this entry at retire instead).
    if (w.event->resolved(w.value)) continue;
    wait_sems.push_back(w.event->semaphore());
    wait_values.push_back(w.value);
  }
  wait_stages.assign(wait_sems.size(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);

  std::vector<VkSemaphore> signal_sems{timeline_};
  std::vector<uint64_t> signal_values{e.done_value};
  e.claimed.assign(e.work.signals.size(), false);
  for (size_t i = 0; i < e.work.signals.size(); ++i) {
    const EventRef& s = e.work.signals[i];
    if (!s.event->claim_gpu_signal(s.value)) continue;
    e.claimed[i] = true;
    signal_sems.push_back(s.event->semaphore());
    signal_values.push_back(s.value);
  }

  VkTimelineSemaphoreSubmitInfo timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  timeline.pWaitSemaphoreValues = wait_values.data();
  timeline.signalSemaphoreValueCount = static_cast<uint32_t>(signal_values.size());
  timeline.pSignalSemaphoreValues = signal_values.data();
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &timeline;
  submit.waitSemaphoreCount = static_cast<uint32_t>(wait_sems.size());
  submit.pWaitSemaphores = wait_sems.data();
  submit.pWaitDstStageMask = wait_stages.data();
  submit.commandBufferCount = e.work.cmd != VK_NULL_HANDLE ? 1 : 0;
  submit.pCommandBuffers = &e.work.cmd;
  submit.signalSemaphoreCount = static_cast<uint32_t>(signal_sems.size());
  submit.pSignalSemaphores = signal_sems.data();
  e.fence = take_fence();
  MaybeFailure f = e.fence == VK_NULL_HANDLE
                       ? MaybeFailure(failure(INFER_STATUS_OUT_OF_MEMORY,
                                              "vulkan: vkCreateFence for a submission failed"))
                       : device_.submit(e.work.queue, submit, e.fence, &e.serial);
  if (f) {
    if (!e.work.failure) e.work.failure = std::move(f);
    e.never_submitted = true;
  }
  e.submitted = true;
}

bool Stream::pending_fence(VkFence* fence) const {
  std::lock_guard lock(mu_);
  if (entries_.empty() || !entries_.front().submitted || entries_.front().never_submitted)
    return false;
  *fence = entries_.front().fence;
  return true;
}

bool Stream::service() {
  bool progress = false;
  for (;;) {
    Entry e;
    {
      std::lock_guard lock(mu_);
      if (pump_locked()) progress = true;
      if (entries_.empty() || !entries_.front().submitted) break;
      Entry& front = entries_.front();
      if (front.never_submitted) {
        // Nothing will signal this entry's value: everything before it has retired, so
        // no device signal of the stream semaphore is pending and the host may set it,
        // keeping the chain going for the entries behind.
        VkSemaphoreSignalInfo info{};
        info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
        info.semaphore = timeline_;
        info.value = front.done_value;
        device_.vk().vkSignalSemaphore(device_.handle(), &info);
      } else if (device_.vk().vkGetFenceStatus(device_.handle(), front.fence) != VK_SUCCESS) {
        // VK_NOT_READY; a lost device shows up as an error here and at the next
        // submission, which fails the events that depend on it.
        break;
      }
      // The failure state of what this entry waited for must be known before it retires:
      // a producer on another stream retires first.
      bool waits_known = true;
      for (const EventRef& w : front.work.waits)
        if (!w.event->resolved(w.value)) waits_known = false;
      if (!waits_known) break;
      e = std::move(front);
      entries_.pop_front();
      if (!e.never_submitted) device_.note_completed(e.work.queue, e.serial);
      if (e.fence != VK_NULL_HANDLE) {
        device_.vk().vkResetFences(device_.handle(), 1, &e.fence);
        free_fences_.push_back(e.fence);
        e.fence = VK_NULL_HANDLE;
      }
    }
    retire(e);
    progress = true;
    std::lock_guard lock(mu_);
    if (entries_.empty()) drained_cv_.notify_all();
  }
  return progress;
}

void Stream::retire(Entry& e) {
  MaybeFailure f = std::move(e.work.failure);
  for (const EventRef& w : e.work.waits) {
    if (f) break;
    f = w.event->failure_state();
  }
  {
    std::lock_guard lock(mu_);
    if (!f && poison_) f = poison_;
  }
  if (!f && e.work.post) f = run_host_step(e.work.post);
  {
    std::lock_guard lock(mu_);
    if (f && e.work.signals.empty()) {
      if (!poison_) poison_ = f;  // reported by the next signal
    } else {
      poison_.reset();  // reported now (or there was nothing to report)
    }
  }
  for (size_t i = 0; i < e.work.signals.size(); ++i) {
    const EventRef& s = e.work.signals[i];
    if (e.claimed[i]) {
      s.event->gpu_signal_done(s.value, f, e.never_submitted);
    } else if (f) {
      s.event->fail(*f);
    } else {
      s.event->advance(s.value);
    }
  }
  discard_commands(e.work.queue, e.work.cmd);
  e.work.cmd = VK_NULL_HANDLE;
  e.work.keep.clear();  // scratch memory, staging, descriptor pools go now
}

void Stream::drain() {
  device_.scheduler().poke();
  std::unique_lock lock(mu_);
  drained_cv_.wait(lock, [&] { return entries_.empty(); });
}

}  // namespace infer::vk
