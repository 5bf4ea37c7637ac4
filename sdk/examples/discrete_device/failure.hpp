// The example plugin's internal error type.
//
// Inside the plugin we do not create infer_status objects eagerly: a status must be made
// by the host's status_create service and handed to exactly one owner, while a failure
// inside the plugin is often shared (a failed kernel fails every event signalled after
// it, and each waiter gets its own status). So the plugin passes Failure values around
// and turns one into a host status only at the ABI boundary (see to_status).
#pragma once

#include <optional>
#include <string>

#include "infer/plugin.hpp"

namespace infer::example {

struct Failure {
  infer_status_code code = INFER_STATUS_INTERNAL;
  std::string message;
};

// nullopt means success, like a NULL infer_status*.
using MaybeFailure = std::optional<Failure>;

inline Failure failure(infer_status_code code, std::string message) {
  return Failure{code, std::move(message)};
}

// A value's name for messages. Views come from the host, and a NULL name must not turn
// an error message into a crash.
inline std::string value_name(const infer_value_view* v) {
  return v != nullptr && v->name != nullptr ? v->name : "";
}

// Converts at the ABI boundary: a new host-owned status, or NULL for success.
inline infer_status* to_status(const sdk::Host& host, const MaybeFailure& f) {
  return f ? host.status(f->code, f->message) : nullptr;
}

}  // namespace infer::example
