// Recurrent and quantized ops of the cpu plugin beyond the ONNX node tests: bad inputs
// (wrong weight shapes for hidden_size, sequence lengths past the sequence, per-axis
// scales of the wrong length, mismatched zero points) give errors naming the problem,
// and small cases computed by hand check behaviour the suite does not cover (one LSTM
// step, GRU's linear_before_reset, reverse/bidirectional RNNs over shorter sequences in
// layout 1, activations with alpha/beta, rounding half to even, per-row/per-column and
// per-channel zero points and scales).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "infer/test_support/test_support.hpp"

namespace infer::test {
namespace {

class CpuRnnQuant : public ::testing::Test {
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

  // Runs one node named "n". Inputs: std::nullopt for an omitted one. Outputs: a dtype
  // each, or UNDEFINED for an omitted one.
  RunResult run(const std::string& op, const std::vector<std::optional<HostTensor>>& inputs,
                const std::vector<infer_dtype>& outputs, const std::vector<AttrSpec>& attrs,
                int64_t opset) {
    GraphBuilder g;
    std::vector<TensorSpec> ins;
    std::vector<HostTensor> feed;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i]) {
        ins.push_back(TensorSpec::omitted());
        continue;
      }
      ins.push_back(TensorSpec::of("in" + std::to_string(i), inputs[i]->dtype, inputs[i]->dims));
      feed.push_back(*inputs[i]);
    }
    std::vector<TensorSpec> outs;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i] == INFER_DTYPE_UNDEFINED) {
        outs.push_back(TensorSpec::omitted());
        continue;
      }
      TensorSpec s = TensorSpec::of("out" + std::to_string(i), outputs[i], {});
      s.unknown_rank = true;
      outs.push_back(s);
    }
    const infer_graph_view* graph = g.single_node_graph(op, ins, outs, attrs, opset, "n");
    return run_graph(*plugin_, graph, feed);
  }

  std::unique_ptr<PluginHandle> plugin_;
};

constexpr infer_dtype kF32 = INFER_DTYPE_FLOAT32;
constexpr infer_dtype kU8 = INFER_DTYPE_UINT8;
constexpr infer_dtype kI8 = INFER_DTYPE_INT8;
constexpr infer_dtype kI32 = INFER_DTYPE_INT32;
constexpr infer_dtype kNone = INFER_DTYPE_UNDEFINED;

