// Bad input to the cpu plugin's indexing and data-movement kernels (out-of-range
// indices, inconsistent shapes, bad axes and attributes) must fail the run or the compile
// with a message naming the node and the problem, never read or write out of bounds. A
// few hand-computed cases cover behaviour the ONNX node tests do not (reductions at
// opset 18, negative pads, wrap mode, seeded training Dropout, ...).
#include <gtest/gtest.h>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuTensorErrors : public ::testing::Test {
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
  // Runs one node whose inputs are all graph inputs (dims unknown, so shapes come from
  // the values) and whose outputs have the given dtypes.
  RunResult run1(const std::string& op, const std::vector<HostTensor>& inputs,
                 const std::vector<infer_dtype>& outputs, const std::vector<AttrSpec>& attrs,
                 int64_t opset, const std::string& name = "n") {
    GraphBuilder g;
    std::vector<TensorSpec> ins, outs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      TensorSpec s = TensorSpec::of("in" + std::to_string(i), inputs[i].dtype, {});
      s.unknown_rank = true;
      ins.push_back(s);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      TensorSpec s = TensorSpec::of("out" + std::to_string(i), outputs[i], {});
      s.unknown_rank = true;
      outs.push_back(s);
    }
    const infer_graph_view* graph = g.single_node_graph(op, ins, outs, attrs, opset, name);
    return run_graph(*plugin_, graph, inputs);
  }
  std::unique_ptr<PluginHandle> plugin_;
};

HostTensor f32(std::vector<int64_t> dims, std::vector<float> v) {
  return HostTensor::f32(std::move(dims), v);
}
HostTensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return HostTensor::i64(std::move(dims), v);
}
constexpr infer_dtype kF = INFER_DTYPE_FLOAT32;
constexpr infer_dtype kI = INFER_DTYPE_INT64;

