// Each fused operator of the ai.infer domain (sdk/FUSED_OPS.md), run by the CPU plugin's
// fused kernel, against its decomposition into standard ONNX operators run node by node
// on the CPU plugin's standard kernels (which the ONNX node suite checks against ONNX's
// own references). Both go through PluginConstantEvaluator, the path constant folding
// uses, on random inputs from a fixed seed.
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "optimizer/fused_decomposition.hpp"
#include "optimizer/rewrite.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/constant_evaluator.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using optimizer::attr_float;
using optimizer::attr_floats;
using optimizer::attr_int;
using optimizer::attr_ints;
using optimizer::attr_string;

class FusedOpsNumeric : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    arena_ = new std::shared_ptr<tbb::task_arena>(std::make_shared<tbb::task_arena>(2));
    runtime::Logger log(nullptr, LogLevel::kError);
    auto b = runtime::open_backends({"cpu"}, testing::tree_options({"cpu"}), *arena_, log);
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    backends_ = new std::vector<runtime::Backend>(std::move(*b));
  }
  static void TearDownTestSuite() {
    delete backends_;
    delete arena_;
    backends_ = nullptr;
    arena_ = nullptr;
  }

  // A float32 constant of `dims` with values uniform in [lo, hi).
  ir::ValueId random_constant(ir::Graph& g, const std::string& name,
                              const std::vector<int64_t>& dims, double lo = -1, double hi = 1) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = dist(rng_);
    return optimizer::add_constant(g, name,
                                   optimizer::make_float_tensor(DataType::kFloat32, dims, v));
  }

  // Adds `op` (domain ai.infer) reading `inputs` and writing a float32 output "y".
  static void add_fused(ir::Graph& g, const std::string& op, std::vector<ir::ValueId> inputs,
                        std::vector<ir::Attribute> attrs) {
    ir::Node n;
    n.name = "fused";
    n.op_type = op;
    n.domain = optimizer::kFusedDomain;
    n.inputs = std::move(inputs);
    n.attributes = std::move(attrs);
    n.outputs = {optimizer::add_value(g, "y", DataType::kFloat32, ir::Shape{})};
    g.add_node(std::move(n));
    g.outputs = {g.node(0).outputs[0]};
    g.rebuild_links();
  }

  // Evaluates every node of `g` in order, making each output a constant; returns the
  // graph output's data.
  static ir::TensorDataPtr evaluate_all(ir::Graph& g, int64_t opset) {
    runtime::PluginConstantEvaluator eval((*backends_)[0].device,
                                          {{"", opset}, {optimizer::kFusedDomain, 1}});
    for (const ir::Node& n : g.nodes()) {
      auto out = eval.evaluate(g, n);
      EXPECT_TRUE(out.is_ok()) << n.describe() << ": " << out.status().message();
      if (!out.is_ok()) return nullptr;
      for (size_t i = 0; i < n.outputs.size(); ++i)
        if (n.outputs[i] != ir::kNoValue) g.value(n.outputs[i]).constant = (*out)[i];
    }
    return g.value(g.outputs.at(0)).constant;
  }

  // The fused node of `g` (node 0) against its decomposition.
  void expect_same_as_decomposition(const ir::Graph& g, int64_t opset, double tol = 2e-5) {
    ir::Graph fused = g;
    ir::TensorDataPtr want_fused = evaluate_all(fused, opset);
    ir::Graph plain = g;
    optimizer::PassContext ctx;
    ctx.opsets = {{"", opset}};
    auto made = optimizer::decompose_fused_nodes(plain, {0}, ctx);
    ASSERT_TRUE(made.is_ok()) << made.status().message();
    ir::TensorDataPtr want_plain = evaluate_all(plain, opset);
    ASSERT_NE(want_fused, nullptr);
    ASSERT_NE(want_plain, nullptr);
    ASSERT_EQ(want_fused->dims(), want_plain->dims());
    const float* a = want_fused->as<float>();
    const float* b = want_plain->as<float>();
    double worst = 0;
    for (int64_t i = 0; i < want_plain->element_count(); ++i) {
      const double err = std::fabs(double(a[i]) - b[i]) / (1.0 + std::fabs(double(b[i])));
      worst = std::max(worst, err);
    }
    EXPECT_LE(worst, tol) << g.node(0).op_type << " " << g.node(0).attr_string("activation", "");
  }

  static std::shared_ptr<tbb::task_arena>* arena_;
  static std::vector<runtime::Backend>* backends_;
  std::mt19937 rng_{20261129};
};
std::shared_ptr<tbb::task_arena>* FusedOpsNumeric::arena_ = nullptr;
std::vector<runtime::Backend>* FusedOpsNumeric::backends_ = nullptr;