HostTensor u8(std::vector<int64_t> dims, const std::vector<uint8_t>& v) {
  return HostTensor::make(kU8, std::move(dims), v);
}
HostTensor i8(std::vector<int64_t> dims, const std::vector<int8_t>& v) {
  return HostTensor::make(kI8, std::move(dims), v);
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void expect_near(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "element " << i;
}

// ---- LSTM / GRU / RNN computed by hand ----------------------------------------------

TEST_F(CpuRnnQuant, LstmOneStepByHand) {
  // hidden 1, input 1: gates i, o, f, c. x = 2, h0 = 0.5, c0 = -1, with peepholes.
  const double wi = 0.1, wo = -0.2, wf = 0.3, wc = 0.4, ri = 0.5, ro = 0.6, rf = -0.7, rc = 0.8;
  const double bi = 0.01, bo = 0.02, bf = 0.03, bc = 0.04, pi = 0.2, po = 0.3, pf = 0.4;
  const double x = 2, h0 = 0.5, c0 = -1;
  const double i = sigmoid(wi * x + ri * h0 + bi + pi * c0);
  const double f = sigmoid(wf * x + rf * h0 + bf + pf * c0);
  const double ct = std::tanh(wc * x + rc * h0 + bc);
  const double c = f * c0 + i * ct;
  const double o = sigmoid(wo * x + ro * h0 + bo + po * c);
  const double h = o * std::tanh(c);
  auto f32 = [](std::vector<int64_t> d, std::vector<double> v) {
    return HostTensor::f32(std::move(d), std::vector<float>(v.begin(), v.end()));
  };
  // B holds Wb then Rb; the Rb half is all zero, so each gate's bias is its Wb.
  RunResult r =
      run("LSTM",
          {f32({1, 1, 1}, {x}), f32({1, 4, 1}, {wi, wo, wf, wc}), f32({1, 4, 1}, {ri, ro, rf, rc}),
           f32({1, 8}, {bi, bo, bf, bc, 0, 0, 0, 0}), std::nullopt, f32({1, 1, 1}, {h0}),
           f32({1, 1, 1}, {c0}), f32({1, 3}, {pi, po, pf})},
          {kF32, kF32, kF32}, {AttrSpec::Int("hidden_size", 1)}, 14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {h});
  expect_near(r.outputs[1].as<float>(), {h});
  expect_near(r.outputs[2].as<float>(), {c});
}

TEST_F(CpuRnnQuant, LstmInputForgetCouplesTheGates) {
  // input_forget: f = 1 - i. W/R zero except the cell gate; c0 = 1.
  const double x = 1.5, c0 = 1, bi = 0.7;
  const double i = sigmoid(bi), f = 1 - i, ct = std::tanh(0.5 * x);
  const double c = f * c0 + i * ct, h = sigmoid(0) * std::tanh(c);
  RunResult r = run(
      "LSTM",
      {HostTensor::f32({1, 1, 1}, {1.5f}), HostTensor::f32({1, 4, 1}, {0, 0, 0, 0.5f}),
       HostTensor::f32({1, 4, 1}, {0, 0, 0, 0}),
       HostTensor::f32({1, 8}, {0.7f, 0, 0, 0, 0, 0, 0, 0}), std::nullopt, std::nullopt,
       HostTensor::f32({1, 1, 1}, {1.0f})},
      {kNone, kF32, kF32}, {AttrSpec::Int("hidden_size", 1), AttrSpec::Int("input_forget", 1)}, 14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {h});
  expect_near(r.outputs[1].as<float>(), {c});
}

TEST_F(CpuRnnQuant, GruOneStepBothResetModes) {
  // hidden 1, input 1: gates z, r, h. x = 1, h0 = 0.5.
  const double wz = 0.2, wr = -0.3, wh = 0.9, rz = 0.4, rr = 0.6, rh = -0.5;
  const double wbh = 0.1, rbh = 0.3, x = 1, h0 = 0.5;
  const double z = sigmoid(wz * x + rz * h0), r = sigmoid(wr * x + rr * h0);
  const double n0 = std::tanh(wh * x + (r * h0) * rh + rbh + wbh);
  const double n1 = std::tanh(wh * x + r * (h0 * rh + rbh) + wbh);
  for (int lbr : {0, 1}) {
    RunResult res =
        run("GRU",
            {HostTensor::f32({1, 1, 1}, {1}), HostTensor::f32({1, 3, 1}, {0.2f, -0.3f, 0.9f}),
             HostTensor::f32({1, 3, 1}, {0.4f, 0.6f, -0.5f}),
             HostTensor::f32({1, 6}, {0, 0, 0.1f, 0, 0, 0.3f}), std::nullopt,
             HostTensor::f32({1, 1, 1}, {0.5f})},
            {kF32, kF32},
            {AttrSpec::Int("hidden_size", 1), AttrSpec::Int("linear_before_reset", lbr)}, 14);
    ASSERT_TRUE(res.ok()) << res.status.message;
    const double n = lbr ? n1 : n0;
    expect_near(res.outputs[1].as<float>(), {(1 - z) * n + z * h0});
  }
}

TEST_F(CpuRnnQuant, BidirectionalRnnWithShorterSequencesInLayout1) {
  // hidden 1, input 1, W = R = 1, Relu: h_t = relu(x_t + h_{t-1}), a running sum.
  // Layout 1: X [batch, seq, input]. Batch 0 has 3 steps, batch 1 has 2 (x = 5 unused).
  // Forward:  b0: 1, 3, 6 ; b1: 1, 2, (0)
  // Reverse:  b0 from t=2: 3, 5, 6 -> Y[t] = 6, 5, 3 ; b1 from t=1: 1, 2 -> Y = 2, 1, (0)
  RunResult r =
      run("RNN",
          {HostTensor::f32({2, 3, 1}, {1, 2, 3, 1, 1, 5}), HostTensor::f32({2, 1, 1}, {1, 1}),
           HostTensor::f32({2, 1, 1}, {1, 1}), std::nullopt, HostTensor::i32({2}, {3, 2})},
          {kF32, kF32},
          {AttrSpec::Int("hidden_size", 1), AttrSpec::Int("layout", 1),
           AttrSpec::String("direction", "bidirectional"),
           AttrSpec::Strings("activations", {"Relu", "Relu"})},
          14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  // Y: [batch, seq, dirs, hidden]
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2, 3, 2, 1}));
  expect_near(r.outputs[0].as<float>(), {1, 6, 3, 5, 6, 3, 1, 2, 2, 1, 0, 0});
  // Y_h: [batch, dirs, hidden]
  EXPECT_EQ(r.outputs[1].dims, (std::vector<int64_t>{2, 2, 1}));
  expect_near(r.outputs[1].as<float>(), {6, 6, 2, 2});
}

