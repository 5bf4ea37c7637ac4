// copy_batch: the device's copy engine (DMA) between host memory and device buffers.
#pragma once

#include <cstddef>

#include "stream.hpp"

namespace infer::example {

// Checks every region now (so a bad region is reported to the caller, not lost on the
// queue) and enqueues the whole batch as one work item on `stream`. The item sleeps for
// the copy_latency_us option, then copies each region.
MaybeFailure enqueue_copies(Stream& stream, const infer_copy_region* regions, size_t count);

}  // namespace infer::example
