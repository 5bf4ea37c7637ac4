// The plugin's options, from the YAML `backends.vulkan.options` block through the host's
// get_option service (and two environment variables for tests and debugging).
#pragma once

#include <cstdint>

#include "failure.hpp"

namespace infer::vk {

struct Options {
  // `device`: index into the plugin's device list (sorted discrete > integrated > virtual
  // > CPU); -1 (unset) means every usable device is reported, best first.
  int64_t device_index = -1;
  // `validation` (or INFER_VULKAN_VALIDATION=1): enable VK_LAYER_KHRONOS_validation and
  // route every message to the host log at ERROR, prefixed "vulkan validation: ".
  bool validation = false;
  // `unified_memory`: report host_addressable and map DEVICE_LOCAL buffers directly, on a
  // device whose device-local memory is host-visible (integrated GPUs, lavapipe).
  bool unified_memory = false;
};

MaybeFailure read_options(const sdk::Host& host, Options* out);

}  // namespace infer::vk