TEST_F(CpuRnnQuant, ActivationsTakeAlphaAndBetaInOrder) {
  // Bidirectional RNN, one step, W = 1, R = 0: forward LeakyRelu(alpha 0.5), reverse
  // Affine(alpha 2, beta 1). The alpha list is consumed by the functions that take one.
  RunResult r =
      run("RNN",
          {HostTensor::f32({1, 1, 1}, {-4}), HostTensor::f32({2, 1, 1}, {1, 1}),
           HostTensor::f32({2, 1, 1}, {0, 0})},
          {kNone, kF32},
          {AttrSpec::Int("hidden_size", 1), AttrSpec::String("direction", "bidirectional"),
           AttrSpec::Strings("activations", {"LeakyRelu", "Affine"}),
           AttrSpec::Floats("activation_alpha", {0.5, 2.0}),
           AttrSpec::Floats("activation_beta", {1.0})},
          14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {-2, -7});
}

TEST_F(CpuRnnQuant, ClipBoundsTheActivationInputs) {
  // RNN with Affine (alpha 1, beta 0): the output is the clipped pre-activation.
  RunResult r = run("RNN",
                    {HostTensor::f32({2, 1, 1}, {5, -0.25f}), HostTensor::f32({1, 1, 1}, {1}),
                     HostTensor::f32({1, 1, 1}, {0})},
                    {kF32},
                    {AttrSpec::Int("hidden_size", 1), AttrSpec::Float("clip", 0.5),
                     AttrSpec::Strings("activations", {"Affine"})},
                    7);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {0.5, -0.25});
}

TEST_F(CpuRnnQuant, LstmClipBoundsEveryActivationInputButNotTheCellState) {
  // W = R = 0, so each gate's input is its bias: i 10, o 0, f -10, c 3, all clipped to
  // [-0.5, 0.5]. c0 = 2, so C = f*2 + i*tanh(0.5) > 0.5 and h(C) sees the clipped 0.5.
  const double i = sigmoid(0.5), f = sigmoid(-0.5), o = sigmoid(0);
  const double c = f * 2 + i * std::tanh(0.5);
  ASSERT_GT(c, 0.5);
  RunResult r =
      run("LSTM",
          {HostTensor::f32({1, 1, 1}, {0}), HostTensor::f32({1, 4, 1}, {0, 0, 0, 0}),
           HostTensor::f32({1, 4, 1}, {0, 0, 0, 0}),
           HostTensor::f32({1, 8}, {10, 0, -10, 3, 0, 0, 0, 0}), std::nullopt, std::nullopt,
           HostTensor::f32({1, 1, 1}, {2})},
          {kNone, kF32, kF32}, {AttrSpec::Int("hidden_size", 1), AttrSpec::Float("clip", 0.5)}, 14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  expect_near(r.outputs[0].as<float>(), {o * std::tanh(0.5)});
  expect_near(r.outputs[1].as<float>(), {c});
}

TEST_F(CpuRnnQuant, RnnInFloat64) {
  // W = 0.5, R = 1, Relu, reverse: from t = 1: h = 0.5*4 = 2, then 0.5*2 + 2 = 3.
  auto f64 = [](std::vector<int64_t> d, const std::vector<double>& v) {
    return HostTensor::make(INFER_DTYPE_FLOAT64, std::move(d), v);
  };
  RunResult r = run("RNN", {f64({2, 1, 1}, {2, 4}), f64({1, 1, 1}, {0.5}), f64({1, 1, 1}, {1})},
                    {INFER_DTYPE_FLOAT64, INFER_DTYPE_FLOAT64},
                    {AttrSpec::Int("hidden_size", 1), AttrSpec::String("direction", "reverse"),
                     AttrSpec::Strings("activations", {"Relu"})},
                    14);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<double>(), (std::vector<double>{3, 2}));
  EXPECT_EQ(r.outputs[1].as<double>(), (std::vector<double>{3}));
}

