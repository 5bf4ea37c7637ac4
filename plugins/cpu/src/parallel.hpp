// parallel_for over the host's threads (the plugin never starts its own). The body runs
// on host threads behind a C function pointer, so no exception may leave it: the first
// one thrown is captured and rethrown on the calling thread once every piece returned.
#pragma once

#include <exception>
#include <mutex>
#include <type_traits>

#include "infer/plugin.hpp"

namespace infer::cpu {

template <typename F>
void parallel_for(const sdk::Host& host, size_t n, size_t grain, F&& fn) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  const infer_host_services* h = host.raw();
  if (n <= grain || h == nullptr || h->parallel_for == nullptr) {
    fn(size_t{0}, n);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  struct Ctx {
    Fn* fn;
    std::mutex mu;
    std::exception_ptr error;
  } ctx{&fn, {}, nullptr};
  auto trampoline = [](void* user, size_t b, size_t e) {
    auto* c = static_cast<Ctx*>(user);
    try {
      (*c->fn)(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(c->mu);
      if (!c->error) c->error = std::current_exception();
    }
  };
  h->parallel_for(h->host_ctx, 0, n, grain, trampoline, &ctx);
  if (ctx.error) std::rethrow_exception(ctx.error);
}

// A grain that gives each piece about `work_per_piece` units when each item costs
// `cost_per_item` units, so tiny loops are not split.
inline size_t grain_for(size_t cost_per_item, size_t work_per_piece = 32768) {
  if (cost_per_item == 0) cost_per_item = 1;
  size_t g = work_per_piece / cost_per_item;
  return g == 0 ? 1 : g;
}

}  // namespace infer::cpu
