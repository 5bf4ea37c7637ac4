// The ABI's handles (infer_plugin, infer_buffer, ...) are incomplete C structs: the host
// only ever stores and passes them back. Each stands for one of the example's C++
// objects, and these casts are the one place where the two meet. A pointer cast to an
// incomplete type and back yields the original pointer, and nothing is ever read
// through the handle type itself.
#pragma once

#include "buffer.hpp"
#include "device.hpp"
#include "event.hpp"
#include "executable.hpp"
#include "stream.hpp"

namespace infer::example {

#define INFER_EXAMPLE_HANDLE(Handle, Object)                                     \
  inline Handle* to_handle(Object* o) { return reinterpret_cast<Handle*>(o); }   \
  inline Object* from_handle(Handle* h) { return reinterpret_cast<Object*>(h); } \
  inline const Object* from_handle(const Handle* h) { return reinterpret_cast<const Object*>(h); }

INFER_EXAMPLE_HANDLE(infer_plugin, Plugin)
INFER_EXAMPLE_HANDLE(infer_device, Device)
INFER_EXAMPLE_HANDLE(infer_buffer, Buffer)
INFER_EXAMPLE_HANDLE(infer_stream, Stream)
INFER_EXAMPLE_HANDLE(infer_event, Event)
INFER_EXAMPLE_HANDLE(infer_executable, Executable)

#undef INFER_EXAMPLE_HANDLE

}  // namespace infer::example
