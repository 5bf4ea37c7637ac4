// Converts between the plugin ABI's infer_status (a C handle) and the core's Status.
//
// The host implements infer_status: every status a plugin returns was made by the host's
// status_create service, so the host knows its layout and frees it here. A plugin never
// sees the definition below; it only holds pointers and calls the services.
#pragma once

#include <string>
#include <string_view>

#include "infer/plugin_api.h"
#include "infer/status.hpp"

// The host-side definition of the ABI's opaque status (declared in plugin_api.h).
struct infer_status {
  infer_status_code code = INFER_STATUS_INTERNAL;
  std::string message;
};

namespace infer::host {

// Maps an ABI code to the core's code: UNSUPPORTED -> kUnsupported; UNAVAILABLE,
// OUT_OF_MEMORY and TIMEOUT -> kUnavailable ("not here or now"); INVALID_ARGUMENT ->
// kInvalidArgument; CANCELLED -> kCancelled; INTERNAL and unknown codes -> kInternal.
StatusCode to_status_code(infer_status_code code);
// The reverse mapping, used when the host hands a status to a plugin (e.g. from an
// output allocator): kNotFound -> INVALID_ARGUMENT, kOk -> OK.
infer_status_code to_abi_code(StatusCode code);
// "UNSUPPORTED", "OUT_OF_MEMORY", ... for messages.
const char* abi_code_name(infer_status_code code);

// Takes ownership of a status returned by a plugin, frees it and returns the equivalent
// Status (OK for NULL). `context`, when not empty, prefixes the message
// ("plugin 'cpu': compile: <message>"). When `raw_code` is given it receives the ABI code
// (INFER_STATUS_OK for NULL), so a caller can tell e.g. TIMEOUT from UNAVAILABLE.
// A non-NULL status carrying the code OK is a plugin bug and becomes kInternal.
Status take_status(infer_status* status, std::string_view context = {},
                   infer_status_code* raw_code = nullptr);

// Reads a borrowed status without freeing it (e.g. the one an event callback receives).
Status view_status(const infer_status* status, std::string_view context = {});

// Creates a status owned by the receiver (the plugin, or whoever it passes it to).
// Returns NULL for INFER_STATUS_OK. Never throws: on allocation failure it returns a
// static OUT_OF_MEMORY status that free_status recognizes and does not free.
infer_status* make_status(infer_status_code code, std::string_view message);
// The same from a core Status (NULL when it is OK).
infer_status* make_status(const Status& status);
// Frees a status made by make_status (or by the status_create service). NULL is fine.
void free_status(infer_status* status);

}  // namespace infer::host
