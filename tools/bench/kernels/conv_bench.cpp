// Convolution micro-benchmarks per ISA and algorithm (counter "GFLOPS" = direct-conv
// FLOPs 2 * M * C/g * kh * kw * OH * OW per image / time, so Winograd's figure is its
// effective rate): ResNet-50's layer shapes at batch 1 (im2col + GEMM, direct 1x1 GEMM,
// Winograd F(4x4, 3x3) next to GEMM for every 3x3 stride-1 shape) and MobileNetV2's
// depthwise shapes. Names: <layer>/<algo>/<isa>/threads:<n>.
//
//   build/bin/infer-bench-conv --benchmark_filter='avx512.*threads:2'
//   build/bin/infer-bench-conv --benchmark_filter='res3x3'
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "simd/conv.hpp"

namespace {

using namespace infer::cpu::simd;
using bench::BenchThreads;
using bench::filled;

struct Layer {
  std::string name;
  int64_t C, M, G, H, W, k, stride, pad;
};

ConvShape shape_of(const Layer& l) {
  ConvShape s;
  s.batch = 1;
  s.in_channels = l.C;
  s.out_channels = l.M;
  s.groups = l.G;
  s.rank = 2;
  for (int d = 0; d < 2; ++d) {
    s.in[d] = d == 0 ? l.H : l.W;
    s.kernel[d] = l.k;
    s.stride[d] = l.stride;
    s.dilation[d] = 1;
    s.pad_begin[d] = l.pad;
    s.out[d] = (s.in[d] + 2 * l.pad - l.k) / l.stride + 1;
  }
  return s;
}

void run_conv(benchmark::State& state, const Layer& l, ConvAlgo algo, Isa isa, int threads) {
  const ConvShape s = shape_of(l);
  const auto x = filled(static_cast<size_t>(s.in_channels * s.in_size()));
  const auto w = filled(static_cast<size_t>(s.out_channels * s.in_channels / s.groups * s.kernel_size()));
  const auto b = filled(static_cast<size_t>(s.out_channels));
  std::vector<float> y(static_cast<size_t>(s.out_channels * s.out_size()));
  const size_t bytes = conv_packed_bytes(isa, s, algo);
  void* packed = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  conv_pack_weights(isa, s, algo, w.data(), packed);
  BenchThreads pool(threads);
  const Act relu{ActKind::kRelu, 0, 0};
  for (auto _ : state) {
    conv_forward(isa, pool, s, packed, x.data(), b.data(), nullptr, relu, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  std::free(packed);
  const double flops = 2.0 * static_cast<double>(s.out_channels * s.in_channels / s.groups *
                                                 s.kernel_size() * s.out_size());
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

const std::vector<Layer>& layers() {
  static const std::vector<Layer> v = {
      // ResNet-50 (torchvision v1.5: the stride sits on the 3x3 conv), batch 1.
      {"res_conv1_7x7s2_3to64_224", 3, 64, 1, 224, 224, 7, 2, 3},
      {"res1x1_64to64_56", 64, 64, 1, 56, 56, 1, 1, 0},
      {"res3x3_64to64_56", 64, 64, 1, 56, 56, 3, 1, 1},
      {"res1x1_64to256_56", 64, 256, 1, 56, 56, 1, 1, 0},
      {"res1x1_256to64_56", 256, 64, 1, 56, 56, 1, 1, 0},
      {"res1x1_256to128_56", 256, 128, 1, 56, 56, 1, 1, 0},
      {"res3x3s2_128to128_56", 128, 128, 1, 56, 56, 3, 2, 1},
      {"res1x1s2_256to512_56", 256, 512, 1, 56, 56, 1, 2, 0},
      {"res3x3_128to128_28", 128, 128, 1, 28, 28, 3, 1, 1},
      {"res1x1_128to512_28", 128, 512, 1, 28, 28, 1, 1, 0},
      {"res1x1_512to128_28", 512, 128, 1, 28, 28, 1, 1, 0},
      {"res3x3s2_256to256_28", 256, 256, 1, 28, 28, 3, 2, 1},
      {"res1x1s2_512to1024_28", 512, 1024, 1, 28, 28, 1, 2, 0},
      {"res3x3_256to256_14", 256, 256, 1, 14, 14, 3, 1, 1},
      {"res1x1_256to1024_14", 256, 1024, 1, 14, 14, 1, 1, 0},
      {"res1x1_1024to256_14", 1024, 256, 1, 14, 14, 1, 1, 0},
      {"res3x3s2_512to512_14", 512, 512, 1, 14, 14, 3, 2, 1},
      {"res1x1s2_1024to2048_14", 1024, 2048, 1, 14, 14, 1, 2, 0},
      {"res3x3_512to512_7", 512, 512, 1, 7, 7, 3, 1, 1},
      {"res1x1_512to2048_7", 512, 2048, 1, 7, 7, 1, 1, 0},
      {"res1x1_2048to512_7", 2048, 512, 1, 7, 7, 1, 1, 0},
      // MobileNetV2 pointwise (small K or narrow N) and the first 3x3 stride-2 layer.
      {"mbv2_conv1_3to32_224s2", 3, 32, 1, 224, 224, 3, 2, 1},
      {"mbv2_1x1_16to96_112", 16, 96, 1, 112, 112, 1, 1, 0},
      {"mbv2_1x1_96to24_56", 96, 24, 1, 56, 56, 1, 1, 0},
      {"mbv2_1x1_24to144_56", 24, 144, 1, 56, 56, 1, 1, 0},
      {"mbv2_1x1_144to24_56", 144, 24, 1, 56, 56, 1, 1, 0},
      {"mbv2_1x1_320to1280_7", 320, 1280, 1, 7, 7, 1, 1, 0},
      // MobileNetV2 depthwise 3x3, batch 1.
      {"mbv2_dw_32_112", 32, 32, 32, 112, 112, 3, 1, 1},
      {"mbv2_dw_96_112s2", 96, 96, 96, 112, 112, 3, 2, 1},
      {"mbv2_dw_144_56", 144, 144, 144, 56, 56, 3, 1, 1},
      {"mbv2_dw_144_56s2", 144, 144, 144, 56, 56, 3, 2, 1},
      {"mbv2_dw_192_28", 192, 192, 192, 28, 28, 3, 1, 1},
      {"mbv2_dw_192_28s2", 192, 192, 192, 28, 28, 3, 2, 1},
      {"mbv2_dw_384_14", 384, 384, 384, 14, 14, 3, 1, 1},
      {"mbv2_dw_576_14", 576, 576, 576, 14, 14, 3, 1, 1},
      {"mbv2_dw_576_14s2", 576, 576, 576, 14, 14, 3, 2, 1},
      {"mbv2_dw_960_7", 960, 960, 960, 7, 7, 3, 1, 1},
  };
  return v;
}

int register_all() {
  for (Isa isa : supported_isas()) {
    for (const Layer& l : layers()) {
      const ConvShape s = shape_of(l);
      std::vector<ConvAlgo> algos;
      if (conv_algo_supports(ConvAlgo::kDepthwise, s)) {
        algos = {ConvAlgo::kDepthwise};
      } else {
        algos = {ConvAlgo::kGemm};
        if (conv_algo_supports(ConvAlgo::kWinograd, s)) algos.push_back(ConvAlgo::kWinograd);
      }
      for (ConvAlgo algo : algos)
        for (int threads : {1, 2}) {
          const std::string name = l.name + "/" + conv_algo_name(algo) + "/" + isa_name(isa) +
                                   "/threads:" + std::to_string(threads);
          benchmark::RegisterBenchmark(name.c_str(), [l, algo, isa, threads](benchmark::State& st) {
            run_conv(st, l, algo, isa, threads);
          })->Unit(benchmark::kMillisecond)->UseRealTime();
        }
    }
  }
  return 0;
}

[[maybe_unused]] const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
