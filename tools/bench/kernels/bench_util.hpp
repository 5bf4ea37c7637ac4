// Shared pieces of the kernel micro-benchmarks: a Threads that splits ranges over real
// std::threads (as the plugin's host pool would), deterministic operand data, and the
// main() body that registers the benchmarks at run time and runs them.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#include "simd/threads.hpp"

namespace infer::cpu::simd::bench {

// Splits [0, n) into up to n_ ranges of at least `grain` and runs each on its own
// std::thread (the first on the caller).
class BenchThreads final : public Threads {
 public:
  explicit BenchThreads(int n) : n_(n) {}
  void parallel_for(size_t n, size_t grain, RangeFn fn) const override {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    size_t pieces = std::min<size_t>(static_cast<size_t>(n_), (n + grain - 1) / grain);
    if (pieces <= 1) {
      fn(0, n);
      return;
    }
    const size_t step = (n + pieces - 1) / pieces;
    std::vector<std::thread> ts;
    for (size_t b = step; b < n; b += step)
      ts.emplace_back([&fn, b, step, n] { fn(b, std::min(n, b + step)); });
    fn(0, std::min(n, step));
    for (auto& t : ts) t.join();
  }
  int concurrency() const override { return n_; }

 private:
  int n_;
};

// n floats in [-0.5, 0.5), the same on every run (a cheap hash of the index: no RNG
// state, and no denormals or zeros that would change the timing).
inline std::vector<float> filled(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
  return v;
}

// The body of main(): register_all adds the benchmarks (their names depend on the ISAs
// this machine runs, so they are registered at run time), then Google Benchmark runs
// those the command line selects.
inline int run_benchmarks(int argc, char** argv, void (*register_all)()) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace infer::cpu::simd::bench
