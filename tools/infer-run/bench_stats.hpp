// Benchmark statistics: latency percentiles and throughput over the timed iterations,
// and the process's peak resident memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace infer::cli {

// The p-th percentile (0..100) of `sorted` (ascending, non-empty) with linear
// interpolation between closest ranks: rank = p/100 * (n-1). This is numpy's default
// ("linear") method, so numbers can be checked against np.percentile.
double percentile(const std::vector<double>& sorted, double p);

struct LatencySummary {
  size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0, max = 0;
};

// Summarizes latencies (any order, non-empty); all values keep the input's unit (ms).
LatencySummary summarize_latencies(std::vector<double> samples_ms);

// Runs per second given `runs` runs that took `total_ms` in all; 0 when no time passed.
double throughput_per_s(size_t runs, double total_ms);

// The VmHWM (peak resident set) line of a /proc/<pid>/status text, in kB.
std::optional<int64_t> parse_vmhwm_kb(std::string_view proc_status_text);

// This process's peak resident set in MiB, from /proc/self/status; nullopt where that
// file or line is missing (not Linux).
std::optional<double> peak_rss_mb();

}  // namespace infer::cli
