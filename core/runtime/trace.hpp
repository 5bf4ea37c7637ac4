// The session's run trace (SessionOptions::trace_path): every step of every run as an
// interval on a track per device queue, written as Chrome trace JSON (the "traceEvents"
// format that chrome://tracing and https://ui.perfetto.dev open).
//
// What the times mean. The plugin ABI has no timestamps: only the plugin knows when its
// device really started a piece of work. The host records what it can observe itself,
// on its steady clock:
//   - start: the later of the moment the host began enqueueing the step and the moment
//     the host learned (from completion callbacks) that everything the step waits for
//     had completed. The device cannot have started earlier; it may have started later
//     (a busy queue).
//   - end: the moment the step's completion callback reached the host. The device
//     finished no later; it may have finished earlier (callback latency).
// Host work (memcpy of mapped memory, a synchronous plugin like cpu running inside the
// enqueue call) is timed directly. Intervals are therefore honest bounds, tight when the
// device is idle and the host is responsive; they never claim an overlap that the order
// of events rules out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "infer/status.hpp"

namespace infer::runtime {

using TraceClock = std::chrono::steady_clock;

struct TraceInterval {
  std::string device;    // the trace "process": a backend name, or "host"
  std::string queue;     // the track: "example compute", "example copy h2d", "host copy"
  std::string category;  // "compute" or "copy"
  std::string name;      // "p0", "copy 'x' (host -> example)"
  TraceClock::time_point start;
  TraceClock::time_point end;
  uint64_t run = 0;          // Session::run call, counted from 0 per session
  int64_t micro_batch = -1;  // -1: the run was not split
  int64_t bytes = -1;        // -1: not a copy
};

class TraceRecorder {
 public:
  // Runs stop being recorded (and the trace says how many intervals were dropped) once
  // this many intervals are held, so a long benchmark cannot exhaust memory.
  static constexpr size_t kDefaultMaxIntervals = 1u << 20;

  explicit TraceRecorder(std::string path, size_t max_intervals = kDefaultMaxIntervals);

  const std::string& path() const { return path_; }
  // The index of a new Session::run; thread-safe.
  uint64_t next_run() { return runs_.fetch_add(1, std::memory_order_relaxed); }
  // Adds one run's intervals; thread-safe.
  void record(std::vector<TraceInterval> intervals);
  // Whether intervals were recorded since the last write().
  bool dirty() const;

  // The whole trace as Chrome trace JSON. Intervals that overlap on one queue (two
  // concurrent runs, or independent steps of one run on separate streams) go to
  // numbered lanes of that queue ("example compute #2"), since a track of the format
  // must hold properly nested intervals only.
  std::string to_json() const;
  // Writes to_json() to path(); a failure names the file.
  Status write();

 private:
  std::string render(std::vector<TraceInterval> all, size_t dropped) const;

  const std::string path_;
  const size_t max_intervals_;
  const TraceClock::time_point epoch_;
  std::atomic<uint64_t> runs_{0};
  mutable std::mutex mu_;
  std::vector<TraceInterval> intervals_;  // guarded by mu_
  size_t dropped_ = 0;                    // guarded by mu_
  bool dirty_ = false;                    // guarded by mu_
};

}  // namespace infer::runtime
