// infer-run --dump-graph FILE.onnx: the session writes the graph as it will run, and the
// file is a model the project's own loader (with ONNX's checker on) reads back. The
// reference is the shipped digits model itself, loaded from its original file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "cli_binary.hpp"
#include "onnx/model_loader.hpp"
#include "test_data.hpp"

namespace infer::cli::testing {
namespace {

const std::string kDigits = source_path("models/digits_cnn.onnx");

void expect_success(const ProcessResult& r) {
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  EXPECT_EQ(r.err, "");
}

std::vector<std::string> value_names(const ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  std::vector<std::string> names;
  for (ir::ValueId id : ids) names.push_back(g.value(id).name);
  return names;
}

// At level 0 nothing rewrites the graph, so the dump is the original model: same
// signature, same operators in the same order, same weights byte for byte.
TEST(DumpGraph, LevelZeroDumpIsTheLoadedModel) {
  ScratchDir dir("dump_graph0");
  const std::string dump = dir.file("digits_opt0.onnx");
  const ProcessResult r =
      infer_run({kDigits, "--shape", "image=2x1x8x8", "--opt-level", "0", "--dump-graph", dump});
  expect_success(r);
  ASSERT_TRUE(std::filesystem::exists(dump)) << "the session did not write " << dump;

  Result<ir::Model> original = onnx_io::load_model(kDigits);
  ASSERT_TRUE(original.is_ok()) << original.status().message();
  Result<ir::Model> dumped = onnx_io::load_model(dump);
  ASSERT_TRUE(dumped.is_ok()) << dumped.status().message();
  const ir::Graph& a = *original->graph;
  const ir::Graph& b = *dumped->graph;
  EXPECT_EQ(value_names(b, b.inputs), value_names(a, a.inputs));
  EXPECT_EQ(value_names(b, b.outputs), value_names(a, a.outputs));
  EXPECT_EQ(b.value(b.inputs[0]).shape, a.value(a.inputs[0]).shape);  // [batch,1,8,8]
  ASSERT_EQ(b.node_count(), a.node_count());
  for (ir::NodeId n = 0; n < a.node_count(); ++n) {
    EXPECT_EQ(b.node(n).op_type, a.node(n).op_type);
    EXPECT_EQ(b.node(n).name, a.node(n).name);
    for (size_t k = 0; k < a.node(n).inputs.size(); ++k) {
      const ir::Value& va = a.value(a.node(n).inputs[k]);
      if (!va.is_constant()) continue;
      SCOPED_TRACE(va.name);
      auto found = b.find_value(va.name);
      ASSERT_TRUE(found.has_value());
      const ir::Value& vb = b.value(*found);
      ASSERT_TRUE(vb.is_constant());
      ASSERT_EQ(vb.constant->size_bytes(), va.constant->size_bytes());
      EXPECT_EQ(std::memcmp(vb.constant->data(), va.constant->data(), va.constant->size_bytes()), 0);
    }
  }
  EXPECT_EQ(dumped->opset(""), 13);
  EXPECT_EQ(dumped->producer_name, "infer");
}

// At the default level the graph may be rewritten (fused ops in ai.infer); whatever it
// became, the dump loads, keeps the model's signature and imports every domain it uses.
TEST(DumpGraph, DefaultLevelDumpLoadsWithItsDomains) {
  ScratchDir dir("dump_graph3");
  const std::string dump = dir.file("digits.onnx");
  const ProcessResult r = infer_run({kDigits, "--shape", "image=2x1x8x8", "--dump-graph", dump});
  expect_success(r);
  ASSERT_TRUE(std::filesystem::exists(dump)) << "the session did not write " << dump;
  Result<ir::Model> dumped = onnx_io::load_model(dump);
  ASSERT_TRUE(dumped.is_ok()) << dumped.status().message();
  const ir::Graph& g = *dumped->graph;
  EXPECT_EQ(value_names(g, g.inputs), (std::vector<std::string>{"image"}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_GT(g.node_count(), 0u);
  for (const ir::Node& n : g.nodes()) EXPECT_GT(dumped->opset(n.domain), 0) << n.describe();
}

TEST(DumpGraph, UnwritablePathIsOneLineNamingIt) {
  ScratchDir dir("dump_graph_err");
  const std::string dump = dir.file("missing/folder/out.onnx");
  const std::string message =
      expect_one_line_error(infer_run({kDigits, "--shape", "image=1x1x8x8", "--dump-graph", dump}));
  EXPECT_NE(message.find(dump), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(DumpGraph, EmptyFileNameIsBadUsage) {
  const std::string message = expect_one_line_error(infer_run({kDigits, "--dump-graph", ""}), 2);
  EXPECT_NE(message.find("--dump-graph"), std::string::npos) << message;
}

}  // namespace
}  // namespace infer::cli::testing
