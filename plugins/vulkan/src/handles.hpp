// The ABI's handles are incomplete C structs that the host only stores and passes back.
// Each stands for one of the plugin's C++ objects; these casts are the one place where the
// two meet. Events and streams are reference-counted (submissions in flight keep them
// alive), so their handles are small holder objects.
#pragma once

#include "device.hpp"
#include "event.hpp"
#include "executable.hpp"
#include "memory.hpp"
#include "plugin.hpp"
#include "stream.hpp"

namespace infer::vk {

#define INFER_VK_HANDLE(Handle, Object)                                          \
  inline Handle* to_handle(Object* o) { return reinterpret_cast<Handle*>(o); }   \
  inline Object* from_handle(Handle* h) { return reinterpret_cast<Object*>(h); } \
  inline const Object* from_handle(const Handle* h) { return reinterpret_cast<const Object*>(h); }

INFER_VK_HANDLE(infer_plugin, Plugin)
INFER_VK_HANDLE(infer_device, Device)
INFER_VK_HANDLE(infer_buffer, Buffer)
INFER_VK_HANDLE(infer_stream, StreamHandle)
INFER_VK_HANDLE(infer_event, EventHandle)
INFER_VK_HANDLE(infer_executable, Executable)

#undef INFER_VK_HANDLE

}  // namespace infer::vk
