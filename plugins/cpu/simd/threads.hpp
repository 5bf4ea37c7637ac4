// How the SIMD library runs loops in parallel without knowing who owns the threads. The
// plugin implements Threads over the host's oneTBB parallel_for (plugins never start
// their own pools); tests use SerialThreads or a std::thread one. Bodies must not throw.
#pragma once

#include <cstddef>
#include <cstdint>
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

// How a GEMM cuts C into mt x nt tiles for `conc` threads: from the tile counts its
// cache blocking gives (mt, nt), splits the longer side (in register panels of mr rows or
// nr columns) until there are at least two tiles per thread and a multiple of the thread
// count, without cutting a panel. Panels are then dealt out evenly, so equal shares of
// tiles are equal shares of work.
inline void split_tiles(int64_t m_panels, int64_t n_panels, int mr, int nr, int conc,
                        int64_t& mt, int64_t& nt) {
  auto split_once = [&] {
    const bool can_m = mt < m_panels, can_n = nt < n_panels;
    if (!can_m && !can_n) return false;
    // Columns per tile vs rows per tile, in multiples of the register tile.
    const double n_len = static_cast<double>(n_panels) / static_cast<double>(nt) * nr;
    const double m_len = static_cast<double>(m_panels) / static_cast<double>(mt) * mr;
    if (can_n && (!can_m || n_len >= m_len))
      ++nt;
    else
      ++mt;
    return true;
  };
  const int64_t target = 2 * static_cast<int64_t>(conc);
  while (mt * nt < target && split_once()) {
  }
  while ((mt * nt) % conc != 0 && split_once()) {
  }
}

}  // namespace infer::cpu::simd
