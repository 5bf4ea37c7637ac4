// How the SIMD library runs loops in parallel without knowing who owns the threads. The
// plugin implements Threads over the host's oneTBB parallel_for (plugins never start
// their own pools); tests use SerialThreads or a std::thread one. Bodies must not throw.
#pragma once

#include <cstddef>
#include <utility>

namespace infer::cpu::simd {

// A non-owning reference to a callable void(size_t begin, size_t end).
class RangeFn {
 public:
  template <typename F>
  RangeFn(F& f) : obj_(&f), call_([](void* o, size_t b, size_t e) { (*static_cast<F*>(o))(b, e); }) {}
  void operator()(size_t b, size_t e) const { call_(obj_, b, e); }

 private:
  void* obj_;
  void (*call_)(void*, size_t, size_t);
};

class Threads {
 public:
  virtual ~Threads() = default;
  // Calls fn on disjoint ranges covering [0, n), each at least `grain` long except the
  // last, possibly concurrently; returns when all have returned. While it waits, the
  // calling thread runs nothing but fn's ranges (the host's parallel_for is isolated), so
  // a caller may hand its own scratch to the ranges running on other threads.
  virtual void parallel_for(size_t n, size_t grain, RangeFn fn) const = 0;
  // How many threads may run at once (>= 1): used to size the work split.
  virtual int concurrency() const = 0;

  template <typename F>
  void run(size_t n, size_t grain, F&& f) const {
    auto& ref = f;
    parallel_for(n, grain, RangeFn(ref));
  }
};

class SerialThreads final : public Threads {
 public:
  void parallel_for(size_t n, size_t, RangeFn fn) const override {
    if (n > 0) fn(0, n);
  }
  int concurrency() const override { return 1; }
};

}  // namespace infer::cpu::simd