struct Activation {
  std::string name;
  std::vector<double> params;
};
const std::vector<Activation> kActivations = {
    {"", {}},
    {"Relu", {}},
    {"Tanh", {}},
    {"Sigmoid", {}},
    {"LeakyRelu", {0.1}},
    {"Clip", {-0.5, 1.5}},
    {"Clip", {0.0, std::numeric_limits<double>::infinity()}},
    {"HardSigmoid", {0.3, 0.4}},
    {"HardSwish", {}},
    {"Gelu", {}},
    {"GeluTanh", {}},
};

std::vector<ir::Attribute> with_activation(std::vector<ir::Attribute> attrs, const Activation& a) {
  if (!a.name.empty()) {
    attrs.push_back(attr_string("activation", a.name));
    if (!a.params.empty()) attrs.push_back(attr_floats("activation_params", a.params));
  }
  return attrs;
}

TEST_F(FusedOpsNumeric, FusedConvWithBiasResidualAndEveryActivation) {
  for (const Activation& act : kActivations) {
    ir::Graph g;
    ir::ValueId x = random_constant(g, "x", {2, 4, 7, 6});
    ir::ValueId w = random_constant(g, "w", {6, 2, 3, 3});  // group 2
    ir::ValueId b = random_constant(g, "b", {6});
    ir::ValueId z = random_constant(g, "z", {2, 6, 4, 3});
    add_fused(g, "FusedConv", {x, w, b, z},
              with_activation({attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2}),
                               attr_int("group", 2), attr_ints("kernel_shape", {3, 3})},
                              act));
    expect_same_as_decomposition(g, 17);
  }
}

TEST_F(FusedOpsNumeric, FusedGemmAndFusedMatMulWithEveryActivation) {
  for (const Activation& act : kActivations) {
    ir::Graph g;
    ir::ValueId a = random_constant(g, "a", {5, 7});
    ir::ValueId bm = random_constant(g, "b", {3, 7});
    ir::ValueId c = random_constant(g, "c", {3});
    add_fused(g, "FusedGemm", {a, bm, c},
              with_activation(
                  {attr_int("transB", 1), attr_float("alpha", 0.5), attr_float("beta", 2.0)}, act));
    expect_same_as_decomposition(g, 13);

    ir::Graph m;
    ir::ValueId a3 = random_constant(m, "a", {2, 5, 7});
    ir::ValueId b2 = random_constant(m, "b", {7, 3});
    ir::ValueId bias = random_constant(m, "bias", {3});
    add_fused(m, "FusedMatMul", {a3, b2, bias}, with_activation({}, act));
    expect_same_as_decomposition(m, 13);
  }
}

TEST_F(FusedOpsNumeric, GeluBothForms) {
  for (const char* approx : {"none", "tanh"}) {
    ir::Graph g;
    ir::ValueId x = random_constant(g, "x", {3, 17}, -4, 4);
    add_fused(g, "Gelu", {x}, {attr_string("approximate", approx)});
    expect_same_as_decomposition(g, 13);
  }
}

TEST_F(FusedOpsNumeric, LayerNormalizationBeforeOpset17) {
  ir::Graph g;
  ir::ValueId x = random_constant(g, "x", {2, 3, 16}, -3, 3);
  ir::ValueId scale = random_constant(g, "scale", {16});
  ir::ValueId bias = random_constant(g, "bias", {16});
  add_fused(g, "LayerNormalization", {x, scale, bias},
            {attr_int("axis", -1), attr_float("epsilon", 1e-5)});
  expect_same_as_decomposition(g, 13);
}

TEST_F(FusedOpsNumeric, AttentionWithAndWithoutMask) {
  // B=2, Sq=3, Sk=5, H=2, Dk=4, Dv=3; masks of the three documented broadcast shapes.
  const std::vector<std::vector<int64_t>> masks = {{}, {2, 1, 1, 5}, {1, 1, 3, 5}, {2, 2, 3, 5}};
  for (const auto& mask_dims : masks) {
    ir::Graph g;
    ir::ValueId q = random_constant(g, "q", {2, 3, 8});
    ir::ValueId k = random_constant(g, "k", {2, 5, 8});
    ir::ValueId v = random_constant(g, "v", {2, 5, 6});
    std::vector<ir::ValueId> ins = {q, k, v};
    if (!mask_dims.empty()) ins.push_back(random_constant(g, "mask", mask_dims, -2, 0));
    add_fused(g, "Attention", ins, {attr_int("num_heads", 2), attr_float("scale", 0.5)});
    expect_same_as_decomposition(g, 17);
  }
}

