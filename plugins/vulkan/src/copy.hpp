// copy_batch: host<->device and device<->device copies on a stream.
#pragma once

#include "stream.hpp"

namespace infer::vk {

// Validates the regions and enqueues them as one stream entry (see copy.cpp).
MaybeFailure enqueue_copies(Stream& stream, const infer_copy_region* regions, size_t count);

}  // namespace infer::vk
