// Streams of one device, reused across runs: every step of a run takes a stream of its
// own (so independent work never serializes on a shared queue, and calls on one stream
// never need a lock) and gives it back when the run has finished.
#pragma once

#include <mutex>
#include <vector>

#include "plugin_host/device.hpp"

namespace infer::runtime {

class StreamPool {
 public:
  explicit StreamPool(host::Device device) : device_(std::move(device)) {}

  Result<host::Stream> acquire();
  // Only streams whose queued work has completed may come back.
  void release(host::Stream stream);

 private:
  host::Device device_;
  std::mutex mu_;
  std::vector<host::Stream> free_;
};

}  // namespace infer::runtime
