// NEON pool2d rows: 4 output columns per vector; stride 2 keeps the even floats with one
// unzip (UZP1, from the generic shuffle). The loops are in pool_impl.hpp. NEON has no
// masked loads, so partial vectors go through a small stack buffer.
#include <cstring>

#include "pool_impl.hpp"
#include "pool_kernels.hpp"

namespace infer::cpu::simd {

namespace {

struct Neon {
  static constexpr int kLanes = 4;
  using V = pool_impl::Vec<kLanes>;
  static V maskload(const float* p, int64_t n) {
    V v = pool_impl::splat<Neon>(0.0f);
    std::memcpy(&v, p, sizeof(float) * static_cast<size_t>(n));
    return v;
  }
  static void maskstore(float* p, int64_t n, V v) { std::memcpy(p, &v, sizeof(float) * static_cast<size_t>(n)); }
};

}  // namespace

void pool_max_row_neon(const PoolRow& r) { pool_impl::row<Neon, pool_impl::MaxOp>(r); }
void pool_avg_row_neon(const PoolRow& r) { pool_impl::row<Neon, pool_impl::AvgOp>(r); }

}  // namespace infer::cpu::simd
