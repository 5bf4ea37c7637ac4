// Definitions of the plugin-owned ABI handles (declared opaque in plugin_api.h). They
// live in the global namespace because the C header declares them there; the library's
// hidden visibility keeps them private to this plugin.
#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "event.hpp"
#include "infer/plugin.hpp"
#include "status.hpp"
#include "stream.hpp"

namespace infer::cpu {
class Executable;
}

struct infer_device {
  infer_plugin* plugin = nullptr;
};

struct infer_plugin {
  infer::sdk::Host host;
  infer_device device;
};

// Tags live buffers so that a foreign or freed handle is caught instead of dereferenced.
inline constexpr uint32_t kCpuBufferMagic = 0xC0FFEE01u;

struct infer_buffer {
  uint32_t magic = kCpuBufferMagic;
  infer_device* device = nullptr;
  void* data = nullptr;
  size_t size = 0;
  bool owned = false;  // allocated with host_alloc (else an imported host pointer)
};

struct infer_event {
  infer_device* device;
  infer::cpu::Event event;
  explicit infer_event(infer_device* d) : device(d), event(&d->plugin->host) {}
};

// Streams run work synchronously on the calling thread (see stream.hpp). The host
// serializes calls on one stream; the mutex makes misuse harmless instead of a race.
struct infer_stream {
  infer_device* device = nullptr;
  std::mutex mu;
  infer::cpu::StreamState state;
};

struct infer_executable {
  infer_device* device = nullptr;
  std::unique_ptr<infer::cpu::Executable> impl;
};