// ---- RNN bad input ------------------------------------------------------------------

TEST_F(CpuRnnQuant, WeightShapesMustMatchHiddenSize) {
  // hidden_size 4 needs W [1, 16, 2] for LSTM; W and R are laid out for hidden 3.
  RunResult r =
      run("LSTM",
          {HostTensor::f32({1, 1, 2}, {1, 2}), HostTensor::f32({1, 12, 2}, std::vector<float>(24)),
           HostTensor::f32({1, 12, 3}, std::vector<float>(36))},
          {kNone, kF32}, {AttrSpec::Int("hidden_size", 4)}, 14);
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (LSTM): W has shape [1,12,2], expected [1,16,2] (num_directions = 1, "
            "4*hidden_size = 16, input_size = 2)");
  // A bidirectional node needs two directions of weights.
  r = run("GRU",
          {HostTensor::f32({1, 1, 2}, {1, 2}), HostTensor::f32({1, 3, 2}, std::vector<float>(6)),
           HostTensor::f32({1, 3, 1}, std::vector<float>(3))},
          {kNone, kF32},
          {AttrSpec::Int("hidden_size", 1), AttrSpec::String("direction", "bidirectional")}, 14);
  EXPECT_EQ(r.status.message,
            "node 'n' (GRU): W has shape [1,3,2], expected [2,3,2] (num_directions = 2, "
            "3*hidden_size = 3, input_size = 2)");
  // initial_h in the wrong layout.
  r = run("RNN",
          {HostTensor::f32({1, 2, 1}, {1, 2}), HostTensor::f32({1, 1, 1}, {1}),
           HostTensor::f32({1, 1, 1}, {1}), std::nullopt, std::nullopt,
           HostTensor::f32({2, 1, 1}, {0, 0})},
          {kNone, kF32}, {AttrSpec::Int("hidden_size", 1)}, 14);
  EXPECT_EQ(r.status.message,
            "node 'n' (RNN): initial_h has shape [2,1,1], expected [1,2,1] (num_directions, "
            "batch_size, hidden_size)");
}

TEST_F(CpuRnnQuant, SequenceLengthsMustFitTheSequence) {
  RunResult r =
      run("RNN",
          {HostTensor::f32({3, 2, 1}, std::vector<float>(6)), HostTensor::f32({1, 1, 1}, {1}),
           HostTensor::f32({1, 1, 1}, {1}), std::nullopt, HostTensor::i32({2}, {3, 5})},
          {kNone, kF32}, {AttrSpec::Int("hidden_size", 1)}, 14);
  EXPECT_EQ(r.status.message, "node 'n' (RNN): sequence_lens[1] is 5, outside [0, seq_length = 3]");
  r = run("RNN",
          {HostTensor::f32({3, 2, 1}, std::vector<float>(6)), HostTensor::f32({1, 1, 1}, {1}),
           HostTensor::f32({1, 1, 1}, {1}), std::nullopt, HostTensor::i32({3}, {1, 1, 1})},
          {kNone, kF32}, {AttrSpec::Int("hidden_size", 1)}, 14);
  EXPECT_EQ(r.status.message,
            "node 'n' (RNN): sequence_lens has shape [3], expected [2] (batch_size)");
}

