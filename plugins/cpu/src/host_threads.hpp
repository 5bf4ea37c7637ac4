// The bridge from the SIMD library (simd/) to the host: its Threads run on the host's
// oneTBB parallel_for, and the ISA is the one the plugin chose at load (INFER_CPU_ISA or
// the best this CPU runs).
#pragma once

#include "infer/plugin.hpp"
#include "parallel.hpp"
#include "simd/isa.hpp"
#include "simd/threads.hpp"

namespace infer::cpu {

class HostThreads final : public simd::Threads {
 public:
  explicit HostThreads(const sdk::Host& host) : host_(host) {}
  void parallel_for(size_t n, size_t grain, simd::RangeFn fn) const override {
    cpu::parallel_for(host_, n, grain, [&](size_t b, size_t e) { fn(b, e); });
  }
  int concurrency() const override {
    const infer_host_services* h = host_.raw();
    const size_t n = (h != nullptr && h->num_threads != nullptr) ? h->num_threads(h->host_ctx) : 1;
    return n > 0 ? static_cast<int>(n) : 1;
  }

 private:
  const sdk::Host& host_;
};

// The ISA every kernel of this plugin uses.
inline simd::Isa kernel_isa() { return simd::selected_isa().isa; }

}  // namespace infer::cpu
