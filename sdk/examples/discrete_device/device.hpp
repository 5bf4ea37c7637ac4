// The plugin instance and its one device.
//
// A real discrete-device plugin would enumerate the cards its driver reports here; the
// example always has exactly one simulated card. Everything the device owns that the
// host must not reach (its memory) is accounted here.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "failure.hpp"
#include "options.hpp"

namespace infer::example {

class Device {
 public:
  Device(const sdk::Host& host, const Options& options) : host_(host), options_(options) {}
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const sdk::Host& host() const { return host_; }
  const Options& options() const { return options_; }

  // Device memory accounting. A real driver sub-allocates VRAM; the example only models
  // what the host can observe of it: a fixed capacity, and OUT_OF_MEMORY beyond it.
  // `what` names the allocation in the error ("buffer of 300 MiB", "constant 'W'").
  MaybeFailure reserve(uint64_t bytes, const std::string& what);
  void release(uint64_t bytes);
  uint64_t used_bytes() const;

  // Writes the fields of `out` that the host's struct_size covers (see INFER_HAS_FIELD).
  void fill_props(infer_device_props* out) const;
  // The link model the partitioner's cost model reads.
  MaybeFailure fill_copy_cost(infer_copy_direction direction, infer_copy_cost* out) const;

 private:
  const sdk::Host& host_;
  const Options options_;
  mutable std::mutex mu_;
  uint64_t used_bytes_ = 0;  // guarded by mu_
};

// The infer_plugin object: the host services table and the device list. Created once per
// host session set-up; destroyed after every object created from it.
class Plugin {
 public:
  // Reads the options and creates the device. A plugin whose hardware is missing would
  // still succeed here and report zero devices from get_devices; the simulated device
  // of the example is always present.
  static MaybeFailure create(const infer_host_services* services, std::unique_ptr<Plugin>* out);

  const sdk::Host& host() const { return host_; }
  Device& device() { return *device_; }

 private:
  explicit Plugin(const infer_host_services* services) : host_(services) {}
  sdk::Host host_;
  std::unique_ptr<Device> device_;
};

}  // namespace infer::example
