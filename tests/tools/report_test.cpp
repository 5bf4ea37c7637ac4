// The readable report: top-k selection, value formatting, and the per-output lines.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "report.hpp"

namespace infer::cli {
namespace {

template <typename T>
HostArray make(DataType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  HostArray array{dtype, std::move(shape), std::vector<uint8_t>(values.size() * sizeof(T))};
  if (!values.empty()) std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
  return array;
}

TEST(TopK, LargestFirstTiesByIndex) {
  const auto best = top_k({0.1, 3.0, -2.0, 3.0, 2.5}, 3);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0], (std::pair<int64_t, double>{1, 3.0}));
  EXPECT_EQ(best[1], (std::pair<int64_t, double>{3, 3.0}));
  EXPECT_EQ(best[2], (std::pair<int64_t, double>{4, 2.5}));
  EXPECT_EQ(top_k({5.0, 1.0}, 3).size(), 2u);
  EXPECT_TRUE(top_k({}, 3).empty());
}

TEST(TopK, NanRanksLast) {
  const auto best = top_k({std::nan(""), -1.0, 2.0}, 3);
  EXPECT_EQ(best[0].first, 2);
  EXPECT_EQ(best[1].first, 1);
  EXPECT_EQ(best[2].first, 0);
}

TEST(FormatElement, PerDtype) {
  EXPECT_EQ(format_element(make<int64_t>(DataType::kInt64, {1}, {-9007199254740993LL}), 0), "-9007199254740993");
  EXPECT_EQ(format_element(make<uint8_t>(DataType::kUInt8, {1}, {255}), 0), "255");
  EXPECT_EQ(format_element(make<uint8_t>(DataType::kBool, {2}, {1, 0}), 1), "false");
  EXPECT_EQ(format_element(make<float>(DataType::kFloat32, {1}, {0.123456789f}), 0), "0.123457");
  EXPECT_EQ(format_element(make<uint16_t>(DataType::kFloat16, {1}, {0x3E00}), 0), "1.5");
  EXPECT_EQ(format_element(make<float>(DataType::kComplex64, {1}, {1.0f, -2.0f}), 0), "(1+-2j)");
  EXPECT_EQ(element_as_double(make<int32_t>(DataType::kInt32, {1}, {-7}), 0).value_or(0), -7.0);
  EXPECT_FALSE(element_as_double(make<uint8_t>(DataType::kFloat8E5M2, {1}, {0}), 0).has_value());
}

TEST(RenderOutput, ClassScoresShowTopThreePerRow) {
  OutputReport output{"logits",
                      make<float>(DataType::kFloat32, {2, 4}, {0.5f, 2.0f, -1.0f, 1.0f, 3.0f, 0.0f, 0.25f, 4.0f}),
                      ""};
  EXPECT_EQ(render_output(output),
            "output logits: float32 [2,4]\n"
            "  row 0: top-1 class 1 (score 2), top-2 class 3 (score 1), top-3 class 0 (score 0.5)\n"
            "  row 1: top-1 class 3 (score 4), top-2 class 0 (score 3), top-3 class 2 (score 0.25)\n");
}

TEST(RenderOutput, OtherOutputsShowTheFirstValues) {
  OutputReport ids{"ids", make<int64_t>(DataType::kInt64, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), "out/ids.npy"};
  EXPECT_EQ(render_output(ids),
            "output ids: int64 [10] -> out/ids.npy\n"
            "  values: 0 1 2 3 4 5 6 7 ... (10 values)\n");
  OutputReport scalar{"loss", make<float>(DataType::kFloat32, {}, {0.75f}), ""};
  EXPECT_EQ(render_output(scalar), "output loss: float32 []\n  values: 0.75\n");
  OutputReport empty{"none", make<float>(DataType::kFloat32, {0, 4}, {}), ""};
  EXPECT_EQ(render_output(empty), "output none: float32 [0,4]\n");
}

TEST(RenderOutput, ManyRowsAreCut) {
  std::vector<float> values(25 * 2, 0.0f);
  OutputReport output{"p", make<float>(DataType::kFloat32, {25, 2}, values), ""};
  const std::string text = render_output(output);
  EXPECT_NE(text.find("  row 19: top-1 class 0 (score 0), top-2 class 1 (score 0)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("row 20:"), std::string::npos);
  EXPECT_NE(text.find("  ... 5 more rows\n"), std::string::npos);
}

TEST(RenderText, RunSummary) {
  RunReport report;
  report.model = "m.onnx";
  report.backends = {"example", "cpu"};
  report.inputs = {InputReport{"image", DataType::kFloat32, {1, 2}, ""}};
  report.outputs = {OutputReport{"y", make<float>(DataType::kFloat32, {1, 2}, {1.0f, 2.0f}), ""}};
  report.run_ms = 1.5;
  report.run_stats = RunStats{4, 2560, 1.5};
  EXPECT_EQ(render_text(report),
            "model: m.onnx\n"
            "backends: example, cpu\n"
            "input image: float32 [1,2] (generated)\n"
            "output y: float32 [1,2]\n"
            "  row 0: top-1 class 1 (score 2), top-2 class 0 (score 1)\n"
            "run: 1.500 ms\n"
            "per run: 4 copies, 2560 bytes\n");
}

TEST(RenderText, Benchmark) {
  RunReport report;
  report.model = "m.onnx";
  report.backends = {"cpu"};
  report.inputs = {InputReport{"image", DataType::kFloat32, {8, 1}, "x.npy"}};
  BenchmarkReport bench;
  bench.warmup = 5;
  bench.latency = LatencySummary{50, 1, 2, 3, 1.5, 0.5, 4};
  bench.throughput_per_s = 600;
  bench.batch_size = 8;
  report.benchmark = bench;
  report.peak_rss_mb = 12.25;
  EXPECT_EQ(render_text(report),
            "model: m.onnx\n"
            "backends: cpu\n"
            "input image: float32 [8,1] from x.npy\n"
            "benchmark: 50 iterations after 5 warmup runs\n"
            "latency (ms): p50 1.000  p90 2.000  p99 3.000  mean 1.500  min 0.500  max 4.000\n"
            "throughput: 600.0 runs/s, 4800.0 samples/s (batch 8)\n"
            "peak RSS: 12.2 MB\n");
}

TEST(RenderJson, BenchmarkObject) {
  RunReport report;
  report.model = "m.onnx";
  report.backends = {"cpu"};
  BenchmarkReport bench;
  bench.warmup = 1;
  bench.latency = LatencySummary{2, 1, 2, 3, 1.5, 0.5, 4};
  bench.throughput_per_s = 600;
  report.benchmark = bench;
  report.peak_rss_mb = 12.5;
  EXPECT_EQ(render_json(report),
            "{\"model\":\"m.onnx\",\"backends\":[\"cpu\"],\"inputs\":[],\"outputs\":[],\"iterations\":2,\"warmup\":1,"
            "\"latency_ms\":{\"p50\":1,\"p90\":2,\"p99\":3,\"mean\":1.5,\"min\":0.5,\"max\":4},"
            "\"throughput_per_s\":600,\"peak_rss_mb\":12.5}\n");
}

}  // namespace
}  // namespace infer::cli
