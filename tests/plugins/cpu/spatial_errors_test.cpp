// Bad input to the spatial and signal kernels (pooling, Resize, RoiAlign,
// NonMaxSuppression, MaxUnpool, GridSample, DFT/STFT) gives errors that name the node and
// the problem; plus hand-computed cases for behaviour the ONNX node tests do not cover
// (column-major MaxPool indices, negative int8 pooling with padding, tf_crop_and_resize
// extrapolation, RoiAlign max mode, NMS with center boxes and a score threshold, onesided
// DFT, symmetric windows, LpPool with padding, MaxUnpool).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuSpatial : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error);
    ASSERT_TRUE(plugin_) << error;
  }
  void TearDown() override {
    if (plugin_) {
      EXPECT_EQ(plugin_->host().live_allocations(), 0) << "leaked host memory";
    }
  }
  // Builds a one-node graph and runs it once.
  RunResult run1(const std::string& op, const std::vector<TensorSpec>& ins,
                 const std::vector<TensorSpec>& outs, const std::vector<AttrSpec>& attrs,
                 int64_t opset, const std::string& name, const std::vector<HostTensor>& feeds) {
    GraphBuilder g;
    return run_graph(*plugin_, g.single_node_graph(op, ins, outs, attrs, opset, name), feeds);
  }
  std::unique_ptr<PluginHandle> plugin_;
};

TensorSpec f32(const std::string& n, std::vector<int64_t> d) { return TensorSpec::f32(n, d); }
TensorSpec i64(const std::string& n, std::vector<int64_t> d) { return TensorSpec::i64(n, d); }

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
}

// ---------------------------------------------------------------- bad input

TEST_F(CpuSpatial, RoiAlignBatchIndexOutOfRange) {
  RunResult r = run1("RoiAlign", {f32("x", {2, 1, 4, 4}), f32("rois", {2, 4}), i64("b", {2})},
                     {f32("y", {2, 1, 1, 1})}, {}, 16, "roi",
                     {HostTensor::f32({2, 1, 4, 4}, std::vector<float>(32, 1.0f)),
                      HostTensor::f32({2, 4}, {0, 0, 1, 1, 0, 0, 2, 2}), HostTensor::i64({2}, {1, 2})});
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'roi' (RoiAlign): batch_indices[1] = 2 out of range for batch size 2");
}

TEST_F(CpuSpatial, NonMaxSuppressionShapeAndThresholdErrors) {
  RunResult r = run1("NonMaxSuppression", {f32("boxes", {1, 3, 4}), f32("scores", {2, 1, 3})},
                     {i64("sel", {-1, 3})}, {}, 11, "nms",
                     {HostTensor::f32({1, 3, 4}, std::vector<float>(12)),
                      HostTensor::f32({2, 1, 3}, std::vector<float>(6))});
  EXPECT_EQ(r.status.message,
            "node 'nms' (NonMaxSuppression): scores has shape [2,1,3], expected [1, classes, 3] "
            "for boxes [1,3,4]");
  r = run1("NonMaxSuppression",
           {f32("boxes", {1, 1, 4}), f32("scores", {1, 1, 1}), i64("max", {1}), f32("iou", {1})},
           {i64("sel", {-1, 3})}, {}, 11, "nms",
           {HostTensor::f32({1, 1, 4}, {0, 0, 1, 1}), HostTensor::f32({1, 1, 1}, {0.5f}),
            HostTensor::i64({1}, {3}), HostTensor::f32({1}, {1.5f})});
  EXPECT_EQ(r.status.message,
            "node 'nms' (NonMaxSuppression): iou_threshold must be in [0, 1], got 1.5");
}

