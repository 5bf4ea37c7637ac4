// Options of the example backend, read through the host's get_option service from the
// deployment YAML (`backends: [{name: example, options: {memory_mb: 64}}]` or however
// the host spells it: the plugin only ever sees key/value strings).
#pragma once

#include <cstdint>

#include "failure.hpp"

namespace infer::example {

struct Options {
  // Size of the simulated device memory. buffer_alloc of DEVICE_LOCAL memory beyond it
  // fails with OUT_OF_MEMORY, like a real card whose VRAM is full.
  uint64_t memory_bytes = 256ull << 20;  // option memory_mb, default 256
  // Extra time the copy engine spends on every copy batch, to make transfers visibly
  // expensive in traces and to let tests observe asynchrony. Also added to the latency
  // that copy_cost reports.
  double copy_latency_us = 0.0;  // option copy_latency_us, default 0
  // The host<->device bandwidth copy_cost reports (the copies themselves run at memcpy
  // speed; only the partitioner's cost model reads this).
  double copy_bandwidth_gbps = 16.0;  // option copy_bandwidth_gbps, default 16 (GB/s)
};

// Reads every option; a malformed value is an INVALID_ARGUMENT failure naming the option
// and the value, e.g. "example: option memory_mb must be a positive integer, got 'lots'".
MaybeFailure read_options(const sdk::Host& host, Options* out);

}  // namespace infer::example
