// The device's scheduler thread: it retires completed stream entries (host-side copy
// steps, event confirmation, completion callbacks, releasing scratch memory) and submits
// entries that had to wait.
//
// One thread per device, like the SDK example's queue thread and for the same reason: it
// stands for the device's completion engine, not a pool doing host work in parallel.
// While device work is in flight it sleeps in vkWaitForFences (any) on the fence of each
// busy stream's oldest batch, for at most kPollNs so that pokes (new work, host signals)
// are seen promptly; otherwise it sleeps on a condition variable that poke() notifies.
//
// Why fences and not host waits on timeline semaphores: on Debian 12, lavapipe (Mesa
// 22.3) emulates timeline semaphores, and repeated timed-out vkWaitSemaphores calls with
// VK_SEMAPHORE_WAIT_ANY_BIT crashed its queue thread (a NULL list link) in our tests;
// and the validation layer 1.3.239 stalls 10 s, reporting UNASSIGNED-VkSemaphore-state-
// timeout, when one thread's vkWaitSemaphores returns for a value another thread's
// vkSignalSemaphore just set (KhronosGroup/Vulkan-ValidationLayers#4649). Fences are
// native everywhere. Timeline semaphores remain what orders work between streams and
// queues on the device; the host only signals them, never waits on or polls them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "failure.hpp"

namespace infer::vk {

class Device;
class Stream;

class Scheduler {
 public:
  explicit Scheduler(Device& device) : device_(device) {}
  ~Scheduler();  // stops the thread
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void start();
  // Stops the thread after a last round of retiring. Streams still registered keep their
  // unfinished entries (the host destroys streams before the plugin).
  void stop();

  void add_stream(const std::shared_ptr<Stream>& stream);
  void remove_stream(const Stream* stream);
  // Wakes the thread to look at every stream again.
  void poke();

 private:
  void run();

  Device& device_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Stream>> streams_;  // guarded by mu_
  uint64_t pokes_ = 0;                            // guarded by mu_
  bool stopping_ = false;                         // guarded by mu_
  std::thread thread_;
};

}  // namespace infer::vk
