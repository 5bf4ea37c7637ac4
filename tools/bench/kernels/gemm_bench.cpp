// SGEMM micro-benchmarks per ISA (GFLOP/s counter "GFLOPS"): square sizes, the GEMM
// shapes of ResNet-50's convolutions (M = output channels, N = H*W, K = C*kh*kw) and of a
// BERT-base encoder (M = 128 tokens), the M = 1 GEMV of an MLP, and prepacked vs raw B.
// /threads:1 or /threads:2 (std::threads splitting the tiles). Also FMA-loop peaks
// ("fma_peak" with ymm, "fma_peak_avx512" with zmm) to compare against.
//
//   build/bin/infer-bench-gemm --benchmark_filter=avx512
//
// Measured on the project machine ("AMD EPYC", 2 vCPUs shared with 5 other engineers'
// builds, load average 8-13 during the runs), 1 thread, GFLOP/s per CPU second (wall time
// was ~1.5x CPU time under that load, so wall-clock rates are not meaningful there):
//   FMA peak per core: ymm 108, zmm 215 (this CPU runs full 512-bit FMAs: two zmm FMAs
//   per cycle, so AVX-512 has twice AVX2's peak here, not the same as on Zen 4).
//   shape (M x N x K)                 avx512 raw / packed B    avx2 raw / packed B
//   square 256                          162 / 159                79 / 84
//   square 512                          158 / 175                74 / 79
//   square 1024                         150 / 166                68 / 78
//   r50 conv1   64 x 12544 x 147        114 / 131                56 / 71
//   r50 1x1     64 x 3136 x 64          124 / 142                69 / 79
//   r50 3x3     64 x 3136 x 576         119 / 134                54 / 61
//   r50 1x1    256 x 3136 x 64          143 / 148                61 / 65
//   r50 3x3    128 x 784 x 1152         141 / 154                62 / 81
//   r50 1x1    512 x 784 x 128          160 / 171                73 / 80
//   r50 3x3    256 x 196 x 2304         129 / 139                62 / 67
//   r50 1x1   1024 x 196 x 256          139 / 141                71 / 72
//   r50 3x3    512 x 49 x 4608           71 / 73                 37 / 33
//   r50 1x1   2048 x 49 x 512            85 / 78                 41 / 41
//   bert qkv   128 x 2304 x 768         134 / 148                74 / 80
//   bert out   128 x 768 x 768          145 / 156                78 / 87
//   bert ffn1  128 x 3072 x 768         124 / 136                74 / 76
//   bert ffn2  128 x 768 x 3072         123 / 128                73 / 82
//   gemv         1 x 512 x 784           25 / 43                 22 / 23
// i.e. 70-81% of the zmm peak on large shapes, 60-73% on BERT's, ~35% where N = 49
// (two 32-wide register strips cover 64 columns, and the tiles are short).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench_util.hpp"
#include "simd/gemm.hpp"