TEST_F(CpuSpatial, ResizeNeedsExactlyOneOfScalesAndSizes) {
  const std::vector<TensorSpec> ins = {f32("x", {1, 1, 2, 2}), TensorSpec::omitted(),
                                       f32("scales", {-1}), i64("sizes", {-1})};
  const HostTensor x = HostTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4});
  RunResult both = run1("Resize", ins, {f32("y", {-1, -1, -1, -1})}, {}, 13, "rs",
                        {x, HostTensor::f32({4}, {1, 1, 2, 2}), HostTensor::i64({4}, {1, 1, 4, 4})});
  EXPECT_EQ(both.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(both.status.message,
            "node 'rs' (Resize): both scales and sizes are given: exactly one of them must be "
            "non-empty");
  RunResult neither = run1("Resize", ins, {f32("y", {-1, -1, -1, -1})}, {}, 13, "rs",
                           {x, HostTensor::f32({0}, {}), HostTensor::i64({0}, {})});
  EXPECT_EQ(neither.status.message,
            "node 'rs' (Resize): neither scales nor sizes is given: exactly one of them must be "
            "non-empty");
  RunResult count = run1("Resize", {f32("x", {1, 1, 2, 2}), TensorSpec::omitted(), f32("s", {3})},
                         {f32("y", {-1, -1, -1, -1})}, {}, 13, "rs",
                         {x, HostTensor::f32({3}, {1, 2, 2})});
  EXPECT_EQ(count.status.message,
            "node 'rs' (Resize): scales has 3 values, expected 4 for input [1,1,2,2]");
}

TEST_F(CpuSpatial, PadsInconsistentWithTheRank) {
  // Known rank: refused when the node is compiled.
  GraphBuilder g;
  const infer_graph_view* graph = g.single_node_graph(
      "MaxPool", {f32("x", {1, 1, 4, 4})}, {f32("y", {1, 1, 3, 3})},
      {AttrSpec::Ints("kernel_shape", {2, 2}), AttrSpec::Ints("pads", {1, 1, 1})}, 12, "pool");
  StatusInfo st;
  EXPECT_FALSE(CompiledGraph::compile(*plugin_, graph, &st));
  EXPECT_EQ(st.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(st.message, "node 'pool' (MaxPool): cpu: MaxPool pads has 3 values, expected 4");
  // Unknown rank: the run finds out.
  TensorSpec x = f32("x", {});
  x.unknown_rank = true;
  RunResult r = run1("Conv", {x, f32("w", {1, 1, 2, 2})}, {f32("y", {-1, -1, -1, -1})},
                     {AttrSpec::Ints("pads", {0, 1, 0})}, 11, "conv",
                     {HostTensor::f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f)),
                      HostTensor::f32({1, 1, 2, 2}, {1, 1, 1, 1})});
  EXPECT_EQ(r.status.message, "node 'conv' (Conv): pads has 3 values, expected 4");
}

TEST_F(CpuSpatial, MaxUnpoolIndexOutOfRange) {
  const std::vector<AttrSpec> attrs = {AttrSpec::Ints("kernel_shape", {2, 2}),
                                       AttrSpec::Ints("strides", {2, 2})};
  RunResult r = run1("MaxUnpool", {f32("x", {1, 1, 1, 1}), i64("i", {1, 1, 1, 1})},
                     {f32("y", {1, 1, 2, 2})}, attrs, 11, "unpool",
                     {HostTensor::f32({1, 1, 1, 1}, {5}), HostTensor::i64({1, 1, 1, 1}, {4})});
  EXPECT_EQ(r.status.message,
            "node 'unpool' (MaxUnpool): index 4 (element 0 of I) out of range for the unpooled "
            "shape [1,1,2,2] of 4 elements");
  r = run1("MaxUnpool", {f32("x", {1, 1, 1, 1}), i64("i", {1, 1, 1, 1})}, {f32("y", {1, 1, 2, 2})},
           attrs, 11, "unpool", {HostTensor::f32({1, 1, 1, 1}, {5}), HostTensor::i64({1, 1, 1, 1}, {3})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 0, 0, 5}));
}

TEST_F(CpuSpatial, GridDftAndStftShapeErrors) {
  RunResult r = run1("GridSample", {f32("x", {1, 1, 2, 2}), f32("g", {1, 3, 3, 3})},
                     {f32("y", {-1, -1, -1, -1})}, {}, 16, "gs",
                     {HostTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4}),
                      HostTensor::f32({1, 3, 3, 3}, std::vector<float>(27))});
  EXPECT_EQ(r.status.message,
            "node 'gs' (GridSample): grid has shape [1,3,3,3], expected [1, H_out, W_out, 2] for "
            "X [1,1,2,2]");
  r = run1("DFT", {f32("x", {1, 4, 1})}, {f32("y", {-1, -1, -1})}, {AttrSpec::Int("axis", 2)}, 17,
           "dft", {HostTensor::f32({1, 4, 1}, {1, 2, 3, 4})});
  EXPECT_EQ(r.status.message,
            "node 'dft' (DFT): axis 2 out of range for input [1,4,1] (the last dim holds "
            "real/imaginary parts)");
  r = run1("STFT", {f32("s", {1, 16, 1}), i64("step", {}), f32("w", {4}), i64("len", {})},
           {f32("y", {-1, -1, -1, -1})}, {}, 17, "stft",
           {HostTensor::f32({1, 16, 1}, std::vector<float>(16)), HostTensor::i64({}, {2}),
            HostTensor::f32({4}, {1, 1, 1, 1}), HostTensor::i64({}, {8})});
  EXPECT_EQ(r.status.message, "node 'stft' (STFT): window has 4 values but frame_length is 8");
}

