// The Vulkan plugin's internal error type: the SDK's (plugin_glue.hpp), as in the example.
//
// A status must be created by the host's status_create and handed to exactly one owner,
// while a failure inside the plugin is often shared (a failed submission fails every
// event it was to signal, and each waiter gets its own status). So the plugin passes
// Failure values around and makes a host status only at the ABI boundary (to_status).
#pragma once

#include <string>

#include "infer/plugin_glue.hpp"
#include "vk_api.hpp"

namespace infer::vk {

using sdk::Failure;
using sdk::failure;
using sdk::MaybeFailure;  // nullopt means success, like a NULL infer_status*
using sdk::to_status;
using sdk::value_name;

// A failed Vulkan call: out-of-memory results map to OUT_OF_MEMORY, a lost device to
// UNAVAILABLE (the device is gone, not our bug), everything else to INTERNAL.
inline Failure vk_failure(VkResult result, const std::string& what) {
  infer_status_code code = INFER_STATUS_INTERNAL;
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY ||
      result == VK_ERROR_OUT_OF_POOL_MEMORY || result == VK_ERROR_FRAGMENTED_POOL)
    code = INFER_STATUS_OUT_OF_MEMORY;
  else if (result == VK_ERROR_DEVICE_LOST)
    code = INFER_STATUS_UNAVAILABLE;
  return failure(code, "vulkan: " + what + " failed: " + vk_result_name(result));
}

}  // namespace infer::vk
