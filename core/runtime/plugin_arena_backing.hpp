// Arena chunks from a plugin device: DEVICE_LOCAL buffers, mapped once when the host can
// address the device.
#pragma once

#include <mutex>
#include <vector>

#include "plugin_host/device.hpp"
#include "runtime/device_arena.hpp"

namespace infer::runtime {

class PluginArenaBacking final : public ArenaBacking {
 public:
  // `map_chunks`: map every chunk (the device is host-addressable); a chunk that cannot
  // be mapped is then an error.
  PluginArenaBacking(host::Device device, bool map_chunks)
      : device_(std::move(device)), map_chunks_(map_chunks) {}
  Result<Chunk> allocate(size_t size, size_t alignment) override;

 private:
  host::Device device_;
  bool map_chunks_;
  std::mutex mu_;
  std::vector<host::Buffer> buffers_;  // freed (buffer_free) with the backing
};

}  // namespace infer::runtime
