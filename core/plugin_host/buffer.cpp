#include "plugin_host/buffer.hpp"

#include <utility>

#include "plugin_host/plugin_instance.hpp"
#include "plugin_host/status_bridge.hpp"

namespace infer::host {

Buffer::Buffer(std::shared_ptr<const PluginInstance> owner, infer_buffer* buffer, size_t size,
               infer_memory_kind kind, bool aliases_host)
    : owner_(std::move(owner)),
      buffer_(buffer),
      size_(size),
      kind_(kind),
      aliases_host_(aliases_host) {}

Buffer::Buffer(Buffer&& other) noexcept
    : owner_(std::move(other.owner_)),
      buffer_(std::exchange(other.buffer_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      kind_(other.kind_),
      aliases_host_(std::exchange(other.aliases_host_, false)),
      mapped_(std::exchange(other.mapped_, nullptr)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::move(other.owner_);
    buffer_ = std::exchange(other.buffer_, nullptr);
    size_ = std::exchange(other.size_, 0);
    kind_ = other.kind_;
    aliases_host_ = std::exchange(other.aliases_host_, false);
    mapped_ = std::exchange(other.mapped_, nullptr);
  }
  return *this;
}

Buffer::~Buffer() { reset(); }

void Buffer::reset() {
  if (buffer_ != nullptr) owner_->api().buffer_free(buffer_);
  buffer_ = nullptr;
  mapped_ = nullptr;
  size_ = 0;
  owner_.reset();
}

std::optional<void*> Buffer::map() {
  if (buffer_ == nullptr) return std::nullopt;
  if (mapped_ != nullptr) return mapped_;
  const infer_plugin_api& api = owner_->api();
  if (api.buffer_map == nullptr) return std::nullopt;  // fallback: copies through a stream
  void* ptr = nullptr;
  infer_status_code code = INFER_STATUS_OK;
  Status st = take_status(api.buffer_map(buffer_, &ptr), "buffer_map", &code);
  if (!st.is_ok()) {
    if (code != INFER_STATUS_UNSUPPORTED) {
      owner_->services().log(LogLevel::kDebug,
                             st.message() + "; the host copies through a stream instead");
    }
    return std::nullopt;
  }
  if (ptr == nullptr) return std::nullopt;
  mapped_ = ptr;
  return mapped_;
}

}  // namespace infer::host
