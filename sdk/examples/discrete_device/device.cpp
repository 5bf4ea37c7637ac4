#include "device.hpp"

#include <cstdio>
#include <string>

namespace infer::example {
namespace {

// The DMA set-up cost the simulated link pretends to have on every transfer, on top of
// the copy_latency_us option. It is a cost-model figure only: the copy engine sleeps for
// copy_latency_us, not for this.
constexpr double kLinkSetupLatencyUs = 10.0;
// Copies inside device memory are much faster than over the (simulated) PCIe link.
constexpr double kDeviceToDeviceSpeedup = 20.0;

std::string mib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

MaybeFailure Device::reserve(uint64_t bytes, const std::string& what) {
  std::lock_guard lock(mu_);
  const uint64_t capacity = options_.memory_bytes;
  if (bytes > capacity - used_bytes_) {
    return failure(INFER_STATUS_OUT_OF_MEMORY,
                   "example: out of device memory allocating " + what + " (" + mib(bytes) + "): " +
                       mib(used_bytes_) + " of " + mib(capacity) + " in use (option memory_mb)");
  }
  used_bytes_ += bytes;
  return std::nullopt;
}

void Device::release(uint64_t bytes) {
  std::lock_guard lock(mu_);
  used_bytes_ -= bytes;
}

uint64_t Device::used_bytes() const {
  std::lock_guard lock(mu_);
  return used_bytes_;
}

void Device::fill_props(infer_device_props* out) const {
  // The host says how large its struct is; a host built against an older ABI minor has a
  // shorter struct, and writing past its end would corrupt the host's memory. So every
  // field is written only when the host's struct_size covers it.
  if (INFER_HAS_FIELD(out, infer_device_props, name))
    std::snprintf(out->name, sizeof out->name, "%s", "example discrete device");
  if (INFER_HAS_FIELD(out, infer_device_props, vendor))
    std::snprintf(out->vendor, sizeof out->vendor, "%s", "infer SDK example");
  if (INFER_HAS_FIELD(out, infer_device_props, kind)) out->kind = INFER_DEVICE_ACCELERATOR;
  if (INFER_HAS_FIELD(out, infer_device_props, memory_bytes))
    out->memory_bytes = options_.memory_bytes;
  // One queue thread per stream runs the kernels one at a time: one compute unit.
  if (INFER_HAS_FIELD(out, infer_device_props, compute_units)) out->compute_units = 1;
  // The defining property of a discrete device: the host cannot read its memory, so it
  // must stage every tensor through copy_batch.
  if (INFER_HAS_FIELD(out, infer_device_props, host_addressable)) out->host_addressable = false;
}

MaybeFailure Device::fill_copy_cost(infer_copy_direction direction, infer_copy_cost* out) const {
  double bytes_per_us = options_.copy_bandwidth_gbps * 1e3;  // 1 GB/s = 1000 bytes/us
  double latency_us = kLinkSetupLatencyUs + options_.copy_latency_us;
  switch (direction) {
    case INFER_COPY_HOST_TO_DEVICE:
    case INFER_COPY_DEVICE_TO_HOST:
      break;
    case INFER_COPY_DEVICE_TO_DEVICE:
      bytes_per_us *= kDeviceToDeviceSpeedup;
      break;
    default:
      return failure(INFER_STATUS_INVALID_ARGUMENT,
                     "example: copy_cost: unknown copy direction " +
                         std::to_string(static_cast<int>(direction)));
  }
  if (INFER_HAS_FIELD(out, infer_copy_cost, bandwidth_bytes_per_us))
    out->bandwidth_bytes_per_us = bytes_per_us;
  if (INFER_HAS_FIELD(out, infer_copy_cost, latency_us)) out->latency_us = latency_us;
  return std::nullopt;
}

MaybeFailure Plugin::create(const infer_host_services* services, std::unique_ptr<Plugin>* out) {
  std::unique_ptr<Plugin> plugin(new Plugin(services));
  Options options;
  if (MaybeFailure f = read_options(plugin->host_, &options)) return f;
  plugin->device_ = std::make_unique<Device>(plugin->host_, options);
  plugin->host_.log(INFER_LOG_DEBUG, "example: device with " +
                                         std::to_string(options.memory_bytes >> 20) +
                                         " MiB of memory, copy latency " +
                                         std::to_string(options.copy_latency_us) + " us");
  *out = std::move(plugin);
  return std::nullopt;
}

}  // namespace infer::example
