// Timeline events (infer_event): a 64-bit counter that only grows, plus a sticky failure.
//
// Timeline semaphores (Vulkan, D3D12 fences, CUDA's external semaphores) are the model: one
// event serves a whole sequence of runs, each waiting for "value >= N" instead of needing
// a fresh event object. The host signals from its own threads (event_signal_host), the
// stream queue threads signal as work completes, and anyone may wait.
//
// A failure "sticks": once work that was to signal the event fails, the counter never
// advances again and every later wait, query and callback sees the failure. That way a
// consumer that waits for value 7 cannot mistake "the producer died" for "not yet".
//
// All of that is the same for every device, so the SDK implements it once:
// sdk::Timeline (plugin_glue.hpp) holds the counter, the failure and the completion
// callbacks behind a mutex, and runs callbacks with no lock held. The example's device has
// nothing to add, so its event is a Timeline. A plugin for real hardware derives the same
// way and adds its device-side object (a timeline semaphore, a fence) next to it.
#pragma once

#include "failure.hpp"

namespace infer::example {

class Event : public sdk::Timeline {
 public:
  // Messages the timeline makes itself start with "example: ".
  explicit Event(const sdk::Host& host) : Timeline(host, "example") {}
};

}  // namespace infer::example