std::vector<float> iota_f(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// ---- Out-of-range indices ----

TEST_F(CpuTensorErrors, GatherElementsIndexOutOfRange) {
  RunResult r = run1("GatherElements", {f32({2, 3}, iota_f(6)), i64({2, 2}, {0, 1, 2, 3})}, {kF},
                     {AttrSpec::Int("axis", 1)}, 13, "ge");
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'ge' (GatherElements): index 3 out of range for axis 1 of size 3 (indices "
            "element 3)");
  r = run1("GatherElements", {f32({2, 3}, iota_f(6)), i64({1, 1}, {-4})}, {kF},
           {AttrSpec::Int("axis", 1)}, 13, "ge");
  EXPECT_EQ(r.status.message,
            "node 'ge' (GatherElements): index -4 out of range for axis 1 of size 3 (indices "
            "element 0)");
}

TEST_F(CpuTensorErrors, GatherNDIndexOutOfRange) {
  RunResult r =
      run1("GatherND", {f32({2, 2}, iota_f(4)), i64({2, 2}, {0, 1, 1, 2})}, {kF}, {}, 13, "gnd");
  EXPECT_EQ(r.status.message,
            "node 'gnd' (GatherND): index 2 out of range for axis 1 of size 2 (indices element 3)");
}

TEST_F(CpuTensorErrors, ScatterNDIndexOutOfRange) {
  RunResult r = run1("ScatterND", {f32({4}, iota_f(4)), i64({1, 1}, {4}), f32({1}, {9})}, {kF}, {},
                     16, "snd");
  EXPECT_EQ(
      r.status.message,
      "node 'snd' (ScatterND): index 4 out of range for axis 0 of size 4 (indices element 0)");
}

TEST_F(CpuTensorErrors, ScatterElementsIndexOutOfRange) {
  RunResult r =
      run1("ScatterElements", {f32({1, 5}, iota_f(5)), i64({1, 2}, {1, -6}), f32({1, 2}, {7, 8})},
           {kF}, {AttrSpec::Int("axis", 1)}, 13, "se");
  EXPECT_EQ(r.status.message,
            "node 'se' (ScatterElements): index -6 out of range for axis 1 of size 5 (indices "
            "element 1)");
}

// ---- Inconsistent shapes ----

TEST_F(CpuTensorErrors, GatherElementsShapes) {
  RunResult r = run1("GatherElements", {f32({2, 3}, iota_f(6)), i64({2}, {0, 1})}, {kF}, {}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (GatherElements): indices [2] must have the rank of data [2,3]");
  r = run1("GatherElements", {f32({2, 3}, iota_f(6)), i64({3, 1}, {0, 1, 0})}, {kF},
           {AttrSpec::Int("axis", 1)}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (GatherElements): indices [3,1] exceed data [2,3] on axis 0");
}

TEST_F(CpuTensorErrors, ScatterElementsShapes) {
  RunResult r =
      run1("ScatterElements", {f32({2, 2}, iota_f(4)), i64({1, 2}, {0, 1}), f32({2, 1}, {1, 2})},
           {kF}, {}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (ScatterElements): updates [2,1] must have the shape of indices [1,2]");
}

TEST_F(CpuTensorErrors, GatherNDShapes) {
  RunResult r = run1("GatherND", {f32({2, 2}, iota_f(4)), i64({1, 3}, {0, 0, 0})}, {kF}, {}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (GatherND): the last dim of indices [1,3] must be in [1, 2] for data [2,2] "
            "and batch_dims 0");
  r = run1("GatherND", {f32({2, 2}, iota_f(4)), i64({3, 1}, {0, 0, 0})}, {kF},
           {AttrSpec::Int("batch_dims", 1)}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (GatherND): batch dim 0 differs: data [2,2], indices [3,1]");
}

TEST_F(CpuTensorErrors, ScatterNDShapes) {
  RunResult r = run1("ScatterND", {f32({2, 2}, iota_f(4)), i64({1, 1}, {0}), f32({3}, {1, 2, 3})},
                     {kF}, {}, 16);
  EXPECT_EQ(r.status.message,
            "node 'n' (ScatterND): updates [3] must have shape [1,2] (indices [1,1], data [2,2])");
}

TEST_F(CpuTensorErrors, OtherShapeErrors) {
  RunResult r = run1("DepthToSpace", {f32({1, 3, 1, 1}, iota_f(3))}, {kF},
                     {AttrSpec::Int("blocksize", 2)}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (DepthToSpace): channels of [1,3,1,1] must be a multiple of blocksize^2 = 4");
  r = run1("ReverseSequence", {f32({2, 2}, iota_f(4)), i64({2}, {1, 3})}, {kF}, {}, 10);
  EXPECT_EQ(r.status.message,
            "node 'n' (ReverseSequence): sequence_lens[1] = 3 is out of range [0, 2]");
  r = run1("Tile", {f32({2}, iota_f(2)), i64({2}, {1, 2})}, {kF}, {}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (Tile): repeats [1,2] must have one value per dim of the input [2]");
  r = run1("Pad", {f32({3}, iota_f(3)), i64({2}, {-2, -2})}, {kF}, {}, 13);
  EXPECT_EQ(r.status.message, "node 'n' (Pad): pads [-2,-2] crop axis 0 of size 3 below zero");
  r = run1("Pad", {f32({0}, {}), i64({2}, {1, 0})}, {kF}, {AttrSpec::String("mode", "edge")}, 13);
  EXPECT_EQ(r.status.message, "node 'n' (Pad): cannot pad the empty axis 0 in edge mode");
  r = run1("Compress", {f32({2}, iota_f(2)), HostTensor::boolean({3}, {0, 0, 1})}, {kF}, {}, 11);
  EXPECT_EQ(r.status.message,
            "node 'n' (Compress): condition selects index 2, past the 2 input elements");
  r = run1("Trilu", {f32({3}, iota_f(3))}, {kF}, {}, 14);
  EXPECT_EQ(r.status.message, "node 'n' (Trilu): input [3] must have at least 2 dims");
}

// ---- Bad axes and attributes ----

TEST_F(CpuTensorErrors, BadAxes) {
  RunResult r = run1("GatherElements", {f32({2, 2}, iota_f(4)), i64({2, 2}, {0, 0, 0, 0})}, {kF},
                     {AttrSpec::Int("axis", 2)}, 13);
  EXPECT_EQ(r.status.message, "node 'n' (GatherElements): axis 2 is out of range for rank 2");
  r = run1("ScatterElements", {f32({2, 2}, iota_f(4)), i64({1, 1}, {0}), f32({1, 1}, {1})}, {kF},
           {AttrSpec::Int("axis", -3)}, 13);
  EXPECT_EQ(r.status.message, "node 'n' (ScatterElements): axis -3 is out of range for rank 2");
  r = run1("OneHot", {i64({2}, {0, 1}), f32({}, {3}), f32({2}, {0, 1})}, {kF},
           {AttrSpec::Int("axis", 2)}, 11);
  EXPECT_EQ(r.status.message, "node 'n' (OneHot): axis 2 is out of range for rank 2");
  r = run1("Unique", {f32({2, 2}, iota_f(4))}, {kF}, {AttrSpec::Int("axis", 5)}, 11);
  EXPECT_EQ(r.status.message, "node 'n' (Unique): axis 5 is out of range for rank 2");
}

TEST_F(CpuTensorErrors, ReductionNeedsItsOpset) {
  RunResult r = run1("ScatterND", {f32({2}, iota_f(2)), i64({1, 1}, {0}), f32({1}, {5})}, {kF},
                     {AttrSpec::String("reduction", "max")}, 16);
  EXPECT_EQ(r.status.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_NE(r.status.message.find("reduction 'max' is not supported at opset 16"),
            std::string::npos)
      << r.status.message;
}

TEST_F(CpuTensorErrors, DropoutRatioOutOfRange) {
  RunResult r = run1("Dropout", {f32({2}, {1, 2}), f32({}, {1.5f}), HostTensor::boolean({}, {1})},
                     {kF}, {}, 13);
  EXPECT_EQ(r.status.message, "node 'n' (Dropout): ratio 1.5 must be in [0, 1)");
}

// ---- Hand-computed behaviour ----

TEST_F(CpuTensorErrors, ScatterReductions) {
  // ScatterElements mul with a repeated index: 3 * 2 * 5 = 30 at position 1.
  RunResult r =
      run1("ScatterElements", {i64({4}, {1, 3, 1, 1}), i64({3}, {1, 1, 3}), i64({3}, {2, 5, 7})},
           {kI}, {AttrSpec::String("reduction", "mul")}, 16);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int64_t>(), (std::vector<int64_t>{1, 30, 1, 7}));
  // ScatterND max and min (opset 18) over rows of a [2, 2] tensor.
  r = run1("ScatterND", {f32({2, 2}, {1, 5, 3, 3}), i64({2, 1}, {0, 0}), f32({2, 2}, {4, 2, 0, 9})},
           {kF}, {AttrSpec::String("reduction", "max")}, 18);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{4, 9, 3, 3}));
  r = run1("ScatterND", {f32({2, 2}, {1, 5, 3, 3}), i64({1, 1}, {-1}), f32({1, 2}, {4, 2})}, {kF},
           {AttrSpec::String("reduction", "min")}, 18);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 5, 3, 2}));
}

TEST_F(CpuTensorErrors, GatherNDBatchDimsWithNegativeIndices) {
  // data [2, 3]; batch 0 takes element -1 (2), batch 1 takes element 0 (3).
  RunResult r = run1("GatherND", {f32({2, 3}, iota_f(6)), i64({2, 1}, {-1, 0})}, {kF},
                     {AttrSpec::Int("batch_dims", 1)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2, 3}));
}

TEST_F(CpuTensorErrors, PadModes) {
  // Wrap (opset 19): [0 1 2] padded by 2 and 1 -> [1 2 0 1 2 0].
  RunResult r = run1("Pad", {f32({3}, iota_f(3)), i64({2}, {2, 1})}, {kF},
                     {AttrSpec::String("mode", "wrap")}, 19);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2, 0, 1, 2, 0}));
  // Reflect with a crop at the front: reflect pads [0 1 2 3] to [.. 0 1 2 3 2 1], then
  // the negative begin removes the first element.
  r = run1("Pad", {f32({4}, iota_f(4)), i64({2}, {-1, 2})}, {kF},
           {AttrSpec::String("mode", "reflect")}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2, 3, 2, 1}));
  // Opset 2: pads and value are attributes.
  r = run1("Pad", {f32({1, 2}, {1, 2})}, {kF},
           {AttrSpec::Ints("pads", {0, 1, 1, 0}), AttrSpec::Float("value", 7)}, 2);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{7, 1, 2, 7, 7, 7}));
  // Opset 18 axes: only axis -1 is padded.
  r = run1("Pad", {f32({2, 1}, {1, 2}), i64({2}, {1, 0}), f32({}, {9}), i64({1}, {-1})}, {kF}, {},
           18);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{9, 1, 9, 2}));
}

