// The Vulkan plugin's internal error type (the same model as the SDK example).
//
// A status must be created by the host's status_create and handed to exactly one owner,
// while a failure inside the plugin is often shared (a failed submission fails every
// event it was to signal, and each waiter gets its own status). So the plugin passes
// Failure values around and makes a host status only at the ABI boundary (to_status).
#pragma once

#include <optional>
#include <string>

#include "infer/plugin.hpp"
#include "vk_api.hpp"

namespace infer::vk {

struct Failure {
  infer_status_code code = INFER_STATUS_INTERNAL;
  std::string message;
};

// nullopt means success, like a NULL infer_status*.
using MaybeFailure = std::optional<Failure>;

inline Failure failure(infer_status_code code, std::string message) {
  return Failure{code, std::move(message)};
}

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

// A value's name for messages; a NULL name must not turn an error message into a crash.
inline std::string value_name(const infer_value_view* v) {
  return v != nullptr && v->name != nullptr ? v->name : "";
}

// Converts at the ABI boundary: a new host-owned status, or NULL for success.
inline infer_status* to_status(const sdk::Host& host, const MaybeFailure& f) {
  return f ? host.status(f->code, f->message) : nullptr;
}

// Takes over a status a host service returned (e.g. alloc_output): its code and message
// as a Failure, with `context` in front; the status is freed.
inline Failure take_host_status(const sdk::Host& host, infer_status* s, const std::string& context) {
  const infer_host_services* h = host.raw();
  Failure f{h->status_code(s), context + h->status_message(s)};
  h->status_free(s);
  return f;
}

}  // namespace infer::vk
