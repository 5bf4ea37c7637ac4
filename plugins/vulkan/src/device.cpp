#include "device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "plugin.hpp"

namespace infer::vk {
namespace {

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

const char* vendor_name(uint32_t id) {
  switch (id) {
    case 0x1002: return "AMD";
    case 0x10DE: return "NVIDIA";
    case 0x8086: return "Intel";
    case 0x106B: return "Apple";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x10005: return "Mesa";
    default: return nullptr;
  }
}

}  // namespace

const sdk::Host& Device::host() const { return plugin_.host(); }
const Options& Device::options() const { return plugin_.options(); }

MaybeFailure Device::create(Plugin& plugin, VkPhysicalDevice pd, std::unique_ptr<Device>* out) {
  std::unique_ptr<Device> d(new Device(plugin));
  if (MaybeFailure f = d->open(pd)) return f;
  *out = std::move(d);
  return std::nullopt;
}

MaybeFailure Device::open(VkPhysicalDevice pd) {
  const InstanceFns& ifn = plugin_.ifns();
  physical_ = pd;
  ifn.vkGetPhysicalDeviceProperties(pd, &props_);
  ifn.vkGetPhysicalDeviceMemoryProperties(pd, &mem_props_);
  const std::string label = std::string("vulkan: device '") + props_.deviceName + "'";
  auto unusable = [&](const std::string& why) {
    return failure(INFER_STATUS_UNAVAILABLE, label + " is not usable: " + why);
  };
  if (props_.apiVersion < VK_API_VERSION_1_1) return unusable("it supports only Vulkan 1.0");
  const uint32_t api = std::min(props_.apiVersion, plugin_.api_version());
  const bool core12 = api >= VK_API_VERSION_1_2;

  uint32_t n = 0;
  ifn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  ifn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  exts.resize(n);
  std::vector<const char*> enabled_exts;
  if (!core12) {
    if (!has_extension(exts, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME))
      return unusable("no timeline semaphores (Vulkan 1.2 or VK_KHR_timeline_semaphore)");
    enabled_exts.push_back(VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
  }
  // The portability subset (MoltenVK) must be enabled whenever the device offers it.
  if (has_extension(exts, "VK_KHR_portability_subset"))
    enabled_exts.push_back("VK_KHR_portability_subset");

  // ---- Features ----------------------------------------------------------------------
  VkPhysicalDevice8BitStorageFeatures f8{};
  f8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
  const bool ext8 = !core12 && has_extension(exts, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  timeline.pNext = (core12 || ext8) ? &f8 : nullptr;
  VkPhysicalDeviceFeatures2 features2{};
  features2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features2.pNext = &timeline;
  ifn.vkGetPhysicalDeviceFeatures2(pd, &features2);
  if (!timeline.timelineSemaphore)
    return unusable("the timelineSemaphore feature is not supported");
  shader_int64_ = features2.features.shaderInt64 == VK_TRUE;
  storage_8bit_ = (core12 || ext8) && f8.storageBuffer8BitAccess == VK_TRUE;
  if (ext8 && storage_8bit_) enabled_exts.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);

  // Enable exactly what is used.
  VkPhysicalDevice8BitStorageFeatures en8{};
  en8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  en8.storageBuffer8BitAccess = storage_8bit_ ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceTimelineSemaphoreFeatures en_timeline{};
  en_timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
  en_timeline.timelineSemaphore = VK_TRUE;
  en_timeline.pNext = storage_8bit_ ? &en8 : nullptr;
  VkPhysicalDeviceFeatures2 en_features{};
  en_features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  en_features.pNext = &en_timeline;
  en_features.features.shaderInt64 = shader_int64_ ? VK_TRUE : VK_FALSE;

  // ---- Queues ------------------------------------------------------------------------
  ifn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  ifn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
  int compute_family = -1, transfer_family = -1;
  for (uint32_t i = 0; i < n; ++i) {
    const VkQueueFlags fl = families[i].queueFlags;
    if (compute_family < 0 && (fl & VK_QUEUE_COMPUTE_BIT)) compute_family = static_cast<int>(i);
    // A transfer-only family is the copy engine (DMA) of discrete GPUs.
    if (transfer_family < 0 && (fl & VK_QUEUE_TRANSFER_BIT) &&
        !(fl & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)))
      transfer_family = static_cast<int>(i);
  }
  if (compute_family < 0) return unusable("no queue family supports compute");
  const float priority = 1.0f;
  std::vector<VkDeviceQueueCreateInfo> queue_infos;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = static_cast<uint32_t>(compute_family);
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  queue_infos.push_back(qi);
  if (transfer_family >= 0) {
    qi.queueFamilyIndex = static_cast<uint32_t>(transfer_family);
    queue_infos.push_back(qi);
  }

  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &en_features;
  info.queueCreateInfoCount = static_cast<uint32_t>(queue_infos.size());
  info.pQueueCreateInfos = queue_infos.data();
  info.enabledExtensionCount = static_cast<uint32_t>(enabled_exts.size());
  info.ppEnabledExtensionNames = enabled_exts.data();
  if (VkResult r = ifn.vkCreateDevice(pd, &info, nullptr, &device_); r != VK_SUCCESS) {
    device_ = VK_NULL_HANDLE;
    return unusable(std::string("vkCreateDevice failed: ") + vk_result_name(r));
  }
  std::string error;
  if (!load_device_fns(ifn, device_, !core12, &vk_, &error)) return unusable(error);

  compute_queue_storage_ = std::make_unique<Queue>();
  compute_ = compute_queue_storage_.get();
  compute_->family = static_cast<uint32_t>(compute_family);
  vk_.vkGetDeviceQueue(device_, compute_->family, 0, &compute_->queue);
  families_.push_back(compute_->family);
  if (transfer_family >= 0) {
    transfer_queue_storage_ = std::make_unique<Queue>();
    transfer_ = transfer_queue_storage_.get();
    transfer_->family = static_cast<uint32_t>(transfer_family);
    vk_.vkGetDeviceQueue(device_, transfer_->family, 0, &transfer_->queue);
    families_.push_back(transfer_->family);
  } else {
    transfer_ = compute_;
  }

  // ---- Memory types ------------------------------------------------------------------
  VkPhysicalDeviceMaintenance3Properties m3{};
  m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  VkPhysicalDeviceProperties2 props2{};
  props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props2.pNext = &m3;
  ifn.vkGetPhysicalDeviceProperties2(pd, &props2);
  if (m3.maxMemoryAllocationSize > 0) max_allocation_size_ = m3.maxMemoryAllocationSize;

  // Which types a storage buffer may live in (the same for every size and usage mix we
  // create), from a probe buffer.
  VkBufferCreateInfo probe_info{};
  probe_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  probe_info.size = 256;
  probe_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  probe_info.sharingMode =
      families_.size() > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE;
  probe_info.queueFamilyIndexCount = families_.size() > 1 ? uint32_t(families_.size()) : 0;
  probe_info.pQueueFamilyIndices = families_.size() > 1 ? families_.data() : nullptr;
  VkBuffer probe = VK_NULL_HANDLE;
  if (VkResult r = vk_.vkCreateBuffer(device_, &probe_info, nullptr, &probe); r != VK_SUCCESS)
    return unusable(std::string("vkCreateBuffer failed: ") + vk_result_name(r));
  VkMemoryRequirements req{};
  vk_.vkGetBufferMemoryRequirements(device_, probe, &req);
  vk_.vkDestroyBuffer(device_, probe, nullptr);

  // The first type (drivers list the preferred ones first) that has `need`, preferring
  // one that also has `prefer` and lacks `avoid`.
  auto pick = [&](VkMemoryPropertyFlags need, VkMemoryPropertyFlags prefer,
                  VkMemoryPropertyFlags avoid) {
    int best = -1, best_score = -1;
    for (uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i) {
      if (!(req.memoryTypeBits & (1u << i))) continue;
      const VkMemoryPropertyFlags fl = mem_props_.memoryTypes[i].propertyFlags;
      if ((fl & need) != need) continue;
      const int score = ((fl & prefer) == prefer ? 2 : 0) + ((fl & avoid) == 0 ? 1 : 0);
      if (score > best_score) {
        best = static_cast<int>(i);
        best_score = score;
      }
    }
    return best;
  };
  const VkMemoryPropertyFlags kHost =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  type_device_local_ = pick(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, 0);
  if (type_device_local_ < 0) type_device_local_ = pick(0, 0, 0);
  type_host_visible_ = pick(kHost, 0, 0);
  // Staging and pinned memory: cached host memory reads back fast; system RAM (not a
  // small device-local window) is where big staging buffers belong.
  type_host_pinned_ = pick(kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                           VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (type_device_local_ < 0 || type_host_visible_ < 0)
    return unusable("no device-local or no host-visible coherent memory type for storage buffers");
  if (type_host_pinned_ < 0) type_host_pinned_ = type_host_visible_;
  host_addressable_ = options().unified_memory &&
                      (memory_type_flags(uint32_t(type_device_local_)) & kHost) == kHost;
  if (options().unified_memory && !host_addressable_)
    host().log(INFER_LOG_WARNING, label + ": option unified_memory ignored: its device-local "
                                          "memory is not host-visible");

  memory_ = std::make_unique<MemoryAllocator>(*this);
  pipelines_ = std::make_unique<PipelineCache>(*this);
  if (MaybeFailure f = pipelines_->init()) return f;
  if (MaybeFailure f = Buffer::create(*this, INFER_MEMORY_DEVICE_LOCAL, 256, 256,
                                      "the placeholder buffer", &dummy_))
    return f;
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool.queueFamilyIndex = transfer_->family;
  if (VkResult r = vk_.vkCreateCommandPool(device_, &pool, nullptr, &upload_pool_);
      r != VK_SUCCESS) {
    upload_pool_ = VK_NULL_HANDLE;
    return vk_failure(r, "vkCreateCommandPool");
  }
  scheduler_ = std::make_unique<Scheduler>(*this);
  scheduler_->start();
  return std::nullopt;
}

Device::~Device() {
  if (scheduler_) scheduler_->stop();
  if (device_ != VK_NULL_HANDLE) vk_.vkDeviceWaitIdle(device_);
  scheduler_.reset();
  // The device is idle: everything buried can go.
  for (const Dead& d : graveyard_) {
    if (d.semaphore != VK_NULL_HANDLE) vk_.vkDestroySemaphore(device_, d.semaphore, nullptr);
    if (d.fence != VK_NULL_HANDLE) vk_.vkDestroyFence(device_, d.fence, nullptr);
  }
  graveyard_.clear();
  if (upload_pool_ != VK_NULL_HANDLE) vk_.vkDestroyCommandPool(device_, upload_pool_, nullptr);
  dummy_.reset();
  pipelines_.reset();
  memory_.reset();
  if (device_ != VK_NULL_HANDLE) vk_.vkDestroyDevice(device_, nullptr);
}

MaybeFailure Device::submit(QueueKind kind, const VkSubmitInfo& info, VkFence fence,
                            uint64_t* serial) {
  Queue& q = queue(kind);
  std::lock_guard lock(q.mu);
  if (VkResult r = vk_.vkQueueSubmit(q.queue, 1, &info, fence); r != VK_SUCCESS)
    return vk_failure(r, "vkQueueSubmit");
  ++q.submitted;
  if (serial) *serial = q.submitted;
  return std::nullopt;
}

void Device::note_completed(QueueKind kind, uint64_t serial) {
  std::atomic<uint64_t>& c = queue(kind).completed;
  uint64_t seen = c.load();
  while (serial > seen && !c.compare_exchange_weak(seen, serial)) {
  }
}

std::vector<Queue*> Device::distinct_queues() {
  std::vector<Queue*> qs{compute_};
  if (transfer_ != compute_) qs.push_back(transfer_);
  return qs;
}

void Device::bury(Dead dead) {
  std::vector<Queue*> qs = distinct_queues();
  for (size_t i = 0; i < qs.size(); ++i) {
    std::lock_guard lock(qs[i]->mu);
    // Nothing submitted yet on this queue: nothing there can still refer to the object.
    dead.after[i] = qs[i]->submitted == 0 ? 0 : qs[i]->submitted + 1;
  }
  std::lock_guard lock(graveyard_mu_);
  graveyard_.push_back(dead);
}

void Device::bury(VkSemaphore semaphore) {
  if (semaphore == VK_NULL_HANDLE) return;
  Dead d;
  d.semaphore = semaphore;
  bury(d);
}

void Device::bury(VkFence fence) {
  if (fence == VK_NULL_HANDLE) return;
  Dead d;
  d.fence = fence;
  bury(d);
}

void Device::collect_garbage() {
  std::vector<Queue*> qs = distinct_queues();
  std::vector<Dead> ready;
  {
    std::lock_guard lock(graveyard_mu_);
    auto keep = std::partition(graveyard_.begin(), graveyard_.end(), [&](const Dead& d) {
      for (size_t i = 0; i < qs.size(); ++i)
        if (d.after[i] > qs[i]->completed.load()) return true;
      return false;
    });
    ready.assign(keep, graveyard_.end());
    graveyard_.erase(keep, graveyard_.end());
  }
  for (const Dead& d : ready) {
    if (d.semaphore != VK_NULL_HANDLE) vk_.vkDestroySemaphore(device_, d.semaphore, nullptr);
    if (d.fence != VK_NULL_HANDLE) vk_.vkDestroyFence(device_, d.fence, nullptr);
  }
}

int Device::memory_type(infer_memory_kind kind, uint32_t type_bits) const {
  int t = -1;
  switch (kind) {
    case INFER_MEMORY_DEVICE_LOCAL: t = type_device_local_; break;
    case INFER_MEMORY_HOST_VISIBLE: t = type_host_visible_; break;
    case INFER_MEMORY_HOST_PINNED: t = type_host_pinned_; break;
    case INFER_MEMORY_KIND_MAX_ENUM: break;  // never a value (plugin_api.h)
  }
  return t >= 0 && (type_bits & (1u << t)) ? t : -1;
}

uint64_t Device::device_local_bytes() const {
  uint64_t total = 0;
  for (uint32_t i = 0; i < mem_props_.memoryHeapCount; ++i)
    if (mem_props_.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      total = std::max<uint64_t>(total, mem_props_.memoryHeaps[i].size);
  return total;
}

MaybeFailure Device::upload(Buffer& dst, const void* data, size_t size) {
  if (size == 0) return std::nullopt;
  if (dst.host_mappable()) {
    std::memcpy(dst.mapped(), data, size);
    return std::nullopt;
  }
  std::unique_ptr<Buffer> staging;
  if (MaybeFailure f = Buffer::create(*this, INFER_MEMORY_HOST_PINNED, size, 256,
                                      "a staging buffer of " + std::to_string(size) + " bytes",
                                      &staging))
    return f;
  std::memcpy(staging->mapped(), data, size);

  std::lock_guard lock(upload_mu_);
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = upload_pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (VkResult r = vk_.vkAllocateCommandBuffers(device_, &alloc, &cmd); r != VK_SUCCESS)
    return vk_failure(r, "vkAllocateCommandBuffers");
  VkFence fence = VK_NULL_HANDLE;
  auto cleanup = [&] {
    bury(fence);
    vk_.vkFreeCommandBuffers(device_, upload_pool_, 1, &cmd);
  };
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_.vkBeginCommandBuffer(cmd, &begin);
  VkBufferCopy region{0, 0, size};
  vk_.vkCmdCopyBuffer(cmd, staging->handle(), dst.handle(), 1, &region);
  if (VkResult r = vk_.vkEndCommandBuffer(cmd); r != VK_SUCCESS) {
    cleanup();
    return vk_failure(r, "vkEndCommandBuffer");
  }
  VkFenceCreateInfo fence_info{};
  fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if (VkResult r = vk_.vkCreateFence(device_, &fence_info, nullptr, &fence); r != VK_SUCCESS) {
    fence = VK_NULL_HANDLE;
    cleanup();
    return vk_failure(r, "vkCreateFence");
  }
  VkSubmitInfo submit_info{};
  submit_info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit_info.commandBufferCount = 1;
  submit_info.pCommandBuffers = &cmd;
  uint64_t serial = 0;
  if (MaybeFailure f = submit(QueueKind::kTransfer, submit_info, fence, &serial)) {
    cleanup();
    return f;
  }
  // The fence wait makes the copy complete; later submissions that read the buffer are
  // ordered after it by that host-side wait (a submission made after a fence wait sees
  // the writes the fenced batch made available, which a queue copy always does).
  VkResult r = vk_.vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX);
  if (r == VK_SUCCESS) note_completed(QueueKind::kTransfer, serial);
  cleanup();
  if (r != VK_SUCCESS) return vk_failure(r, "vkWaitForFences for a constant upload");
  return std::nullopt;
}

void Device::fill_props(infer_device_props* out) const {
  if (INFER_HAS_FIELD(out, infer_device_props, name))
    std::snprintf(out->name, sizeof out->name, "%.*s", static_cast<int>(sizeof out->name - 1),
                  props_.deviceName);
  if (INFER_HAS_FIELD(out, infer_device_props, vendor)) {
    const char* v = vendor_name(props_.vendorID);
    if (v)
      std::snprintf(out->vendor, sizeof out->vendor, "%s", v);
    else
      std::snprintf(out->vendor, sizeof out->vendor, "0x%04x", props_.vendorID);
  }
  if (INFER_HAS_FIELD(out, infer_device_props, kind)) {
    switch (props_.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_CPU: out->kind = INFER_DEVICE_CPU; break;
      case VK_PHYSICAL_DEVICE_TYPE_OTHER: out->kind = INFER_DEVICE_ACCELERATOR; break;
      default: out->kind = INFER_DEVICE_GPU; break;
    }
  }
  if (INFER_HAS_FIELD(out, infer_device_props, memory_bytes))
    out->memory_bytes = device_local_bytes();
  // Vulkan exposes no core count; the subgroup-sized lanes per workgroup limit is the
  // nearest portable figure, so report a coarse count from the device type instead.
  if (INFER_HAS_FIELD(out, infer_device_props, compute_units)) {
    uint32_t units = 1;
    switch (props_.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: units = 32; break;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: units = 8; break;
      case VK_PHYSICAL_DEVICE_TYPE_CPU: units = std::max(1u, std::thread::hardware_concurrency()); break;
      default: units = 4; break;
    }
    out->compute_units = units;
  }
  if (INFER_HAS_FIELD(out, infer_device_props, host_addressable))
    out->host_addressable = host_addressable_;
}

double Device::flops_per_us() const {
  // Rough sustained float32 throughput of our shaders, not the peak. lavapipe was
  // measured on this project's 2-core CI machine: an Add of 4M elements takes about
  // 15 ms (0.3 G elements/s, memory-bound), GEMM-like work a few GFLOP/s; 1 GFLOP/s is
  // the compromise. GPUs are set by class. See README "Cost model".
  switch (props_.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 2.0e6;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 2.0e5;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 1.0e5;
    default: return 1.0e3;
  }
}

double Device::dispatch_overhead_us() const {
  return props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 40.0 : 8.0;
}

MaybeFailure Device::fill_copy_cost(infer_copy_direction direction, infer_copy_cost* out) const {
  // Figures by device class: discrete GPUs copy over PCIe (about 12 GB/s) and within VRAM
  // much faster; integrated GPUs and lavapipe copy within system memory, with the
  // submission round trip as the latency.
  const bool discrete = props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  double bytes_per_us = discrete ? 12000.0 : 8000.0;
  double latency_us = discrete ? 15.0 : 30.0;
  switch (direction) {
    case INFER_COPY_HOST_TO_DEVICE:
    case INFER_COPY_DEVICE_TO_HOST:
      break;
    case INFER_COPY_DEVICE_TO_DEVICE:
      bytes_per_us = discrete ? 300000.0 : 10000.0;
      break;
    default:
      return failure(INFER_STATUS_INVALID_ARGUMENT, "vulkan: copy_cost: unknown copy direction " +
                                                        std::to_string(static_cast<int>(direction)));
  }
  if (INFER_HAS_FIELD(out, infer_copy_cost, bandwidth_bytes_per_us))
    out->bandwidth_bytes_per_us = bytes_per_us;
  if (INFER_HAS_FIELD(out, infer_copy_cost, latency_us)) out->latency_us = latency_us;
  return std::nullopt;
}

void cmd_barrier(const DeviceFns& vk, VkCommandBuffer cmd) {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vk.vkCmdPipelineBarrier(cmd, stages, stages, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void cmd_barrier_to_host(const DeviceFns& vk, VkCommandBuffer cmd, bool transfer_only) {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  VkPipelineStageFlags src = VK_PIPELINE_STAGE_TRANSFER_BIT;
  if (!transfer_only) {
    b.srcAccessMask |= VK_ACCESS_SHADER_WRITE_BIT;
    src |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  }
  b.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk.vkCmdPipelineBarrier(cmd, src, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0, nullptr, 0, nullptr);
}

}  // namespace infer::vk
