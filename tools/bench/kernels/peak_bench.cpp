// The machine's FP32 FMA peak, the yardstick tools/bench/run_bench.py divides achieved
// GFLOP/s by: a loop of independent fused multiply-adds on registers (no memory traffic),
// in an AVX-512 and an AVX2+FMA variant, on 1 thread and on every hardware thread. Where
// the CPU has them, the reduced-precision peaks the same way: BF16 (AVX512_BF16
// `vdpbf16ps`: 32 products and adds per instruction, counted as 64 FLOPs) and INT8
// (AVX512-VNNI `vpdpbusd`: 64 u8 x s8 products and adds, 128 ops), reported apart from the
// FP32 peak (`reduced` in --json; `peak_gflops` stays the FP32 figure).
//
//   infer-bench-peak [--json] [--seconds S] [--threads N]
//
// The variants are compiled through function attributes (target("avx512f") /
// target("avx2,fma")) rather than global flags, so the binary runs on any x86-64 and only
// calls a variant the CPU has (__builtin_cpu_supports). Sixteen accumulators hide the
// FMA latency (4 cycles) on two FMA pipes with room to spare (12 for AVX2, which has
// only 16 registers). Each figure is the best of three runs: on a shared machine the
// best is the closest to what the hardware can do.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define INFER_PEAK_X86 1
#endif

namespace {

constexpr int kAccumulators = 16;

// Every variant runs `iterations` rounds of kAccumulators FMAs and returns the FLOPs done
// (2 per lane per FMA); the sum of the accumulators goes to *sink so nothing is dead code.
using PeakFn = double (*)(long iterations, float* sink);

double fma_scalar(long iterations, float* sink) {
  float acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = static_cast<float>(j) * 0.001f;
  const float b = 0.999999f, c = 1e-7f;
  for (long i = 0; i < iterations; ++i) {
    for (int j = 0; j < kAccumulators; ++j) acc[j] = acc[j] * b + c;
  }
  float s = 0;
  for (float a : acc) s += a;
  *sink = s;
  return 2.0 * kAccumulators * static_cast<double>(iterations);
}

#ifdef INFER_PEAK_X86
// The sum of every lane of kAccumulators float vectors (what *sink gets, so the loops are
// not dead code). Through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized
// on its own _mm256_undefined_pd.
__attribute__((target("avx512f"))) float sum_lanes(const __m512* acc) {
  __m512 s = acc[0];
  for (int j = 1; j < kAccumulators; ++j) s = _mm512_add_ps(s, acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float t = 0;
  for (float v : lanes) t += v;
  return t;
}

__attribute__((target("avx512f"))) double fma_avx512(long iterations, float* sink) {
  __m512 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j) * 0.001f);
  const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_fmadd_ps(acc[j], b, c);
  }
  *sink = sum_lanes(acc);
  return 2.0 * 16 * kAccumulators * static_cast<double>(iterations);
}

// AVX2 has 16 ymm registers: 16 accumulators plus the two constants would spill to the
// stack every iteration, so this variant keeps 12 (still 3x the latency x pipes product).
constexpr int kAvx2Accumulators = 12;

__attribute__((target("avx2,fma"))) double fma_avx2(long iterations, float* sink) {
  __m256 acc[kAvx2Accumulators];
  for (int j = 0; j < kAvx2Accumulators; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j) * 0.001f);
  const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kAvx2Accumulators; ++j) acc[j] = _mm256_fmadd_ps(acc[j], b, c);
  }
  __m256 s = acc[0];
  for (int j = 1; j < kAvx2Accumulators; ++j) s = _mm256_add_ps(s, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float t = 0;
  for (float v : lanes) t += v;
  *sink = t;
  return 2.0 * 8 * kAvx2Accumulators * static_cast<double>(iterations);
}

// vdpbf16ps: acc[i] += a[2i] * b[2i] + a[2i+1] * b[2i+1] over 16 lanes.
__attribute__((target("avx512f,avx512bf16"))) double dot_bf16(long iterations, float* sink) {
  __m512 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j) * 0.001f);
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80);  // bf16 1.0
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3380);  // bf16 ~6e-8
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], a, b);
  }
  *sink = sum_lanes(acc);
  return 2.0 * 32 * kAccumulators * static_cast<double>(iterations);
}

