#include "runtime/stream_pool.hpp"

namespace infer::runtime {

Result<host::Stream> StreamPool::acquire(StreamUse use) {
  {
    std::lock_guard lock(mu_);
    std::vector<host::Stream>& free = free_[static_cast<int>(use)];
    if (!free.empty()) {
      host::Stream s = std::move(free.back());
      free.pop_back();
      return s;
    }
  }
  return device_.create_stream();
}

void StreamPool::release(host::Stream stream, StreamUse use) {
  if (!stream.valid()) return;
  std::lock_guard lock(mu_);
  free_[static_cast<int>(use)].push_back(std::move(stream));
}

}  // namespace infer::runtime