TEST_F(CpuRnnQuant, BadRnnAttributesAreRefusedAtCompile) {
  auto x = HostTensor::f32({1, 1, 1}, {1});
  auto w = HostTensor::f32({1, 1, 1}, {1});
  RunResult r = run("RNN", {x, w, w}, {kF32}, {AttrSpec::String("direction", "up")}, 14);
  EXPECT_EQ(r.status.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(r.status.message,
            "node 'n' (RNN): cpu: RNN direction 'up' is not one of 'forward', 'reverse', "
            "'bidirectional'");
  r = run("LSTM",
          {x, HostTensor::f32({1, 4, 1}, {1, 1, 1, 1}), HostTensor::f32({1, 4, 1}, {1, 1, 1, 1})},
          {kF32}, {AttrSpec::Strings("activations", {"Sigmoid", "Tanh"})}, 14);
  EXPECT_EQ(r.status.message,
            "node 'n' (LSTM): cpu: LSTM activations has 2 functions, expected 3 (3 per "
            "direction, 1 direction)");
  r = run("GRU", {x, HostTensor::f32({1, 3, 1}, {1, 1, 1}), HostTensor::f32({1, 3, 1}, {1, 1, 1})},
          {kF32}, {AttrSpec::Strings("activations", {"Sigmoid", "Gelu"})}, 14);
  EXPECT_EQ(r.status.code, INFER_STATUS_UNSUPPORTED);
  EXPECT_NE(r.status.message.find("activation 'Gelu' is not one of"), std::string::npos)
      << r.status.message;
}

// ---- Quantization computed by hand --------------------------------------------------

TEST_F(CpuRnnQuant, QuantizeRoundsHalfToEvenAndSaturates) {
  RunResult r = run("QuantizeLinear",
                    {HostTensor::f32({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 300.f, -300.f}),
                     HostTensor::f32({}, {1.0f}), i8({}, {0})},
                    {kI8}, {}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int8_t>(), (std::vector<int8_t>{0, 2, 2, 0, -2, -2, 127, -128}));
  // No zero point: uint8 with zero point 0; scale 2 halves first (5 / 2 = 2.5 -> 2).
  r = run("QuantizeLinear",
          {HostTensor::f32({4}, {5.f, 7.f, -3.f, 1000.f}), HostTensor::f32({}, {2.0f})}, {kU8}, {},
          10);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{2, 4, 0, 255}));
}

TEST_F(CpuRnnQuant, QuantizeAndDequantizePerAxis) {
  // x [2, 3], axis 0: row 0 scale 1 zp 10, row 1 scale 0.5 zp -10.
  RunResult r = run("QuantizeLinear",
                    {HostTensor::f32({2, 3}, {1, 2, 3, 1, 2, 3}),
                     HostTensor::f32({2}, {1.0f, 0.5f}), i8({2}, {10, -10})},
                    {kI8}, {AttrSpec::Int("axis", 0)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int8_t>(), (std::vector<int8_t>{11, 12, 13, -8, -6, -4}));
  r = run("DequantizeLinear",
          {i8({2, 3}, {11, 12, 13, -8, -6, -4}), HostTensor::f32({2}, {1.0f, 0.5f}),
           i8({2}, {10, -10})},
          {kF32}, {AttrSpec::Int("axis", -2)}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  // int32 input, no zero point.
  r = run("DequantizeLinear", {HostTensor::i32({2}, {-7, 100000}), HostTensor::f32({}, {0.5f})},
          {kF32}, {}, 10);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{-3.5f, 50000.f}));
}

TEST_F(CpuRnnQuant, QuantizeBlocked) {
  // Opset 21, blocks of 2 along axis 1 of x [1, 4]: scales [1, 2].
  RunResult r = run("QuantizeLinear",
                    {HostTensor::f32({1, 4}, {1, 2, 3, 4}), HostTensor::f32({1, 2}, {1.0f, 2.0f}),
                     u8({1, 2}, {0, 100})},
                    {kU8}, {AttrSpec::Int("axis", 1), AttrSpec::Int("block_size", 2)}, 21);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{1, 2, 102, 102}));
}

