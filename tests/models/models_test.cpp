// Real exported models, the second conformance level: each model of the cache that
// tools/models/export_models.py writes (the ctest fixture 'models_export' runs it) goes
// through infer::Session on the CPU backend, and every output must match the reference
// the exporter saved within the model's tolerance (see each manifest's tolerance_note).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "mini_json.hpp"
#include "model_case.hpp"

namespace infer::models_test {
namespace {

// Every model the exporter writes; ExportedModelsAreAllTested keeps the two in step.
const std::vector<std::string> kTestedModels = {
    "resnet18",     "resnet50",      "mobilenet_v2",       "bert_tiny",     "bert_tiny_opset13",
    "lstm_bidirectional",
    "control_flow", "opset9_cnn",    "opset11_resize_pad", "fp16_weights",  "nhwc_conv",
    "int8_dynamic", "scalar_inputs", "multi_output",       "symbolic_dims",
};

// PyTorch exports (torch.onnx.export); references are PyTorch's outputs.
TEST(RealModels, ResNet18) { run_model_case("resnet18"); }
TEST(RealModels, ResNet50) { run_model_case("resnet50"); }
TEST(RealModels, MobileNetV2) { run_model_case("mobilenet_v2"); }
TEST(RealModels, BertTinyDynamicBatchAndSequence) { run_model_case("bert_tiny"); }
TEST(RealModels, BertTinyOpset13DecomposedLayerNorm) { run_model_case("bert_tiny_opset13"); }
TEST(RealModels, LstmBidirectionalTwoLayers) { run_model_case("lstm_bidirectional"); }
TEST(RealModels, ScriptedControlFlowIfAndLoop) { run_model_case("control_flow"); }

// Graphs in other exporters' styles built with onnx.helper; references from numpy/PyTorch.
TEST(RealModels, Opset9ConstantNodesUpsamplePad) { run_model_case("opset9_cnn"); }
TEST(RealModels, Opset11ResizePadClip) { run_model_case("opset11_resize_pad"); }
TEST(RealModels, Fp16WeightsCastToFloat) { run_model_case("fp16_weights"); }
TEST(RealModels, NhwcInputTransposeConv) { run_model_case("nhwc_conv"); }
TEST(RealModels, DynamicInt8ConvInteger) { run_model_case("int8_dynamic"); }
TEST(RealModels, ScalarInputsAndOutputs) { run_model_case("scalar_inputs"); }
TEST(RealModels, SeveralOutputs) { run_model_case("multi_output"); }
TEST(RealModels, SymbolicDimsAtTwoShapes) { run_model_case("symbolic_dims"); }

// The optimizer's promise on every model: level 3 computes what level 0 computes.
// Tolerance: rtol 1e-4 / atol 1e-5 (the bound); folding BatchNormalization into
// convolution weights and Div-by-c into a multiply by 1/c reassociate float arithmetic,
// which stays well inside it on these models (the test prints the max |diff|).
class OptimizedModels : public ::testing::TestWithParam<std::string> {};
TEST_P(OptimizedModels, MatchUnoptimized) { run_model_equivalence(GetParam(), 1e-4, 1e-5); }
INSTANTIATE_TEST_SUITE_P(AllExported, OptimizedModels, ::testing::ValuesIn(kTestedModels),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(RealModels, ExportedModelsAreAllTested) {
  const std::string path = cache_dir() + "/models.json";
  std::ifstream f(path);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty()) << "cannot read " << path << " (run ctest -R models_export)";
  const std::optional<cli::testing::JsonValue> json = cli::testing::JsonParser::parse(text);
  ASSERT_TRUE(json && json->get("models") && json->get("models")->is_array()) << path;
  std::vector<std::string> exported;
  for (const auto& v : json->get("models")->array) exported.push_back(v.string);
  std::vector<std::string> tested = kTestedModels;
  std::sort(exported.begin(), exported.end());
  std::sort(tested.begin(), tested.end());
  EXPECT_EQ(exported, tested) << "add a TEST for every model tools/models/export_models.py exports";
}

}  // namespace
}  // namespace infer::models_test
