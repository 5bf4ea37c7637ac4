// How a copy_batch runs:
//  - host -> host-mappable buffer, and host-mappable buffer -> host: a memcpy in the
//    entry's "pre" host step, which runs once all earlier work of the stream is done;
//  - host -> DEVICE_LOCAL: the pre step copies into a staging buffer (host-visible
//    memory), then a vkCmdCopyBuffer moves it to the device;
//  - DEVICE_LOCAL -> host: vkCmdCopyBuffer into a staging buffer, then the entry's
//    "post" host step copies it out once the device is done;
//  - buffer -> buffer: vkCmdCopyBuffer.
// Host memory is therefore only touched in stream order, never at enqueue time (the
// host may enqueue a copy of data that earlier work on the stream still produces).
// The device copies go to the transfer queue when the device has a separate one.
#include "copy.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "device.hpp"
#include "handles.hpp"

namespace infer::vk {
namespace {

struct HostCopy {
  const std::byte* src;
  std::byte* dst;
  size_t size;
};

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

}  // namespace

MaybeFailure enqueue_copies(Stream& stream, const infer_copy_region* regions, size_t count) {
  Device& device = stream.device();
  std::vector<HostCopy> pre_copies, post_copies;  // post: src is in the staging buffer
  std::vector<std::pair<size_t, size_t>> upload_staging;    // (region, staging offset)
  std::vector<std::pair<size_t, size_t>> download_staging;  // (region, staging offset)
  std::vector<size_t> device_copies;
  VkDeviceSize staging_bytes = 0;

  for (size_t i = 0; i < count; ++i) {
    const infer_copy_region& r = regions[i];
    auto invalid = [&](const std::string& what) {
      return failure(INFER_STATUS_INVALID_ARGUMENT,
                     "vulkan: copy_batch region " + std::to_string(i) + ": " + what);
    };
    if (std::optional<std::string> why = sdk::check_copy_region(r)) return invalid(*why);
    const Buffer* src = r.src_buffer ? from_handle(r.src_buffer) : nullptr;
    const Buffer* dst = r.dst_buffer ? from_handle(r.dst_buffer) : nullptr;
    if (src && &src->device() != &device) return invalid("src_buffer belongs to another device");
    if (dst && &dst->device() != &device) return invalid("dst_buffer belongs to another device");
    if (src && !src->contains(r.src_offset, r.size_bytes))
      return invalid("source range [" + std::to_string(r.src_offset) + ", +" +
                     std::to_string(r.size_bytes) + ") exceeds the " +
                     std::to_string(src->size()) + "-byte src_buffer");
    if (dst && !dst->contains(r.dst_offset, r.size_bytes))
      return invalid("destination range [" + std::to_string(r.dst_offset) + ", +" +
                     std::to_string(r.size_bytes) + ") exceeds the " +
                     std::to_string(dst->size()) + "-byte dst_buffer");
    if (r.size_bytes == 0) continue;
    if (src && dst) {
      device_copies.push_back(i);
    } else if (dst) {  // host -> device
      if (dst->host_mappable()) {
        pre_copies.push_back({static_cast<const std::byte*>(r.src_host),
                              dst->mapped() + r.dst_offset, r.size_bytes});
      } else {
        upload_staging.emplace_back(i, staging_bytes);
        staging_bytes = align_up(staging_bytes + r.size_bytes, 16);
      }
    } else {  // device -> host
      if (src->host_mappable()) {
        pre_copies.push_back({src->mapped() + r.src_offset, static_cast<std::byte*>(r.dst_host),
                              r.size_bytes});
      } else {
        download_staging.emplace_back(i, staging_bytes);
        staging_bytes = align_up(staging_bytes + r.size_bytes, 16);
      }
    }
  }

  Work work;
  std::shared_ptr<Buffer> staging;
  if (staging_bytes > 0) {
    std::unique_ptr<Buffer> b;
    if (MaybeFailure f = Buffer::create(device, INFER_MEMORY_HOST_PINNED, staging_bytes, 256,
                                        "a staging buffer of " + std::to_string(staging_bytes) +
                                            " bytes",
                                        &b))
      return f;
    staging = std::move(b);
    work.keep.push_back(staging);
    for (auto [i, off] : upload_staging)
      pre_copies.push_back({static_cast<const std::byte*>(regions[i].src_host),
                            staging->mapped() + off, regions[i].size_bytes});
    for (auto [i, off] : download_staging)
      post_copies.push_back({staging->mapped() + off, static_cast<std::byte*>(regions[i].dst_host),
                             regions[i].size_bytes});
  }

  if (!device_copies.empty() || !upload_staging.empty() || !download_staging.empty()) {
    const QueueKind queue = QueueKind::kTransfer;
    const DeviceFns& vk = device.vk();
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    if (MaybeFailure f = stream.begin_commands(queue, &cmd)) return f;
    for (auto [i, off] : upload_staging) {
      VkBufferCopy c{off, regions[i].dst_offset, regions[i].size_bytes};
      vk.vkCmdCopyBuffer(cmd, staging->handle(), from_handle(regions[i].dst_buffer)->handle(), 1, &c);
    }
    for (size_t i : device_copies) {
      const infer_copy_region& r = regions[i];
      VkBufferCopy c{r.src_offset, r.dst_offset, r.size_bytes};
      vk.vkCmdCopyBuffer(cmd, from_handle(r.src_buffer)->handle(),
                         from_handle(r.dst_buffer)->handle(), 1, &c);
    }
    for (auto [i, off] : download_staging) {
      VkBufferCopy c{regions[i].src_offset, off, regions[i].size_bytes};
      vk.vkCmdCopyBuffer(cmd, from_handle(regions[i].src_buffer)->handle(), staging->handle(), 1, &c);
    }
    // Host reads of staging and of mapped buffers written here happen after completion.
    cmd_barrier_to_host(vk, cmd, device.separate_transfer_queue());
    if (VkResult r = vk.vkEndCommandBuffer(cmd); r != VK_SUCCESS) {
      stream.discard_commands(queue, cmd);
      return vk_failure(r, "vkEndCommandBuffer for copy_batch");
    }
    work.cmd = cmd;
    work.queue = queue;
  }
  if (!pre_copies.empty())
    work.pre = [copies = std::move(pre_copies)]() -> MaybeFailure {
      for (const HostCopy& c : copies) std::memmove(c.dst, c.src, c.size);
      return std::nullopt;
    };
  if (!post_copies.empty())
    work.post = [copies = std::move(post_copies)]() -> MaybeFailure {
      for (const HostCopy& c : copies) std::memcpy(c.dst, c.src, c.size);
      return std::nullopt;
    };
  if (!work.cmd && !work.pre && !work.post) return std::nullopt;  // nothing to copy
  stream.enqueue(std::move(work));
  return std::nullopt;
}

}  // namespace infer::vk
