// Streams of one device, reused across runs: every step of a run takes a stream of its
// own (so independent work never serializes on a shared queue, and calls on one stream
// never need a lock) and gives it back when the run has finished.
//
// Streams that carried copies are only ever reused for copies, and streams that carried
// executions only for executions. The ABI has no way to say what a stream is for, so a
// plugin with a separate transfer queue (a GPU's DMA engine) can only learn it from the
// first work a stream gets; keeping the two kinds apart makes that first impression hold
// for the stream's whole life, and lets copies of one micro-batch run beside the compute
// of another.
#pragma once

#include <mutex>
#include <vector>

#include "plugin_host/device.hpp"

namespace infer::runtime {

enum class StreamUse { kCompute = 0, kCopy = 1 };

class StreamPool {
 public:
  explicit StreamPool(host::Device device) : device_(std::move(device)) {}

  Result<host::Stream> acquire(StreamUse use);
  // Only streams whose queued work has completed may come back.
  void release(host::Stream stream, StreamUse use);

 private:
  host::Device device_;
  std::mutex mu_;
  std::vector<host::Stream> free_[2];  // indexed by StreamUse
};

}  // namespace infer::runtime
