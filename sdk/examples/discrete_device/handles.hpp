// The ABI's handles (infer_plugin, infer_buffer, ...) are incomplete C structs: the host
// only ever stores and passes them back. Each stands for one of the example's C++
// objects, and these casts are the one place where the two meet (INFER_SDK_HANDLE in
// plugin_glue.hpp says why a reinterpret_cast each way is correct).
#pragma once

#include "buffer.hpp"
#include "device.hpp"
#include "event.hpp"
#include "executable.hpp"
#include "stream.hpp"

namespace infer::example {

INFER_SDK_HANDLE(infer_plugin, Plugin)
INFER_SDK_HANDLE(infer_device, Device)
INFER_SDK_HANDLE(infer_buffer, Buffer)
INFER_SDK_HANDLE(infer_stream, Stream)
INFER_SDK_HANDLE(infer_event, Event)
INFER_SDK_HANDLE(infer_executable, Executable)

}  // namespace infer::example