TEST_F(CpuRnnQuant, DynamicQuantizeOfZerosHasZeroScale) {
  RunResult r =
      run("DynamicQuantizeLinear", {HostTensor::f32({3}, {0, 0, 0})}, {kU8, kF32, kU8}, {}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(r.outputs[1].as<float>(), (std::vector<float>{0}));
  EXPECT_EQ(r.outputs[2].as<uint8_t>(), (std::vector<uint8_t>{0}));
  // Range [-1, 254/255*...]: x = [-1, 2]: scale 3/255, zero point round(255/3) = 85.
  r = run("DynamicQuantizeLinear", {HostTensor::f32({2}, {-1, 2})}, {kU8, kF32, kU8}, {}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 255}));
  EXPECT_FLOAT_EQ(r.outputs[1].as<float>()[0], 3.0f / 255.0f);
  EXPECT_EQ(r.outputs[2].as<uint8_t>(), (std::vector<uint8_t>{85}));
}

TEST_F(CpuRnnQuant, DynamicQuantizeRoundsHalfToEvenAndIgnoresNaN) {
  // Range [0, 255]: scale 1, zero point 0; ties go to the even neighbour; NaN takes the
  // range of the others and quantizes to the zero point.
  const float nan = std::nanf("");
  RunResult r = run("DynamicQuantizeLinear",
                    {HostTensor::f32({8}, {0.5f, 1.5f, 2.5f, 254.5f, 255.0f, 0.0f, nan, 3.49f})},
                    {kU8, kF32, kU8}, {}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{0, 2, 2, 254, 255, 0, 0, 3}));
  EXPECT_FLOAT_EQ(r.outputs[1].as<float>()[0], 1.0f);
  EXPECT_EQ(r.outputs[2].as<uint8_t>(), (std::vector<uint8_t>{0}));
}

TEST_F(CpuRnnQuant, DynamicQuantizeOfALargeTensorFindsTheRangeInEveryChunk) {
  // 300000 values (several chunks of the parallel range search); the minimum sits in the
  // last chunk and the maximum in the first. Reference: the op's formulas in double.
  const size_t n = 300000;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
  x[17] = 3.0f;
  x[n - 5] = -1.25f;
  RunResult r = run("DynamicQuantizeLinear", {HostTensor::f32({static_cast<int64_t>(n)}, x)},
                    {kU8, kF32, kU8}, {}, 11);
  ASSERT_TRUE(r.ok()) << r.status.message;
  const float scale = (3.0f - -1.25f) / 255.0f;
  EXPECT_EQ(r.outputs[1].as<float>()[0], scale);
  const int zp = static_cast<int>(std::nearbyint(1.25f / scale));
  EXPECT_EQ(r.outputs[2].as<uint8_t>()[0], zp);
  const auto y = r.outputs[0].as<uint8_t>();
  for (size_t i = 0; i < n; i += 997) {
    const double q = std::nearbyint(static_cast<double>(x[i] / scale)) + zp;
    EXPECT_EQ(y[i], static_cast<uint8_t>(std::min(255.0, std::max(0.0, q)))) << i;
  }
  EXPECT_EQ(y[17], 255);
  EXPECT_EQ(y[n - 5], 0);
}

TEST_F(CpuRnnQuant, MatMulIntegerPerRowAndPerColumnZeroPoints) {
  // A [2, 2] int8 with per-row zero points [1, -1]; B [2, 2] uint8 with per-column [2, 0].
  // A - za = [[0, 1], [3, 5]], B - zb = [[1, 3], [0, 4]].
  RunResult r =
      run("MatMulInteger",
          {i8({2, 2}, {1, 2, 2, 4}), u8({2, 2}, {3, 3, 2, 4}), i8({2}, {1, -1}), u8({2}, {2, 0})},
          {kI32}, {}, 10);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{0, 4, 3, 29}));
}

