// The ABI's handles are incomplete C structs that the host only stores and passes back.
// Each stands for one of the plugin's C++ objects; these casts (the SDK's
// INFER_SDK_HANDLE) are the one place where the two meet. Events and streams are
// reference-counted (submissions in flight keep them alive), so their handles are small
// holder objects.
#pragma once

#include "device.hpp"
#include "event.hpp"
#include "executable.hpp"
#include "memory.hpp"
#include "plugin.hpp"
#include "stream.hpp"

namespace infer::vk {

INFER_SDK_HANDLE(infer_plugin, Plugin)
INFER_SDK_HANDLE(infer_device, Device)
INFER_SDK_HANDLE(infer_buffer, Buffer)
INFER_SDK_HANDLE(infer_stream, StreamHandle)
INFER_SDK_HANDLE(infer_event, EventHandle)
INFER_SDK_HANDLE(infer_executable, Executable)

}  // namespace infer::vk
