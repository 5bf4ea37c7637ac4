// Shared pieces of the kernel micro-benchmarks: a Threads that splits ranges over real
// worker threads (as the plugin's host pool would), deterministic operand data, and the
// main() body that registers the benchmarks at run time and runs them.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "simd/threads.hpp"

namespace infer::cpu::simd::bench {

// Splits [0, n) into up to n_ equal ranges of at least `grain`, the first run by the
// caller and the others by n_ - 1 worker threads that live as long as the object and
// spin while they wait (as the host's oneTBB workers do between back-to-back kernels),
// so a sub-100 us kernel's 2-thread time is not a thread start-up measurement. A call
// made while another is running (a nested loop) runs serially on its caller.
class BenchThreads final : public Threads {
 public:
  explicit BenchThreads(int n) : n_(n < 1 ? 1 : n) {
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this, i] { work(static_cast<size_t>(i)); });
  }
  ~BenchThreads() override {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    for (auto& t : workers_) t.join();
  }
  BenchThreads(const BenchThreads&) = delete;
  BenchThreads& operator=(const BenchThreads&) = delete;

  void parallel_for(size_t n, size_t grain, RangeFn fn) const override {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    const size_t pieces = std::min<size_t>(static_cast<size_t>(n_), (n + grain - 1) / grain);
    if (pieces <= 1 || busy_.exchange(true, std::memory_order_acquire)) {
      fn(0, n);
      return;
    }
    fn_ = &fn;
    n_items_ = n;
    step_ = (n + pieces - 1) / pieces;
    pending_.store(n_ - 1, std::memory_order_relaxed);  // every worker checks in
    generation_.fetch_add(1, std::memory_order_acq_rel);
    run_piece(0);
    while (pending_.load(std::memory_order_acquire) != 0) pause();
    busy_.store(false, std::memory_order_release);
  }
  int concurrency() const override { return n_; }

 private:
  static void pause() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  void run_piece(size_t i) const {
    const size_t b = i * step_;
    if (b < n_items_) (*fn_)(b, std::min(n_items_, b + step_));
  }
  void work(size_t i) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t g;
      while ((g = generation_.load(std::memory_order_acquire)) == seen) pause();
      seen = g;
      if (stop_.load(std::memory_order_acquire)) return;
      run_piece(i);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  int n_;
  std::vector<std::thread> workers_;
  mutable std::atomic<uint64_t> generation_{0};
  mutable std::atomic<int> pending_{0};
  mutable std::atomic<bool> busy_{false};
  std::atomic<bool> stop_{false};
  // The running loop; written before generation_ is bumped, read after it is seen.
  mutable const RangeFn* fn_ = nullptr;
  mutable size_t n_items_ = 0, step_ = 1;
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