namespace {

using namespace infer::cpu::simd;
using bench::BenchThreads;
using bench::filled;

struct Buffer {
  explicit Buffer(size_t bytes) : p(std::aligned_alloc(64, (bytes + 63) / 64 * 64)) {}
  ~Buffer() { std::free(p); }
  void* p;
};

void run_gemm(benchmark::State& state, Isa isa, int64_t M, int64_t N, int64_t K, bool packed_b,
              int threads) {
  if (!isa_supported(isa)) {
    state.SkipWithError("isa not supported here");
    return;
  }
  const auto a = filled(static_cast<size_t>(M * K));
  const auto b = filled(static_cast<size_t>(K * N));
  std::vector<float> c(static_cast<size_t>(M * N));
  Buffer pb(packed_b_bytes(isa, K, N));
  GemmOperand B = GemmOperand::raw(b.data(), N);
  if (packed_b) {
    pack_b(isa, K, N, B, pb.p);
    B = GemmOperand::prepacked(pb.p);
  }
  BenchThreads th(threads);
  for (auto _ : state) {
    sgemm(isa, th, M, N, K, 1.0f, GemmOperand::raw(a.data(), K), B, 0.0f, c.data(), N);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(M) * N * K / 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

#if defined(__x86_64__)
// 12 independent chains of ymm FMAs: the per-core FP32 FMA peak (2 pipes x 8 lanes x 2).
__attribute__((target("avx2,fma"))) void fma_peak(benchmark::State& state) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 m = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  const int64_t iters = 1 << 20;
  for (auto _ : state) {
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
      for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, add);
    }
    for (int i = 0; i < 12; ++i) benchmark::DoNotOptimize(acc[i]);
  }
  state.counters["GFLOPS"] = benchmark::Counter(static_cast<double>(iters) * 12 * 8 * 2 / 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(fma_peak);

// The same with 24 chains of zmm FMAs (a core that splits zmm into two halves shows the
// ymm figure; one with full 512-bit FMA pipes, twice it).
__attribute__((target("avx512f"))) void fma_peak_avx512(benchmark::State& state) {
  if (!isa_supported(Isa::kAvx512)) {
    state.SkipWithError("isa not supported here");
    return;
  }
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 m = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
  const int64_t iters = 1 << 19;
  for (auto _ : state) {
    for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 24
      for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, add);
    }
    for (int i = 0; i < 24; ++i) benchmark::DoNotOptimize(acc[i]);
  }
  state.counters["GFLOPS"] = benchmark::Counter(static_cast<double>(iters) * 24 * 16 * 2 / 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(fma_peak_avx512);
#endif

void register_all() {
  struct Shape {
    const char* name;
    int64_t M, N, K;
  };
  const Shape shapes[] = {
      {"square256", 256, 256, 256},
      {"square512", 512, 512, 512},
      {"square1024", 1024, 1024, 1024},
      // ResNet-50 convolutions as GEMMs: M = out channels, N = H*W, K = C*kh*kw.
      {"r50_conv1_64x12544x147", 64, 12544, 147},
      {"r50_l1_1x1_64x3136x64", 64, 3136, 64},
      {"r50_l1_3x3_64x3136x576", 64, 3136, 576},
      {"r50_l1_1x1_256x3136x64", 256, 3136, 64},
      {"r50_l2_3x3_128x784x1152", 128, 784, 1152},
      {"r50_l2_1x1_512x784x128", 512, 784, 128},
      {"r50_l3_3x3_256x196x2304", 256, 196, 2304},
      {"r50_l3_1x1_1024x196x256", 1024, 196, 256},
      {"r50_l4_3x3_512x49x4608", 512, 49, 4608},
      {"r50_l4_1x1_2048x49x512", 2048, 49, 512},
      // BERT-base, sequence 128: QKV, attention output, FFN up and down.
      {"bert_qkv_128x2304x768", 128, 2304, 768},
      {"bert_out_128x768x768", 128, 768, 768},
      {"bert_ffn1_128x3072x768", 128, 3072, 768},
      {"bert_ffn2_128x768x3072", 128, 768, 3072},
      // MLP batch 1: a GEMV.
      {"gemv_1x512x784", 1, 512, 784},
  };
  for (Isa isa : supported_isas())
    for (const Shape& s : shapes)
      for (int packed = 0; packed < 2; ++packed)
        for (int threads : {1, 2}) {
          std::string name = std::string(isa_name(isa)) + "/" + s.name + (packed ? "/packedB" : "/rawB") +
                             "/threads:" + std::to_string(threads);
          auto* b = benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
            run_gemm(st, isa, s.M, s.N, s.K, packed != 0, threads);
          });
          b->Unit(benchmark::kMicrosecond);
          // One thread: rates per CPU second, which stay meaningful while the shared
          // machine is busy; two threads: wall time (the CPU time of one thread says
          // nothing about the other).
          if (threads > 1) b->UseRealTime();
        }
}

}  // namespace

int main(int argc, char** argv) {
  return infer::cpu::simd::bench::run_benchmarks(argc, argv, register_all);
}
