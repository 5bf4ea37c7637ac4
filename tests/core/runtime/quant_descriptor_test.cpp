// Quantization descriptors cross the ABI: a model whose 8-bit input goes through
// DequantizeLinear into a MatMul, run with --backends example,cpu. The example plugin
// claims the DequantizeLinear only from the descriptor the host attaches to its input
// (per tensor, with the scale and zero point constants), so the node running on the
// example device proves the descriptor arrived; the outputs must equal the cpu-only run
// and a hand computation.
#include <gtest/gtest.h>

#include "infer_test_paths.hpp"
#include "onnx_model_writer.hpp"
#include "session_fixture.hpp"

namespace infer {
namespace {

using testing::OnnxModelWriter;
using testing::tree_options;

// x_q [2, 3] uint8 -> DequantizeLinear (scale 0.5, zero point 10) -> MatMul W [3, 2].
std::string model(bool per_axis) {
  OnnxModelWriter w;
  w.typed_input("x_q", {2, 3}, ::onnx::TensorProto::UINT8);
  w.output("y", {2, 2});
  if (per_axis) {
    w.raw_initializer<float>("s", ::onnx::TensorProto::FLOAT, {3}, {0.5f, 0.5f, 0.5f});
    w.raw_initializer<uint8_t>("z", ::onnx::TensorProto::UINT8, {3}, {10, 10, 10});
  } else {
    w.raw_initializer<float>("s", ::onnx::TensorProto::FLOAT, {}, {0.5f});
    w.raw_initializer<uint8_t>("z", ::onnx::TensorProto::UINT8, {}, {10});
  }
  w.initializer("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  auto* dq = w.node("dq", "DequantizeLinear", {"x_q", "s", "z"}, {"x"});
  if (per_axis) OnnxModelWriter::int_attr(dq, "axis", 1);
  w.node("mm", "MatMul", {"x", "w"}, {"y"});
  const std::string path =
      testing::temp_path(per_axis ? "infer_quant_desc_axis.onnx" : "infer_quant_desc.onnx");
  EXPECT_TRUE(w.save(path));
  return path;
}

struct Outcome {
  std::vector<float> y;
  std::string dq_backend, dq_reason;
};

Outcome run(const std::string& path, const std::vector<std::string>& backends) {
  Outcome r;
  auto s = Session::create(path, tree_options(backends));
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  if (!s.is_ok()) return r;
  for (const auto& n : (*s)->plan().nodes)
    if (n.op_type == "DequantizeLinear") {
      r.dq_backend = n.backend;
      r.dq_reason = n.reason;
    }
  const std::vector<uint8_t> x = {10, 12, 14, 0, 255, 11};
  auto out =
      (*s)->run({{"x_q", *Tensor::from_bytes(DataType::kUInt8, {2, 3}, x.data(), x.size())}});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return r;
  const float* y = (*out)[0].tensor.data_as<float>();
  r.y.assign(y, y + 4);
  return r;
}

TEST(QuantDescriptor, ExamplePluginRunsDequantizeLinearFromTheDescriptor) {
  const std::string path = model(false);
  const Outcome split = run(path, {"example", "cpu"});
  const Outcome cpu = run(path, {"cpu"});
  EXPECT_EQ(split.dq_backend, "example") << split.dq_reason;
  EXPECT_EQ(cpu.dq_backend, "cpu");
  // x = (x_q - 10) * 0.5 = [[0, 1, 2], [-5, 122.5, 0.5]]; y = x W.
  const std::vector<float> want = {0 * 1 + 1 * 3 + 2 * 5, 0 * 2 + 1 * 4 + 2 * 6,
                                   -5 * 1 + 122.5f * 3 + 0.5f * 5, -5 * 2 + 122.5f * 4 + 0.5f * 6};
  EXPECT_EQ(split.y, want);
  EXPECT_EQ(cpu.y, want);
}

TEST(QuantDescriptor, PerAxisDescriptorsStayOnCpuWithTheExamplesReason) {
  const Outcome split = run(model(true), {"example", "cpu"});
  EXPECT_EQ(split.dq_backend, "cpu");
  EXPECT_NE(split.dq_reason.find("example: DequantizeLinear supports per-tensor quantization only"),
            std::string::npos)
      << split.dq_reason;
  ASSERT_EQ(split.y.size(), 4u);
  EXPECT_EQ(split.y[0], 13.0f);
}

}  // namespace
}  // namespace infer