TEST_F(CpuRnnQuant, ConvIntegerGroupsStridesAndChannelZeroPoints) {
  // x [1, 2, 1, 4] (two channels), w [2, 1, 1, 2] with group 2, strides 2, per-channel
  // w zero points [1, 0], x zero point 1.
  // ch0: x - 1 = [0, 1, 2, 3], w - 1 = [1, 2]: positions 0, 2 -> 0*1+1*2 = 2, 2*1+3*2 = 8
  // ch1: x - 1 = [4, 3, 2, 1], w = [1, -1]:   -> 4-3 = 1, 2-1 = 1
  RunResult r = run("ConvInteger",
                    {u8({1, 2, 1, 4}, {1, 2, 3, 4, 5, 4, 3, 2}), i8({2, 1, 1, 2}, {2, 3, 1, -1}),
                     u8({}, {1}), i8({2}, {1, 0})},
                    {kI32}, {AttrSpec::Int("group", 2), AttrSpec::Ints("strides", {1, 2})}, 10);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{1, 2, 1, 2}));
  EXPECT_EQ(r.outputs[0].as<int32_t>(), (std::vector<int32_t>{2, 8, 1, 1}));
}

TEST_F(CpuRnnQuant, QLinearConvPerChannelScalesAndBias) {
  // 1x1 conv, x [1, 1, 1, 2] = [4, 6] (zp 2, scale 0.5); w [2, 1, 1, 1] = [3, 1] with
  // per-channel scales [1, 0.25] and zp 0; bias [1, -4]; y scale 1, zp 10.
  // acc ch0: (2, 4) * 3 + 1 = 7, 13 -> * 0.5 = 3.5, 6.5 -> 4, 6 (half to even) -> 14, 16
  // acc ch1: (2, 4) * 1 - 4 = -2, 0 -> * 0.125 = -0.25, 0 -> 0, 0 -> 10, 10
  RunResult r = run("QLinearConv",
                    {u8({1, 1, 1, 2}, {4, 6}), HostTensor::f32({}, {0.5f}), u8({}, {2}),
                     u8({2, 1, 1, 1}, {3, 1}), HostTensor::f32({2}, {1.0f, 0.25f}), u8({2}, {0, 0}),
                     HostTensor::f32({}, {1.0f}), u8({}, {10}), HostTensor::i32({2}, {1, -4})},
                    {kU8}, {}, 10);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<uint8_t>(), (std::vector<uint8_t>{14, 16, 10, 10}));
}

// ---- Quantization bad input ---------------------------------------------------------

TEST_F(CpuRnnQuant, PerAxisScaleLengthMustMatchTheAxis) {
  RunResult r = run("QuantizeLinear",
                    {HostTensor::f32({1, 3, 2}, std::vector<float>(6)),
                     HostTensor::f32({4}, {1, 1, 1, 1}), u8({4}, {0, 0, 0, 0})},
                    {kU8}, {}, 13);
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (QuantizeLinear): y_scale has 4 elements but x [1,3,2] has 3 along axis 1 "
            "(per-axis quantization needs one scale per slice)");
  r = run("DequantizeLinear",
          {u8({1, 3}, {1, 2, 3}), HostTensor::f32({3}, {1, 1, 1}), u8({2}, {0, 0})}, {kF32}, {},
          13);
  EXPECT_EQ(r.status.message,
            "node 'n' (DequantizeLinear): x_zero_point has shape [2] but x_scale has shape [3]: "
            "they must match");
  r = run("DequantizeLinear", {u8({1, 3}, {1, 2, 3}), HostTensor::f32({3}, {1, 1, 1})}, {kF32}, {},
          10);
  EXPECT_EQ(r.status.message,
            "node 'n' (DequantizeLinear): x_scale must be a scalar before opset 13 (per-axis "
            "quantization needs opset 13), got shape [3]");
  r = run("DequantizeLinear",
          {HostTensor::i32({2}, {1, 2}), HostTensor::f32({}, {1}), HostTensor::i32({}, {3})},
          {kF32}, {}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (DequantizeLinear): x_zero_point must be 0 for int32 x, got 3");
}

