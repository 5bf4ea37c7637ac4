#include "runtime/stream_pool.hpp"

namespace infer::runtime {

Result<host::Stream> StreamPool::acquire() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      host::Stream s = std::move(free_.back());
      free_.pop_back();
      return s;
    }
  }
  return device_.create_stream();
}

void StreamPool::release(host::Stream stream) {
  if (!stream.valid()) return;
  std::lock_guard lock(mu_);
  free_.push_back(std::move(stream));
}

}  // namespace infer::runtime
