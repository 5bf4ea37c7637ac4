#include "plugin_host/stream.hpp"

#include <utility>
#include <vector>

#include "plugin_host/buffer.hpp"
#include "plugin_host/event.hpp"
#include "plugin_host/plugin_instance.hpp"
#include "plugin_host/status_bridge.hpp"

namespace infer::host {

infer_copy_region host_to_device_region(const void* src, const Buffer& dst, size_t dst_offset,
                                        size_t size_bytes) {
  infer_copy_region r{};
  r.struct_size = sizeof(r);
  r.src_host = src;
  r.dst_buffer = dst.raw();
  r.dst_offset = dst_offset;
  r.size_bytes = size_bytes;
  return r;
}

infer_copy_region device_to_host_region(const Buffer& src, size_t src_offset, void* dst,
                                        size_t size_bytes) {
  infer_copy_region r{};
  r.struct_size = sizeof(r);
  r.src_buffer = src.raw();
  r.src_offset = src_offset;
  r.dst_host = dst;
  r.size_bytes = size_bytes;
  return r;
}

infer_copy_region device_to_device_region(const Buffer& src, size_t src_offset, const Buffer& dst,
                                          size_t dst_offset, size_t size_bytes) {
  infer_copy_region r{};
  r.struct_size = sizeof(r);
  r.src_buffer = src.raw();
  r.src_offset = src_offset;
  r.dst_buffer = dst.raw();
  r.dst_offset = dst_offset;
  r.size_bytes = size_bytes;
  return r;
}

Stream::Stream(std::shared_ptr<const PluginInstance> owner, infer_stream* stream)
    : owner_(std::move(owner)), stream_(stream) {}

Stream::Stream(Stream&& other) noexcept
    : owner_(std::move(other.owner_)), stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::move(other.owner_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

Stream::~Stream() { reset(); }

void Stream::reset() {
  if (stream_ != nullptr) owner_->api().stream_destroy(stream_);
  stream_ = nullptr;
  owner_.reset();
}

Status Stream::copy(std::span<const infer_copy_region> regions) const {
  if (stream_ == nullptr) return invalid_argument("copy on an empty stream handle");
  if (regions.empty()) return Status::ok();
  std::vector<infer_copy_region> batch(regions.begin(), regions.end());
  for (size_t i = 0; i < batch.size(); ++i) {
    infer_copy_region& r = batch[i];
    const bool one_src = (r.src_host != nullptr) != (r.src_buffer != nullptr);
    const bool one_dst = (r.dst_host != nullptr) != (r.dst_buffer != nullptr);
    if (!one_src || !one_dst) {
      return invalid_argument(
          "plugin '" + owner_->name() + "': copy region " + std::to_string(i) +
          " must name exactly one source and one destination (host pointer or buffer)");
    }
    if (r.src_host != nullptr && r.dst_host != nullptr) {
      return invalid_argument("plugin '" + owner_->name() + "': copy region " + std::to_string(i) +
                              " copies host to host; that needs no device");
    }
    r.struct_size = sizeof(infer_copy_region);
  }
  return take_status(owner_->api().copy_batch(stream_, batch.data(), batch.size()),
                     "plugin '" + owner_->name() + "': copy_batch");
}

Status Stream::signal(const Event& event, uint64_t value) const {
  if (stream_ == nullptr || !event.valid())
    return invalid_argument("signal on an empty stream or event handle");
  return take_status(owner_->api().stream_signal(stream_, event.raw(), value),
                     "plugin '" + owner_->name() + "': stream_signal");
}

Status Stream::wait(const Event& event, uint64_t value) const {
  if (stream_ == nullptr || !event.valid())
    return invalid_argument("wait on an empty stream or event handle");
  return take_status(owner_->api().stream_wait(stream_, event.raw(), value),
                     "plugin '" + owner_->name() + "': stream_wait");
}

}  // namespace infer::host