// ------------------------------------------------------- hand-computed cases

TEST_F(CpuSpatial, MaxPoolColumnMajorIndices) {
  // x = [[1, 2, 9], [8, 3, 4]]: the 2x2 windows peak at (1,0) and (0,2). Column-major
  // indices are h + w * H: 1 and 4 (row-major would be 3 and 2).
  RunResult r = run1("MaxPool", {f32("x", {1, 1, 2, 3})},
                     {f32("y", {1, 1, 1, 2}), i64("i", {1, 1, 1, 2})},
                     {AttrSpec::Ints("kernel_shape", {2, 2}), AttrSpec::Int("storage_order", 1)},
                     12, "pool", {HostTensor::f32({1, 1, 2, 3}, {1, 2, 9, 8, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{8, 9}));
  EXPECT_EQ(r.outputs[1].as<int64_t>(), (std::vector<int64_t>{1, 4}));
}

TEST_F(CpuSpatial, Int8MaxPoolIgnoresPadding) {
  // All values negative: a window half in the padding still takes the real value.
  RunResult r = run1("MaxPool", {TensorSpec::of("x", INFER_DTYPE_INT8, {1, 1, 1, 3})},
                     {TensorSpec::of("y", INFER_DTYPE_INT8, {1, 1, 1, 4})},
                     {AttrSpec::Ints("kernel_shape", {1, 2}), AttrSpec::Ints("pads", {0, 1, 0, 1})},
                     12, "pool",
                     {HostTensor::make<int8_t>(INFER_DTYPE_INT8, {1, 1, 1, 3}, {-5, -3, -7})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int8_t>(), (std::vector<int8_t>{-5, -3, -3, -7}));
}

TEST_F(CpuSpatial, LpPoolWithPadding) {
  // p = 1 sums absolute values; the padding adds nothing: |-1|, |-1|+|2|, |2|+|-3|.
  RunResult r = run1("LpPool", {f32("x", {1, 1, 1, 3})}, {f32("y", {1, 1, 1, 3})},
                     {AttrSpec::Ints("kernel_shape", {1, 2}), AttrSpec::Ints("pads", {0, 1, 0, 0}),
                      AttrSpec::Int("p", 1)},
                     11, "lp", {HostTensor::f32({1, 1, 1, 3}, {-1, 2, -3})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {1, 3, 5});
}

TEST_F(CpuSpatial, ResizeTfCropAndResizeExtrapolates) {
  // in - 1 = 3; x_in = 0.5 * 3 + x * (1.5 - 0.5) * 3 / 2 = 1.5, 3, 4.5 (outside).
  RunResult r = run1("Resize", {f32("x", {4}), f32("roi", {2}), TensorSpec::omitted(), i64("s", {1})},
                     {f32("y", {3})},
                     {AttrSpec::String("mode", "linear"),
                      AttrSpec::String("coordinate_transformation_mode", "tf_crop_and_resize"),
                      AttrSpec::Float("extrapolation_value", -1.0)},
                     13, "rs",
                     {HostTensor::f32({4}, {10, 20, 30, 40}), HostTensor::f32({2}, {0.5f, 1.5f}),
                      HostTensor::i64({1}, {3})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {25, 40, -1});
}

TEST_F(CpuSpatial, ResizeNearestCopiesRepeatedRowsAndExtrapolatesOutside) {
  // 3x3 -> 5x3, tf_crop_and_resize, roi rows [0, 1.5], columns [0.5, 1.5]: input rows
  // 0.75 y = 0, 0.75, 1.5 -> 0, 1, 1 (round_prefer_floor), then 2.25 and 3, past the last
  // row 2: extrapolated; input columns 1 + x = 1, 2 and 3 (outside). Row 2 repeats row 1;
  // outside reads -1 (as onnx.backend.test.case.node.resize.interpolate_nd computes it).
  // For int64 (8-byte elements) and float32 (4-byte).
  const std::vector<AttrSpec> attrs = {
      AttrSpec::String("mode", "nearest"),
      AttrSpec::String("coordinate_transformation_mode", "tf_crop_and_resize"),
      AttrSpec::Float("extrapolation_value", -1.0)};
  const std::vector<int64_t> want = {2, 3, -1, 5, 6, -1, 5, 6, -1, -1, -1, -1, -1, -1, -1};
  const HostTensor roi = HostTensor::f32({4}, {0.0f, 0.5f, 1.5f, 1.5f});
  const HostTensor sizes = HostTensor::i64({2}, {5, 3});
  RunResult r =
      run1("Resize", {i64("x", {3, 3}), f32("roi", {4}), TensorSpec::omitted(), i64("s", {2})},
           {i64("y", {5, 3})}, attrs, 13, "rs",
           {HostTensor::i64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), roi, sizes});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int64_t>(), want);
  r = run1("Resize", {f32("x", {3, 3}), f32("roi", {4}), TensorSpec::omitted(), i64("s", {2})},
           {f32("y", {5, 3})}, attrs, 13, "rs",
           {HostTensor::f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), roi, sizes});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), std::vector<float>(want.begin(), want.end()));
}

