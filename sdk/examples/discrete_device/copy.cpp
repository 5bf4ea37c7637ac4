#include "copy.hpp"

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "handles.hpp"

namespace infer::example {
namespace {

// A region resolved for the queue thread. Device addresses are resolved there too (from
// buffer + offset), the way a DMA engine is programmed with device addresses.
struct Copy {
  const std::byte* src_host = nullptr;
  const Buffer* src_buffer = nullptr;
  size_t src_offset = 0;
  std::byte* dst_host = nullptr;
  const Buffer* dst_buffer = nullptr;
  size_t dst_offset = 0;
  size_t size = 0;
};

}  // namespace

MaybeFailure enqueue_copies(Stream& stream, const infer_copy_region* regions, size_t count) {
  Device& device = stream.device();
  std::vector<Copy> copies;
  copies.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const infer_copy_region& r = regions[i];
    auto invalid = [&](const std::string& what) {
      return failure(INFER_STATUS_INVALID_ARGUMENT,
                     "example: copy_batch region " + std::to_string(i) + ": " + what);
    };
    // The region's form (struct size, one source, one destination, not host to host) is
    // the SDK's check; which buffers and offsets the device can use is ours.
    if (std::optional<std::string> why = sdk::check_copy_region(r)) return invalid(*why);

    Copy c;
    c.size = r.size_bytes;
    if (r.src_buffer != nullptr) {
      c.src_buffer = from_handle(r.src_buffer);
      if (&c.src_buffer->device() != &device)
        return invalid("src_buffer belongs to another device");
      if (!c.src_buffer->contains(r.src_offset, r.size_bytes))
        return invalid("source range [" + std::to_string(r.src_offset) + ", +" +
                       std::to_string(r.size_bytes) + ") exceeds the " +
                       std::to_string(c.src_buffer->size()) + "-byte src_buffer");
      c.src_offset = r.src_offset;
    } else {
      c.src_host = static_cast<const std::byte*>(r.src_host);
    }
    if (r.dst_buffer != nullptr) {
      c.dst_buffer = from_handle(r.dst_buffer);
      if (&c.dst_buffer->device() != &device)
        return invalid("dst_buffer belongs to another device");
      if (!c.dst_buffer->contains(r.dst_offset, r.size_bytes))
        return invalid("destination range [" + std::to_string(r.dst_offset) + ", +" +
                       std::to_string(r.size_bytes) + ") exceeds the " +
                       std::to_string(c.dst_buffer->size()) + "-byte dst_buffer");
      c.dst_offset = r.dst_offset;
    } else {
      c.dst_host = static_cast<std::byte*>(r.dst_host);
    }
    copies.push_back(c);
  }

  if (copies.empty()) return std::nullopt;
  const auto latency = std::chrono::duration<double, std::micro>(device.options().copy_latency_us);
  stream.enqueue({WorkItem::make_task([copies = std::move(copies), latency]() -> MaybeFailure {
    // The simulated link: a transfer takes at least the configured latency.
    if (latency.count() > 0) std::this_thread::sleep_for(latency);
    for (const Copy& c : copies) {
      const std::byte* src = c.src_buffer ? c.src_buffer->data() + c.src_offset : c.src_host;
      std::byte* dst = c.dst_buffer ? c.dst_buffer->data() + c.dst_offset : c.dst_host;
      if (c.size > 0) std::memmove(dst, src, c.size);  // memmove: regions may overlap
    }
    return std::nullopt;
  })});
  return std::nullopt;
}

}  // namespace infer::example
