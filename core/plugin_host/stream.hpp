// RAII wrapper over a plugin's stream (an ordered queue of work on one device).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "infer/plugin_api.h"
#include "infer/status.hpp"

namespace infer::host {

class PluginInstance;
class Buffer;
class Event;

// Copy regions for Stream::copy (struct_size is filled in).
infer_copy_region host_to_device_region(const void* src, const Buffer& dst, size_t dst_offset,
                                        size_t size_bytes);
infer_copy_region device_to_host_region(const Buffer& src, size_t src_offset, void* dst,
                                        size_t size_bytes);
infer_copy_region device_to_device_region(const Buffer& src, size_t src_offset, const Buffer& dst,
                                          size_t dst_offset, size_t size_bytes);

// Move-only. The destructor calls stream_destroy, which waits for the queued work. Calls
// on one stream must be serialized by the caller (the ABI's rule).
class Stream {
 public:
  Stream() = default;
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  bool valid() const { return stream_ != nullptr; }
  infer_stream* raw() const { return stream_; }

  // Enqueues the regions as one batch (copy_batch). Checks that each region names
  // exactly one source and one destination. Host memory must stay valid until a later
  // signal of this stream has been waited for.
  Status copy(std::span<const infer_copy_region> regions) const;
  // Enqueues: set `event` to `value` when all earlier work is done.
  Status signal(const Event& event, uint64_t value) const;
  // Enqueues: later work waits until `event` reaches `value`.
  Status wait(const Event& event, uint64_t value) const;

  void reset();

 private:
  friend class Device;
  Stream(std::shared_ptr<const PluginInstance> owner, infer_stream* stream);

  std::shared_ptr<const PluginInstance> owner_;
  infer_stream* stream_ = nullptr;
};

}  // namespace infer::host