// Linear over the last two dims (float32 takes a one-pass path of its own, other dtypes
// the generic double passes): 6 planes of 5x7 to 13x4 (rows upsampled, columns
// downsampled), half_pixel and align_corners, against the separable definition of the
// ONNX reference computed here in double. The clamped edge rows read one input row twice.
TEST_F(CpuSpatial, ResizeLinearOverTheLastTwoDimsMatchesTheDefinition) {
  const int64_t planes = 6, in_h = 5, in_w = 7, out_h = 13, out_w = 4;
  std::vector<float> x(static_cast<size_t>(planes * in_h * in_w));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 % 101) / 10.0 - 5.0);
  for (const char* mode : {"half_pixel", "align_corners"}) {
    const bool corners = std::string(mode) == "align_corners";
    // Input coordinate and its two taps (indices clamped to the edge) for output o.
    auto taps = [&](int64_t o, int64_t in, int64_t out, int64_t* i0, int64_t* i1, double* r) {
      double c = corners ? (out == 1 ? 0.0 : static_cast<double>(o) * (in - 1) / (out - 1))
                         : (o + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
      c = std::clamp(c, -4.0, static_cast<double>(in) + 4.0);
      const double f = std::floor(c);
      *r = c - f;
      *i0 = std::clamp<int64_t>(static_cast<int64_t>(f), 0, in - 1);
      *i1 = std::clamp<int64_t>(static_cast<int64_t>(f) + 1, 0, in - 1);
    };
    std::vector<double> want(static_cast<size_t>(planes * out_h * out_w));
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t oy = 0; oy < out_h; ++oy)
        for (int64_t ox = 0; ox < out_w; ++ox) {
          int64_t y0, y1, x0, x1;
          double ry, rx;
          taps(oy, in_h, out_h, &y0, &y1, &ry);
          taps(ox, in_w, out_w, &x0, &x1, &rx);
          auto at = [&](int64_t yy, int64_t xx) {
            return static_cast<double>(x[static_cast<size_t>((p * in_h + yy) * in_w + xx)]);
          };
          const double top = (1 - rx) * at(y0, x0) + rx * at(y0, x1);
          const double bottom = (1 - rx) * at(y1, x0) + rx * at(y1, x1);
          want[static_cast<size_t>((p * out_h + oy) * out_w + ox)] = (1 - ry) * top + ry * bottom;
        }
    const std::vector<AttrSpec> attrs = {AttrSpec::String("mode", "linear"),
                                         AttrSpec::String("coordinate_transformation_mode", mode)};
    const HostTensor sizes = HostTensor::i64({4}, {2, 3, out_h, out_w});
    RunResult r = run1(
        "Resize",
        {f32("x", {2, 3, in_h, in_w}), TensorSpec::omitted(), TensorSpec::omitted(), i64("s", {4})},
        {f32("y", {2, 3, out_h, out_w})}, attrs, 13, "rs",
        {HostTensor::f32({2, 3, in_h, in_w}, x), sizes});
    ASSERT_TRUE(r.ok()) << r.status.message;
    const std::vector<float> got = r.outputs[0].as<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << mode << " element " << i;
  }
}

