// One Vulkan physical device opened as an infer_device: the VkDevice, its compute queue
// (and a transfer-only queue when the device has a separate family), memory types, the
// sub-allocator, the pipeline cache and the scheduler thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "failure.hpp"
#include "memory.hpp"
#include "options.hpp"
#include "pipelines.hpp"
#include "scheduler.hpp"
#include "stream.hpp"

namespace infer::vk {

class Plugin;

struct Queue {
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  std::mutex mu;            // vkQueueSubmit needs the queue externally synchronized
  uint64_t submitted = 0;   // batches submitted so far (guarded by mu): their serials
  std::atomic<uint64_t> completed{0};  // highest serial whose fence was seen signalled
};

// Facts about a physical device read before it is opened, also used to sort devices.
struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  std::string unusable_reason;  // empty when the device can be opened
};

class Device {
 public:
  // Opens `pd`. A device that lacks what the plugin needs (Vulkan 1.1, a compute queue,
  // timeline semaphores) fails with UNAVAILABLE and the reason.
  static MaybeFailure create(Plugin& plugin, VkPhysicalDevice pd, std::unique_ptr<Device>* out);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const sdk::Host& host() const;
  const Options& options() const;
  const DeviceFns& vk() const { return vk_; }
  VkDevice handle() const { return device_; }
  const VkPhysicalDeviceProperties& properties() const { return props_; }
  const VkPhysicalDeviceLimits& limits() const { return props_.limits; }
  std::string name() const { return props_.deviceName; }

  bool shader_int64() const { return shader_int64_; }
  bool storage_8bit() const { return storage_8bit_; }
  bool host_addressable() const { return host_addressable_; }

  Queue& queue(QueueKind kind) { return kind == QueueKind::kTransfer ? *transfer_ : *compute_; }
  bool separate_transfer_queue() const { return transfer_ != compute_; }
  // The distinct queue families buffers are shared between.
  const std::vector<uint32_t>& queue_families() const { return families_; }
  // Submits one batch; *serial (when given) receives its serial on that queue, which the
  // caller reports to note_completed once the batch's fence is signalled.
  MaybeFailure submit(QueueKind kind, const VkSubmitInfo& info, VkFence fence = VK_NULL_HANDLE,
                      uint64_t* serial = nullptr);
  void note_completed(QueueKind kind, uint64_t serial);

  // Destroys a semaphore or fence once the driver is certainly done with it (see the
  // graveyard below); collect_garbage() does the destroying.
  void bury(VkSemaphore semaphore);
  void bury(VkFence fence);
  void collect_garbage();

  // The memory type index for buffers of `kind` among `type_bits`, or -1.
  int memory_type(infer_memory_kind kind, uint32_t type_bits) const;
  VkMemoryPropertyFlags memory_type_flags(uint32_t index) const {
    return mem_props_.memoryTypes[index].propertyFlags;
  }
  VkDeviceSize max_allocation_size() const { return max_allocation_size_; }
  uint64_t device_local_bytes() const;

  MemoryAllocator& memory() { return *memory_; }
  PipelineCache& pipelines() { return *pipelines_; }
  Scheduler& scheduler() { return *scheduler_; }
  // A small buffer bound where a tensor has zero bytes (a descriptor range must not be
  // empty); never read.
  Buffer& dummy_buffer() { return *dummy_; }

  // Copies `size` bytes into `dst` at offset 0 and waits for it: the one-time upload of
  // constants at compile time. Stages through host-visible memory unless `dst` is
  // host-mappable.
  MaybeFailure upload(Buffer& dst, const void* data, size_t size);

  void fill_props(infer_device_props* out) const;
  MaybeFailure fill_copy_cost(infer_copy_direction direction, infer_copy_cost* out) const;
  // Cost model figures for query_capability (see README "Cost model").
  double flops_per_us() const;
  double dispatch_overhead_us() const;

 private:
  explicit Device(Plugin& plugin) : plugin_(plugin) {}
  MaybeFailure open(VkPhysicalDevice pd);

  Plugin& plugin_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props_{};
  VkPhysicalDeviceMemoryProperties mem_props_{};
  VkDeviceSize max_allocation_size_ = VkDeviceSize{1} << 30;
  VkDevice device_ = VK_NULL_HANDLE;
  DeviceFns vk_{};
  bool shader_int64_ = false;
  bool storage_8bit_ = false;
  bool host_addressable_ = false;
  std::unique_ptr<Queue> compute_queue_storage_, transfer_queue_storage_;
  Queue* compute_ = nullptr;
  Queue* transfer_ = nullptr;
  std::vector<uint32_t> families_;
  int type_device_local_ = -1, type_host_visible_ = -1, type_host_pinned_ = -1;

  std::unique_ptr<MemoryAllocator> memory_;
  std::unique_ptr<PipelineCache> pipelines_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<Buffer> dummy_;

  // The graveyard. lavapipe (Mesa 22.3) runs submissions on a submit thread that still
  // touches a batch's semaphores after the batch's fence is signalled (installing its
  // emulated timeline points), so destroying a semaphore as soon as the work that used it
  // is known complete - which the spec allows - crashed the driver. Dead semaphores and
  // fences therefore wait here until, on every queue, a batch submitted after their
  // death has completed: the submit thread handles batches in order, so it is past them.
  struct Dead {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    uint64_t after[2] = {0, 0};  // per distinct queue: the serial that must complete
  };
  void bury(Dead dead);
  std::vector<Queue*> distinct_queues();
  std::mutex graveyard_mu_;
  std::vector<Dead> graveyard_;  // guarded by graveyard_mu_

  std::mutex upload_mu_;
  VkCommandPool upload_pool_ = VK_NULL_HANDLE;  // guarded by upload_mu_
};

// Shorthand for the barriers every recording needs.
// All compute and transfer work recorded before happens-before (and its writes are
// visible to) all compute and transfer work recorded after.
void cmd_barrier(const DeviceFns& vk, VkCommandBuffer cmd);
// Makes every device write of the command buffer visible to host reads after the
// submission completes (mapped buffers, staging read-back). `transfer_only`: the command
// buffer is for a transfer-only queue, which knows no compute stage.
void cmd_barrier_to_host(const DeviceFns& vk, VkCommandBuffer cmd, bool transfer_only = false);

}  // namespace infer::vk