TEST_F(CpuTensorErrors, SeededTrainingDropoutMatchesNumpy) {
  // numpy.random.seed(0); numpy.random.uniform(0, 1, 4) = [0.549, 0.715, 0.603, 0.545]:
  // with ratio 0.6 the middle two are kept and scaled by 1 / 0.4 = 2.5.
  RunResult r =
      run1("Dropout", {f32({4}, {1, 2, 3, 4}), f32({}, {0.6f}), HostTensor::boolean({}, {1})},
           {kF, INFER_DTYPE_BOOL}, {AttrSpec::Int("seed", 0)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  const std::vector<float> y = r.outputs[0].as<float>();
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 5.0f, 1e-5);
  EXPECT_NEAR(y[2], 7.5f, 1e-5);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(r.outputs[1].as<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0}));
}

TEST_F(CpuTensorErrors, UniqueUnsortedWithCounts) {
  RunResult r = run1("Unique", {f32({6}, {2, 1, 1, 3, 4, 3})}, {kF, kI, kI, kI},
                     {AttrSpec::Int("sorted", 0)}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(r.outputs[1].as<int64_t>(), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(r.outputs[2].as<int64_t>(), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(r.outputs[3].as<int64_t>(), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST_F(CpuTensorErrors, OneHotOutOfRangeIndexGivesOffRow) {
  // Index 3 is outside [-3, 2]: its row is all off; -1 selects the last class.
  RunResult r = run1("OneHot", {i64({2}, {3, -1}), f32({}, {3}), f32({2}, {0, 1})}, {kF}, {}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 0, 0, 0, 0, 1}));
}

TEST_F(CpuTensorErrors, OldOpsetsAndEmptySlices) {
  // Reshape-1 takes its shape as an attribute; Concat-1 defaults to axis 1.
  RunResult r =
      run1("Reshape", {f32({2, 3}, iota_f(6))}, {kF}, {AttrSpec::Ints("shape", {3, -1})}, 1);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{3, 2}));
  r = run1("Concat", {f32({1, 1}, {1}), f32({1, 2}, {2, 3})}, {kF}, {}, 1);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{1, 3}));
  // A negative step over an empty axis gives an empty result.
  r = run1("Slice", {f32({0}, {}), i64({1}, {-1}), i64({1}, {-100}), i64({1}, {0}), i64({1}, {-1})},
           {kF}, {}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{0}));
  // Trilu with a k far beyond the matrix keeps everything (lower) or nothing (upper).
  r = run1("Trilu", {f32({2, 2}, {1, 2, 3, 4}), i64({}, {INT64_MAX})}, {kF},
           {AttrSpec::Int("upper", 0)}, 14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2, 3, 4}));
  r = run1("Trilu", {f32({2, 2}, {1, 2, 3, 4}), i64({}, {INT64_MAX})}, {kF}, {}, 14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace infer::test
