// Throughput of the vectorized elementwise and row kernels per ISA (elements/s and the
// bytes read + written per second): exp, tanh, gelu, add, softmax rows of 128 and 512,
// layernorm rows of 768. Single thread: these kernels are memory- or latency-bound per
// call and the plugin splits them across threads above them.
//   build/bin/infer-bench-vec [--benchmark_filter=softmax]
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "simd/isa.hpp"
#include "simd/layernorm.hpp"
#include "simd/softmax.hpp"
#include "simd/vec.hpp"

namespace {

using infer::cpu::simd::Isa;
namespace simd = infer::cpu::simd;

std::vector<float> data(size_t n, float lo, float hi) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void report(benchmark::State& state, size_t elements, size_t bytes_per_element) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * elements));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * elements * bytes_per_element));
}

// 64K elements: 256 KB in, 256 KB out, inside L2, so the math is what is measured.
constexpr size_t kN = 65536;

void unary(benchmark::State& state, Isa isa, simd::UnaryOp op) {
  const std::vector<float> x = data(kN, -5.0f, 5.0f);
  std::vector<float> y(kN);
  for (auto _ : state) {
    simd::vec_unary(isa, op, x.data(), y.data(), kN);
    benchmark::DoNotOptimize(y.data());
  }
  report(state, kN, 8);
}

void add(benchmark::State& state, Isa isa) {
  const std::vector<float> a = data(kN, -1, 1), b = data(kN, -1, 1);
  std::vector<float> y(kN);
  for (auto _ : state) {
    simd::vec_binary(isa, simd::BinaryOp::kAdd, a.data(), b.data(), y.data(), kN);
    benchmark::DoNotOptimize(y.data());
  }
  report(state, kN, 12);
}

void softmax(benchmark::State& state, Isa isa, size_t row) {
  const size_t rows = kN / row;
  const std::vector<float> x = data(kN, -8, 8);
  std::vector<float> y(kN);
  for (auto _ : state) {
    for (size_t r = 0; r < rows; ++r) simd::softmax_row(isa, x.data() + r * row, y.data() + r * row, row);
    benchmark::DoNotOptimize(y.data());
  }
  report(state, kN, 8);
}

void layernorm(benchmark::State& state, Isa isa, size_t row) {
  const size_t rows = kN / row;
  const std::vector<float> x = data(rows * row, -3, 3), g = data(row, 0.5f, 1.5f), b = data(row, -1, 1);
  std::vector<float> y(rows * row);
  for (auto _ : state) {
    for (size_t r = 0; r < rows; ++r)
      simd::layernorm_row(isa, x.data() + r * row, y.data() + r * row, row, g.data(), b.data(), 1e-5f);
    benchmark::DoNotOptimize(y.data());
  }
  report(state, rows * row, 8);
}

void register_all() {
  for (Isa isa : simd::supported_isas()) {
    const std::string s = simd::isa_name(isa);
    benchmark::RegisterBenchmark(("exp/" + s).c_str(), unary, isa, simd::UnaryOp::kExp);
    benchmark::RegisterBenchmark(("tanh/" + s).c_str(), unary, isa, simd::UnaryOp::kTanh);
    benchmark::RegisterBenchmark(("sigmoid/" + s).c_str(), unary, isa, simd::UnaryOp::kSigmoid);
    benchmark::RegisterBenchmark(("gelu/" + s).c_str(), unary, isa, simd::UnaryOp::kGelu);
    benchmark::RegisterBenchmark(("gelu_tanh/" + s).c_str(), unary, isa, simd::UnaryOp::kGeluTanh);
    benchmark::RegisterBenchmark(("add/" + s).c_str(), add, isa);
    benchmark::RegisterBenchmark(("softmax_128/" + s).c_str(), softmax, isa, size_t{128});
    benchmark::RegisterBenchmark(("softmax_512/" + s).c_str(), softmax, isa, size_t{512});
    benchmark::RegisterBenchmark(("layernorm_768/" + s).c_str(), layernorm, isa, size_t{768});
  }
}

}  // namespace

int main(int argc, char** argv) {
  return infer::cpu::simd::bench::run_benchmarks(argc, argv, register_all);
}