// vpdpbusd: acc[i] += sum of 4 u8 x s8 products over 16 lanes.
__attribute__((target("avx512f,avx512vnni"))) double dot_int8(long iterations, float* sink) {
  __m512i acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_set1_epi32(j);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_dpbusd_epi32(acc[j], a, b);
  }
  __m512i s = acc[0];
  for (int j = 1; j < kAccumulators; ++j) s = _mm512_add_epi32(s, acc[j]);
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  int64_t t = 0;
  for (int32_t v : lanes) t += v;
  *sink = static_cast<float>(t);
  return 2.0 * 64 * kAccumulators * static_cast<double>(iterations);
}
#endif

struct Variant {
  const char* name;
  PeakFn fn;
  const char* kind = "fp32";  // fp32 (the peak), bf16 or int8
};

std::vector<Variant> supported_variants() {
  std::vector<Variant> variants;
#ifdef INFER_PEAK_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) variants.push_back({"avx512", fma_avx512});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) variants.push_back({"avx2", fma_avx2});
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"))
    variants.push_back({"avx512_bf16", dot_bf16, "bf16"});
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"))
    variants.push_back({"avx512_vnni", dot_int8, "int8"});
#endif
  variants.push_back({"scalar", fma_scalar});
  return variants;
}

// GFLOP/s of `threads` threads each running fn for about `seconds`.
double measure(PeakFn fn, int threads, double seconds) {
  using Clock = std::chrono::steady_clock;
  // Calibrate the iteration count on one thread so that a run lasts about `seconds`.
  float sink = 0;
  long iterations = 1 << 16;
  for (;;) {
    const auto t0 = Clock::now();
    fn(iterations, &sink);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 0.02) {
      iterations = static_cast<long>(static_cast<double>(iterations) * seconds / s) + 1;
      break;
    }
    iterations *= 4;
  }
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<float> sinks(static_cast<size_t>(threads) * 16);
    std::vector<double> flops(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    const auto t0 = Clock::now();
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] { flops[static_cast<size_t>(t)] = fn(iterations, &sinks[static_cast<size_t>(t) * 16]); });
    }
    for (std::thread& th : pool) th.join();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    double total = 0;
    for (double f : flops) total += f;
    best = std::max(best, total / s / 1e9);
  }
  return best;
}

int usage(const char* why) {
  std::fprintf(stderr, "infer-bench-peak: error: %s\nusage: infer-bench-peak [--json] [--seconds S] [--threads N]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  double seconds = 0.3;
  int max_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if ((arg == "--seconds" || arg == "--threads") && i + 1 < argc) {
      const double v = std::atof(argv[++i]);
      if (v <= 0) return usage((arg + " wants a positive number").c_str());
      if (arg == "--seconds") seconds = v;
      else max_threads = static_cast<int>(v);
    } else {
      return usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  std::vector<int> thread_counts{1};
  if (max_threads > 1) thread_counts.push_back(max_threads);

  std::string out = "{\"results\":[", reduced;
  double best = 0;
  bool first = true;
  for (const Variant& v : supported_variants()) {
    const bool fp32 = std::strcmp(v.kind, "fp32") == 0;
    for (int threads : thread_counts) {
      const double gflops = measure(v.fn, threads, seconds);
      if (fp32) best = std::max(best, gflops);
      if (json) {
        char line[160];
        if (fp32) {
          std::snprintf(line, sizeof line, "%s{\"isa\":\"%s\",\"threads\":%d,\"gflops\":%.2f}", first ? "" : ",",
                        v.name, threads, gflops);
          out += line;
          first = false;
        } else {
          std::snprintf(line, sizeof line, "%s{\"kind\":\"%s\",\"isa\":\"%s\",\"threads\":%d,\"gops\":%.2f}",
                        reduced.empty() ? "" : ",", v.kind, v.name, threads, gflops);
          reduced += line;
        }
      } else {
        std::printf("%-11s %2d thread%s %9.2f %s\n", v.name, threads, threads == 1 ? " " : "s", gflops,
                    fp32 ? "GFLOP/s" : (std::strcmp(v.kind, "int8") == 0 ? "GOPS (int8)" : "GFLOP/s (bf16)"));
      }
    }
  }
  if (json) {
    char tail[96];
    std::snprintf(tail, sizeof tail, "],\"peak_gflops\":%.2f,\"max_threads\":%d,", best, max_threads);
    std::fputs((out + tail + "\"reduced\":[" + reduced + "]}\n").c_str(), stdout);
  } else {
    std::printf("peak: %.2f GFLOP/s (fp32)\n", best);
  }
  return 0;
}
