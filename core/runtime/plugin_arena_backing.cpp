#include "runtime/plugin_arena_backing.hpp"

namespace infer::runtime {

Result<ArenaBacking::Chunk> PluginArenaBacking::allocate(size_t size, size_t alignment) {
  INFER_ASSIGN_OR_RETURN(host::Buffer buffer,
                         device_.allocate(INFER_MEMORY_DEVICE_LOCAL, size, alignment));
  Chunk chunk;
  chunk.buffer = buffer.raw();
  if (map_chunks_) {
    std::optional<void*> mapped = buffer.map();
    if (!mapped || *mapped == nullptr)
      return unavailable(device_.describe() +
                         ": the device says it is host-addressable but its buffer cannot be "
                         "mapped");
    chunk.host_ptr = *mapped;
  }
  std::lock_guard lock(mu_);
  buffers_.push_back(std::move(buffer));
  return chunk;
}

}  // namespace infer::runtime