TEST_F(CpuSpatial, RoiAlignMaxTakesTheLargestWeightedCorner) {
  // One sample at (0.5, 0.5): each corner weighs 0.25. avg: 2.5; max (ONNX Runtime's
  // rule): max(0.25 * {1, 2, 3, 4}) = 1.
  const std::vector<TensorSpec> ins = {f32("x", {1, 1, 2, 2}), f32("rois", {1, 4}), i64("b", {1})};
  const std::vector<HostTensor> feeds = {HostTensor::f32({1, 1, 2, 2}, {1, 2, 3, 4}),
                                         HostTensor::f32({1, 4}, {0, 0, 1, 1}),
                                         HostTensor::i64({1}, {0})};
  RunResult avg = run1("RoiAlign", ins, {f32("y", {1, 1, 1, 1})},
                       {AttrSpec::Int("sampling_ratio", 1)}, 10, "roi", feeds);
  ASSERT_TRUE(avg.ok()) << avg.status.message;
  expect_near(avg.outputs[0].as<float>(), {2.5f});
  RunResult mx = run1("RoiAlign", ins, {f32("y", {1, 1, 1, 1})},
                      {AttrSpec::Int("sampling_ratio", 1), AttrSpec::String("mode", "max"),
                       AttrSpec::String("coordinate_transformation_mode", "output_half_pixel")},
                      16, "roi", feeds);
  ASSERT_TRUE(mx.ok()) << mx.status.message;
  expect_near(mx.outputs[0].as<float>(), {1.0f});
}

TEST_F(CpuSpatial, NonMaxSuppressionCenterBoxesAndScoreThreshold) {
  // Unit boxes centred at x = 0.5, 0.6 and 5: the first two overlap with IoU 0.9 / 1.1.
  // Class 0 keeps boxes 0 and 2; class 1 drops box 0 (score 0.1 <= 0.15) and keeps 1, 2.
  RunResult r = run1(
      "NonMaxSuppression",
      {f32("boxes", {1, 3, 4}), f32("scores", {1, 2, 3}), i64("max", {1}), f32("iou", {1}),
       f32("smin", {1})},
      {i64("sel", {-1, 3})}, {AttrSpec::Int("center_point_box", 1)}, 11, "nms",
      {HostTensor::f32({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 5, 5, 1, 1}),
       HostTensor::f32({1, 2, 3}, {0.9f, 0.8f, 0.7f, 0.1f, 0.95f, 0.2f}), HostTensor::i64({1}, {3}),
       HostTensor::f32({1}, {0.5f}), HostTensor::f32({1}, {0.15f})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(r.outputs[0].as<int64_t>(),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2}));
}

TEST_F(CpuSpatial, OnesidedDftAndSymmetricWindow) {
  // DFT of [1, 2, 3, 4]: 10, -2 + 2i, -2 (-2 - 2i dropped by onesided).
  RunResult r = run1("DFT", {f32("x", {1, 4, 1})}, {f32("y", {1, 3, 2})},
                     {AttrSpec::Int("onesided", 1)}, 17, "dft",
                     {HostTensor::f32({1, 4, 1}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {10, 0, -2, 2, -2, 0});
  // Symmetric Hann window of 5 points (N = 4), as float64.
  RunResult w = run1("HannWindow", {TensorSpec::of("n", INFER_DTYPE_INT32, {})},
                     {TensorSpec::of("y", INFER_DTYPE_FLOAT64, {5})},
                     {AttrSpec::Int("periodic", 0), AttrSpec::Int("output_datatype", 11)}, 17, "hann",
                     {HostTensor::i32({}, {5})});
  ASSERT_TRUE(w.ok()) << w.status.message;
  const std::vector<double> got = w.outputs[0].as<double>();
  const std::vector<double> want = {0, 0.5, 1, 0.5, 0};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
}

}  // namespace
}  // namespace infer::test
