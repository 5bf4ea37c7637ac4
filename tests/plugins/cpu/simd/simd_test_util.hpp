// Shared pieces of the SIMD library tests: a Threads that really runs ranges on several
// std::threads (so the work split is exercised), deterministic random data, the ISAs to
// run, a relative-error comparison that reports the worst element, the activations'
// double-precision definitions, and the direct convolution reference of conv_test.cpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "simd/activation.hpp"
#include "simd/conv.hpp"
#include "simd/isa.hpp"
#include "simd/threads.hpp"

namespace infer::cpu::simd::testing {

// Splits [0, n) into up to `workers` ranges of at least `grain` and runs each on its own
// std::thread (the first on the caller).
class StdThreads final : public Threads {
 public:
  explicit StdThreads(int workers) : workers_(workers < 1 ? 1 : workers) {}
  void parallel_for(size_t n, size_t grain, RangeFn fn) const override {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    size_t pieces = std::min<size_t>(static_cast<size_t>(workers_), (n + grain - 1) / grain);
    if (pieces <= 1) {
      fn(0, n);
      return;
    }
    const size_t step = (n + pieces - 1) / pieces;
    std::vector<std::thread> threads;
    for (size_t b = step; b < n; b += step)
      threads.emplace_back([&fn, b, step, n] { fn(b, std::min(n, b + step)); });
    fn(0, std::min(n, step));
    for (auto& t : threads) t.join();
  }
  int concurrency() const override { return workers_; }

 private:
  int workers_;
};

// The death-test style for EXPECT_DEATH in these tests. "threadsafe" re-executes the test binary, which qemu-user cannot do (tools/test-aarch64.sh
// runs the AArch64 build under qemu-aarch64-static: "Exec format error"); "fast" only forks.
#if defined(__aarch64__)
inline constexpr const char* kDeathTestStyle = "fast";
#else
inline constexpr const char* kDeathTestStyle = "threadsafe";
#endif

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Every ISA this machine runs, scalar included, for INSTANTIATE_TEST_SUITE_P.
inline std::vector<Isa> test_isas() { return supported_isas(); }
inline std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) {
  return isa_name(info.param);
}

// Max over i of |got - want| / (atol_scale + |want|); fails naming the worst index.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                         double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t worst = 0;
  double worst_excess = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double allowed = atol + rtol * std::fabs(static_cast<double>(want[i]));
    const double excess = err - allowed;
    if (excess > worst_excess || std::isnan(got[i])) {
      worst_excess = std::isnan(got[i]) ? 1e30 : excess;
      worst = i;
    }
  }
  if (!got.empty()) {
    EXPECT_LE(worst_excess, 0.0) << what << ": element " << worst << " is " << got[worst]
                                 << ", expected " << want[worst] << " (rtol " << rtol
                                 << ", atol " << atol << ")";
  }
}

// act(v) from each activation's definition, in double.
inline double act_reference(const Act& a, double v) {
  switch (a.kind) {
    case ActKind::kNone:
      return v;
    case ActKind::kRelu:
      return v > 0 ? v : 0;
    case ActKind::kTanh:
      return std::tanh(v);
    case ActKind::kSigmoid:
      return 1 / (1 + std::exp(-v));
    case ActKind::kLeakyRelu:
      return v >= 0 ? v : a.p0 * v;
    case ActKind::kClip:
      return std::fmin(std::fmax(v, a.p0), a.p1);
    case ActKind::kHardSigmoid:
      return std::fmin(1.0, std::fmax(0.0, a.p0 * v + a.p1));
    case ActKind::kHardSwish:
      return v * std::fmin(1.0, std::fmax(0.0, v / 6 + 0.5));
    case ActKind::kGelu:
      return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case ActKind::kGeluTanh:
      return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  }
  return v;
}

// The convolution reference, defined in conv_test.cpp and shared with depthwise_test.cpp
// and winograd_test.cpp. conv_test_shape builds a shape whose out is computed from the
// ONNX formula with pad_end; conv_test_reference is y = act(conv(x, w) + bias + residual)
// from the definition, in double; conv_test_run packs w for `algo`, runs conv_forward
// and returns y.
ConvShape conv_test_shape(int64_t N, int64_t C, int64_t M, int64_t G, std::vector<int64_t> in,
                          std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d,
                          std::vector<int64_t> pb, std::vector<int64_t> pe);
std::vector<float> conv_test_reference(const ConvShape& s, const std::vector<float>& x,
                                       const std::vector<float>& w, const float* bias,
                                       const float* residual, const Act& act);
std::vector<float> conv_test_run(Isa isa, const Threads& threads, const ConvShape& s, ConvAlgo algo,
                                 const std::vector<float>& x, const std::vector<float>& w,
                                 const float* bias, const float* residual, const Act& act);

}  // namespace infer::cpu::simd::testing
