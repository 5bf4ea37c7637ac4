// The example plugin's internal error type.
//
// Inside the plugin we do not create infer_status objects eagerly: a status must be made
// by the host's status_create service and handed to exactly one owner, while a failure
// inside the plugin is often shared (a failed kernel fails every event signalled after
// it, and each waiter gets its own status). So the plugin passes Failure values around
// and turns one into a host status only at the ABI boundary (see to_status).
//
// The SDK's plugin_glue.hpp provides that model (sdk::Failure, sdk::MaybeFailure,
// sdk::to_status) together with the other ABI glue every plugin needs; the example uses
// it under short names.
#pragma once

#include "infer/plugin_glue.hpp"

namespace infer::example {

using sdk::Failure;
using sdk::failure;
using sdk::MaybeFailure;  // nullopt means success, like a NULL infer_status*
using sdk::to_status;
using sdk::value_name;

}  // namespace infer::example
