// The structure the optimizer must reach on the exported models, read back from the
// graph the session writes with --dump-graph (SessionOptions::dump_graph_path). The
// expected counts come from the models' definitions (torchvision's ResNet-50 and
// MobileNetV2, tools/models/torch_models.py's BERT-style encoder), not from a previous run.
#include <gtest/gtest.h>

#include <iostream>

#include "model_case.hpp"

namespace infer::models_test {
namespace {

void print(const std::string& name, const OptimizedGraph& g) {
  std::cout << "[          ] " << name << ": " << g.loaded_nodes << " nodes loaded -> " << g.nodes
            << " after optimization (" << g.optimizer_ms << " ms)\n[          ]  ";
  for (const auto& [op, n] : g.ops) std::cout << " " << op << " x" << n;
  std::cout << "\n";
}

// ResNet-18, exported with its BatchNorms: 20 convolutions each followed by one; 17 Relus
// (the stem, one inside each of the 8 basic blocks, one after each residual Add).
TEST(OptimizedGraphs, ResNet18FoldsItsBatchNormsIntoTheConvolutions) {
  const OptimizedGraph g = optimized_graph("resnet18");
  ASSERT_EQ(g.error, "");
  print("resnet18", g);
  EXPECT_EQ(g.loaded_count("BatchNormalization"), 20) << "the export keeps its BatchNorms";
  EXPECT_EQ(g.count("BatchNormalization"), 0);
  EXPECT_EQ(g.count("Relu"), 0);
  EXPECT_EQ(g.count("Add"), 0);
  EXPECT_EQ(g.count("ai.infer.FusedConv") + g.count("Conv"), 20);
  EXPECT_EQ(g.activations.count("Relu") ? g.activations.at("Relu") : 0, 17);
}

// ResNet-50 (BatchNorms folded by the exporter): 53 convolutions; 49 Relus (the stem,
// two per bottleneck inside, one after each of the 16 residual Adds).
TEST(OptimizedGraphs, ResNet50FoldsEveryBatchNormAndFusesEveryRelu) {
  const OptimizedGraph g = optimized_graph("resnet50");
  ASSERT_EQ(g.error, "");
  print("resnet50", g);
  EXPECT_EQ(g.count("BatchNormalization"), 0);
  EXPECT_EQ(g.count("Identity"), 0);
  EXPECT_EQ(g.count("Relu"), 0);
  EXPECT_EQ(g.count("Add"), 0) << "every residual Add belongs in a FusedConv";
  EXPECT_EQ(g.count("ai.infer.FusedConv") + g.count("Conv"), 53);
  EXPECT_EQ(g.activations.count("Relu") ? g.activations.at("Relu") : 0, 49);
}

// MobileNetV2: 52 convolutions, each followed by a BatchNormalization; ReLU6 (Clip 0..6)
// after 35 of them; 10 residual Adds without activation.
TEST(OptimizedGraphs, MobileNetV2FusesBatchNormClipAndResiduals) {
  const OptimizedGraph g = optimized_graph("mobilenet_v2");
  ASSERT_EQ(g.error, "");
  print("mobilenet_v2", g);
  EXPECT_EQ(g.count("BatchNormalization"), 0);
  EXPECT_EQ(g.count("Clip"), 0);
  EXPECT_EQ(g.count("Add"), 0);
  EXPECT_EQ(g.count("ai.infer.FusedConv") + g.count("Conv"), 52);
  EXPECT_EQ(g.activations.count("Clip") ? g.activations.at("Clip") : 0, 35);
}

// The 2-layer BERT-style encoder: per layer one attention op, one GELU (a Gelu node, or
// the activation of the FusedMatMul it follows) and two LayerNormalizations, plus the
// embeddings' LayerNormalization; no Shape arithmetic left for the head split.
TEST(OptimizedGraphs, BertEncoderHasOneAttentionAndOneGeluPerLayer) {
  const OptimizedGraph g = optimized_graph("bert_tiny");
  ASSERT_EQ(g.error, "");
  print("bert_tiny", g);
  EXPECT_EQ(g.count("ai.infer.Attention"), 2);
  const int gelus = g.count("ai.infer.Gelu") + (g.activations.count("Gelu") ? g.activations.at("Gelu") : 0);
  EXPECT_EQ(gelus, 2);
  EXPECT_EQ(g.count("LayerNormalization"), 5);
  EXPECT_EQ(g.count("Softmax"), 0);
  EXPECT_EQ(g.count("Erf"), 0);
  EXPECT_EQ(g.count("Identity"), 0);
  EXPECT_EQ(g.count("Transpose"), 0);
  EXPECT_EQ(g.count("MatMul"), 0) << "every projection is a FusedMatMul with its bias";
}

// The same encoder at opset 13, where torch writes LayerNorm out in 9 operators: they
// become ai.infer LayerNormalization (ONNX's operator exists only from opset 17).
TEST(OptimizedGraphs, BertOpset13DecomposedLayerNormsAreFused) {
  const OptimizedGraph g = optimized_graph("bert_tiny_opset13");
  ASSERT_EQ(g.error, "");
  print("bert_tiny_opset13", g);
  EXPECT_EQ(g.loaded_count("ReduceMean"), 10) << "two per LayerNorm in the export";
  EXPECT_EQ(g.count("ai.infer.LayerNormalization"), 5);
  EXPECT_EQ(g.count("ReduceMean"), 0);
  EXPECT_EQ(g.count("Sqrt"), 0);
  EXPECT_EQ(g.count("ai.infer.Attention"), 2);
  const int gelus = g.count("ai.infer.Gelu") + (g.activations.count("Gelu") ? g.activations.at("Gelu") : 0);
  EXPECT_EQ(gelus, 2);
}

}  // namespace
}  // namespace infer::models_test
