#include "plugin_host/status_bridge.hpp"

#include <new>

namespace infer::host {
namespace {

// Returned when even a status cannot be allocated. It is never freed (free_status
// recognizes it), so handing it out many times is safe.
infer_status* out_of_memory_status() {
  static infer_status* const kStatus = [] {
    static infer_status s;
    s.code = INFER_STATUS_OUT_OF_MEMORY;
    s.message = "out of host memory while creating a status";
    return &s;
  }();
  return kStatus;
}

std::string with_prefix(std::string_view context, const std::string& message) {
  if (context.empty()) return message;
  std::string out(context);
  out += ": ";
  out += message;
  return out;
}

}  // namespace

StatusCode to_status_code(infer_status_code code) {
  switch (code) {
    case INFER_STATUS_OK:
      return StatusCode::kOk;
    case INFER_STATUS_INVALID_ARGUMENT:
      return StatusCode::kInvalidArgument;
    case INFER_STATUS_UNSUPPORTED:
      return StatusCode::kUnsupported;
    case INFER_STATUS_UNAVAILABLE:
    case INFER_STATUS_OUT_OF_MEMORY:
    case INFER_STATUS_TIMEOUT:
      return StatusCode::kUnavailable;
    case INFER_STATUS_CANCELLED:
      return StatusCode::kCancelled;
    case INFER_STATUS_INTERNAL:
      return StatusCode::kInternal;
    case INFER_STATUS_CODE_MAX_ENUM:  // never a value (plugin_api.h)
      break;
  }
  return StatusCode::kInternal;
}

infer_status_code to_abi_code(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return INFER_STATUS_OK;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return INFER_STATUS_INVALID_ARGUMENT;
    case StatusCode::kUnsupported:
      return INFER_STATUS_UNSUPPORTED;
    case StatusCode::kUnavailable:
      return INFER_STATUS_UNAVAILABLE;
    case StatusCode::kCancelled:
      return INFER_STATUS_CANCELLED;
    case StatusCode::kInternal:
      return INFER_STATUS_INTERNAL;
  }
  return INFER_STATUS_INTERNAL;
}

const char* abi_code_name(infer_status_code code) {
  switch (code) {
    case INFER_STATUS_OK:
      return "OK";
    case INFER_STATUS_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case INFER_STATUS_UNSUPPORTED:
      return "UNSUPPORTED";
    case INFER_STATUS_UNAVAILABLE:
      return "UNAVAILABLE";
    case INFER_STATUS_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case INFER_STATUS_CANCELLED:
      return "CANCELLED";
    case INFER_STATUS_TIMEOUT:
      return "TIMEOUT";
    case INFER_STATUS_INTERNAL:
      return "INTERNAL";
    case INFER_STATUS_CODE_MAX_ENUM:  // never a value (plugin_api.h)
      break;
  }
  return "UNKNOWN";
}

Status view_status(const infer_status* status, std::string_view context) {
  if (status == nullptr) return Status::ok();
  if (status->code == INFER_STATUS_OK) {
    // A plugin must return NULL for success; a status object with code OK is a bug that
    // would otherwise silently read as success and hide whatever the message says.
    return Status(StatusCode::kInternal,
                  with_prefix(context, "plugin returned a status with code OK (must be NULL): " +
                                           status->message));
  }
  std::string message = status->message;
  if (status->code == INFER_STATUS_OUT_OF_MEMORY || status->code == INFER_STATUS_TIMEOUT) {
    // Both map onto kUnavailable; keep the precise cause visible in the text.
    message = std::string(abi_code_name(status->code)) + ": " + message;
  }
  return Status(to_status_code(status->code), with_prefix(context, message));
}

Status take_status(infer_status* status, std::string_view context, infer_status_code* raw_code) {
  if (raw_code != nullptr) *raw_code = status ? status->code : INFER_STATUS_OK;
  if (status == nullptr) return Status::ok();
  Status result = view_status(status, context);
  free_status(status);
  return result;
}

infer_status* make_status(infer_status_code code, std::string_view message) {
  if (code == INFER_STATUS_OK) return nullptr;
  try {
    auto* s = new infer_status;
    s->code = code;
    s->message.assign(message.data(), message.size());
    return s;
  } catch (const std::bad_alloc&) {
    return out_of_memory_status();
  }
}

infer_status* make_status(const Status& status) {
  if (status.is_ok()) return nullptr;
  return make_status(to_abi_code(status.code()), status.message());
}

void free_status(infer_status* status) {
  if (status == nullptr || status == out_of_memory_status()) return;
  delete status;
}

}  // namespace infer::host