TEST_F(CpuRnnQuant, ScalesMustBeFiniteAndNotNegativeAndDivisorsNonZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  RunResult r = run("QuantizeLinear",
                    {HostTensor::f32({2}, {1, 2}), HostTensor::f32({}, {0.0f}), u8({}, {0})}, {kU8},
                    {}, 13);
  EXPECT_EQ(r.status.code, INFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.status.message,
            "node 'n' (QuantizeLinear): y_scale is 0: a scale must be positive and finite (the op "
            "divides by it)");
  r = run("QuantizeLinear",
          {HostTensor::f32({1, 3}, {1, 2, 3}), HostTensor::f32({3}, {1, -0.5f, 1}),
           u8({3}, {0, 0, 0})},
          {kU8}, {AttrSpec::Int("axis", 1)}, 13);
  EXPECT_EQ(r.status.message,
            "node 'n' (QuantizeLinear): y_scale is -0.5 at index 1: a scale must be positive and "
            "finite (the op divides by it)");
  r = run("DequantizeLinear", {u8({2}, {1, 2}), HostTensor::f32({}, {nan}), u8({}, {0})}, {kF32}, {},
          13);
  EXPECT_EQ(r.status.message,
            "node 'n' (DequantizeLinear): x_scale is nan: a scale must be finite and not negative");
  // Dequantizing with scale 0 (DynamicQuantizeLinear's scale of an all-zero tensor) gives 0.
  r = run("DequantizeLinear", {u8({2}, {7, 9}), HostTensor::f32({}, {0.0f}), u8({}, {7})}, {kF32},
          {}, 13);
  ASSERT_TRUE(r.ok()) << r.status.message;
  EXPECT_EQ(r.outputs[0].as<float>(), (std::vector<float>{0.0f, 0.0f}));
  r = run("QLinearConv",
          {u8({1, 1, 1, 2}, {4, 6}), HostTensor::f32({}, {0.5f}), u8({}, {2}),
           u8({2, 1, 1, 1}, {3, 1}), HostTensor::f32({2}, {1.0f, inf}), u8({2}, {0, 0}),
           HostTensor::f32({}, {1.0f}), u8({}, {10})},
          {kU8}, {}, 10);
  EXPECT_EQ(r.status.message,
            "node 'n' (QLinearConv): w_scale is inf at index 1: a scale must be finite and not "
            "negative");
  r = run("QLinearMatMul",
          {u8({1, 2}, {1, 2}), HostTensor::f32({}, {1.0f}), u8({}, {0}), u8({2, 1}, {1, 1}),
           HostTensor::f32({}, {1.0f}), u8({}, {0}), HostTensor::f32({}, {0.0f}), u8({}, {0})},
          {kU8}, {}, 10);
  EXPECT_EQ(r.status.message,
            "node 'n' (QLinearMatMul): y_scale is 0: a scale must be positive and finite (the op "
            "divides by it)");
}

TEST_F(CpuRnnQuant, IntegerProductShapesAndZeroPoints) {
  RunResult r = run("MatMulInteger",
                    {u8({2, 3}, std::vector<uint8_t>(6)), u8({2, 2}, std::vector<uint8_t>(4))},
                    {kI32}, {}, 10);
  EXPECT_EQ(r.status.message, "node 'n' (MatMulInteger): inner dims differ: a [2,3] and b [2,2]");
  r = run("MatMulInteger",
          {u8({2, 3}, std::vector<uint8_t>(6)), u8({3, 2}, std::vector<uint8_t>(6)), std::nullopt,
           u8({3}, {1, 2, 3})},
          {kI32}, {}, 10);
  EXPECT_EQ(
      r.status.message,
      "node 'n' (MatMulInteger): b_zero_point has shape [3], expected a scalar, [2] or [1,2]");
  r = run(
      "QLinearConv",
      {u8({1, 1, 1, 2}, {4, 6}), HostTensor::f32({}, {0.5f}), u8({}, {2}), u8({2, 1, 1, 1}, {3, 1}),
       HostTensor::f32({3}, {1, 1, 1}), u8({}, {0}), HostTensor::f32({}, {1.0f}), u8({}, {10})},
      {kU8}, {}, 10);
  EXPECT_EQ(r.status.message,
            "node 'n' (QLinearConv): w_scale has shape [3], expected a scalar or [2] (one per "
            "output channel)");
}

}  // namespace
}  // namespace infer::test
