// Timeline events of one device, reused across runs. An event's counter only grows, so
// each use signals the value after the last one it reached.
//
// Events are also kept alive until the pool goes (with the session) rather than
// destroyed at the end of a run: a plugin may still be inside the code that called our
// completion callback when the run thread wakes up, and must not find the event gone.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "plugin_host/device.hpp"

namespace infer::runtime {

struct PooledEvent {
  host::Event event;
  uint64_t value = 0;  // the value this use signals and waits for
};

class EventPool {
 public:
  explicit EventPool(host::Device device) : device_(std::move(device)) {}

  Result<PooledEvent> acquire();

  enum class Outcome {
    kReached,  // the counter reached `value`
    kUnused,   // nothing was enqueued to signal it
    kFailed,   // failed, or its state is unknown: never reused
  };
  void release(PooledEvent event, Outcome outcome);

 private:
  struct Slot {
    host::Event event;
    uint64_t last = 0;  // the counter's value
  };
  host::Device device_;
  std::mutex mu_;
  std::vector<Slot> free_;
  std::vector<host::Event> retired_;
};

}  // namespace infer::runtime
