// RAII wrapper over a plugin's infer_buffer.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "infer/plugin_api.h"

namespace infer::host {

class PluginInstance;

// Move-only. The destructor calls the plugin's buffer_free; the caller must have made
// sure no queued work still uses the buffer (the ABI's rule). Keeps the plugin instance
// (and so the library) alive.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  bool valid() const { return buffer_ != nullptr; }
  infer_buffer* raw() const { return buffer_; }
  size_t size() const { return size_; }
  infer_memory_kind kind() const { return kind_; }
  // True when the buffer wraps host memory without a copy (buffer_import_host): the
  // memory must stay alive until this buffer is freed.
  bool aliases_host_memory() const { return aliases_host_; }

  // A host pointer to the first byte, or nullopt when the plugin has no buffer_map, or
  // it answered with an error (UNSUPPORTED for device-only memory): the host then copies
  // through a stream. Other errors are logged at debug level. Cached after the first
  // successful call.
  std::optional<void*> map();

  // Frees the buffer now (no-op when empty).
  void reset();

 private:
  friend class Device;
  Buffer(std::shared_ptr<const PluginInstance> owner, infer_buffer* buffer, size_t size,
         infer_memory_kind kind, bool aliases_host);

  std::shared_ptr<const PluginInstance> owner_;
  infer_buffer* buffer_ = nullptr;
  size_t size_ = 0;
  infer_memory_kind kind_ = INFER_MEMORY_DEVICE_LOCAL;
  bool aliases_host_ = false;
  void* mapped_ = nullptr;
};

}  // namespace infer::host