// The quantized ops: 8-bit results (or float32 ones computed with the same float
// operations), so the fused kernel and the decomposition (DequantizeLinear, Add/Mul,
// QuantizeLinear; Cast and Gather; MatMulInteger, Cast, Mul, Add) must agree byte for byte.
class QuantizedOpsNumeric : public FusedOpsNumeric {
 protected:
  ir::ValueId random_bytes(ir::Graph& g, const std::string& name, DataType dtype,
                           const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::uniform_int_distribution<int> dist(0, 255);
    std::vector<uint8_t> bytes(static_cast<size_t>(n));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(dist(rng_));
    return optimizer::add_constant(
        g, name, std::make_shared<const ir::TensorData>(dtype, dims, std::move(bytes)));
  }
  static ir::ValueId scalar(ir::Graph& g, const std::string& name, DataType dtype, double v) {
    if (dtype == DataType::kFloat32)
      return optimizer::add_constant(g, name,
                                     optimizer::make_float_tensor(DataType::kFloat32, {}, {v}));
    const uint8_t byte = static_cast<uint8_t>(static_cast<int>(v));
    return optimizer::add_constant(g, name,
                                   std::make_shared<const ir::TensorData>(
                                       dtype, std::vector<int64_t>{}, std::vector<uint8_t>{byte}));
  }
  static void add_quantized(ir::Graph& g, const std::string& op, std::vector<ir::ValueId> inputs,
                            DataType out) {
    ir::Node n;
    n.name = "fused";
    n.op_type = op;
    n.domain = optimizer::kFusedDomain;
    n.inputs = std::move(inputs);
    n.outputs = {optimizer::add_value(g, "y", out, ir::Shape{})};
    g.add_node(std::move(n));
    g.outputs = {g.node(0).outputs[0]};
    g.rebuild_links();
  }
  void expect_identical_to_decomposition(const ir::Graph& g) {
    ir::Graph fused = g;
    ir::TensorDataPtr got = evaluate_all(fused, 13);
    ir::Graph plain = g;
    optimizer::PassContext ctx;
    ctx.opsets = {{"", 13}};
    auto made = optimizer::decompose_fused_nodes(plain, {0}, ctx);
    ASSERT_TRUE(made.is_ok()) << made.status().message();
    ir::TensorDataPtr want = evaluate_all(plain, 13);
    ASSERT_NE(got, nullptr);
    ASSERT_NE(want, nullptr);
    ASSERT_EQ(got->dims(), want->dims());
    ASSERT_EQ(got->dtype(), want->dtype());
    ASSERT_EQ(got->size_bytes(), want->size_bytes());
    const auto* a = got->as<uint8_t>();
    const auto* b = want->as<uint8_t>();
    for (size_t i = 0; i < want->size_bytes(); ++i)
      ASSERT_EQ(a[i], b[i]) << g.node(0).op_type << " byte " << i;
  }
};

TEST_F(QuantizedOpsNumeric, QLinearAddAndMulWithBroadcasting) {
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    for (DataType t : {DataType::kUInt8, DataType::kInt8}) {
      ir::Graph g;
      const double zero = t == DataType::kUInt8 ? 128 : -3;
      std::vector<ir::ValueId> in = {
          random_bytes(g, "a", t, {2, 3, 5, 7}),
          scalar(g, "as", DataType::kFloat32, 0.05),
          scalar(g, "az", t, zero),
          random_bytes(g, "b", t, {3, 1, 7}),
          scalar(g, "bs", DataType::kFloat32, 0.0731),
          scalar(g, "bz", t, 7),
          scalar(g, "cs", DataType::kFloat32, std::string(op) == "QLinearAdd" ? 0.09 : 0.7),
          scalar(g, "cz", t, 5)};
      add_quantized(g, op, in, t);
      expect_identical_to_decomposition(g);
    }
  }
}

TEST_F(QuantizedOpsNumeric, QLinearLookupOfBothTypes) {
  for (DataType t : {DataType::kUInt8, DataType::kInt8}) {
    ir::Graph g;
    std::vector<ir::ValueId> in = {random_bytes(g, "x", t, {4, 65}),
                                   random_bytes(g, "table", DataType::kUInt8, {256})};
    add_quantized(g, "QLinearLookup", in, DataType::kUInt8);
    expect_identical_to_decomposition(g);
  }
}

TEST_F(QuantizedOpsNumeric, MatMulIntegerToFloatOnBothPaths) {
  // The fast path (a per-tensor a_zero_point) and the general one (per-row): float results
  // identical to MatMulInteger, Cast, Mul(a_scale, b_scale), Mul and Add run one by one.
  for (bool per_row : {false, true}) {
    ir::Graph g;
    std::vector<ir::ValueId> in = {random_bytes(g, "a", DataType::kUInt8, {2, 5, 7}),
                                   random_bytes(g, "b", DataType::kInt8, {7, 3}),
                                   scalar(g, "as", DataType::kFloat32, 0.0213),
                                   random_constant(g, "bs", {3}, 0.001, 0.01),
                                   per_row ? random_bytes(g, "az", DataType::kUInt8, {5})
                                           : scalar(g, "az", DataType::kUInt8, 131),
                                   random_bytes(g, "bz", DataType::kInt8, {3}),
                                   random_constant(g, "bias", {3}, -2, 2)};
    add_quantized(g, "MatMulIntegerToFloat", in, DataType::kFloat32);
    expect_identical_to_decomposition(g);
  }
}

}  // namespace
}  // namespace infer
