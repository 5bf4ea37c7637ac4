// opset_import: the oldest opset, aliases, custom domains, missing imports.
#include "test_util.hpp"

namespace infer::onnx_io {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// Old opsets load; whether their nodes run is decided per node by the backends.
TEST(Opsets, OpsetSixLoads) {
  onnx::ModelProto m = testing::relu_model();
  m.mutable_opset_import(0)->set_version(6);
  TempDir dir;
  auto r = testing::save_and_load(m, dir);
  ASSERT_LOADED(r);
  EXPECT_EQ(r->opset(""), 6);
}

TEST(Opsets, OpsetSevenIsAccepted) {
  onnx::ModelProto m = testing::relu_model();
  m.mutable_opset_import(0)->set_version(7);
  TempDir dir;
  auto r = testing::save_and_load(m, dir);
  ASSERT_LOADED(r);
  EXPECT_EQ(r->opset(""), 7);
}

TEST(Opsets, IrVersionTwoWithoutImportsIsOpsetOne) {
  onnx::ModelProto m = testing::relu_model();
  m.clear_opset_import();
  m.set_ir_version(2);
  TempDir dir;
  auto r = testing::save_and_load(m, dir);
  ASSERT_LOADED(r);
  EXPECT_EQ(r->opset(""), 1);
}

TEST(Opsets, AllDomainsAreKeptAndAiOnnxIsTheDefault) {
  onnx::ModelProto m = testing::relu_model();
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  testing::import_domain(m, "ai.onnx.ml", 3);
  testing::import_domain(m, "com.acme", 2);
  TempDir dir;
  auto r = testing::save_and_load(m, dir);
  ASSERT_LOADED(r);
  EXPECT_EQ(r->opsets,
            (std::map<std::string, int64_t>{{"", 13}, {"ai.onnx.ml", 3}, {"com.acme", 2}}));
  EXPECT_EQ(r->opset("ai.onnx"), 13);
}

TEST(Opsets, DuplicateDomainIsRejected) {
  onnx::ModelProto m = testing::relu_model();
  testing::import_domain(m, "", 14);
  TempDir dir;
  auto r = testing::save_and_load(m, dir);
  ASSERT_FALSE(r.is_ok());
  EXPECT_THAT(r.status().message(), HasSubstr("opset_import lists domain '' twice"));
}

TEST(Opsets, NodeOfAnUnimportedDomainIsRejectedWithOrWithoutChecker) {
  onnx::ModelProto m = testing::make_model();
  auto& g = *m.mutable_graph();
  testing::add_input(g, "x", onnx::TensorProto::FLOAT, {int64_t{2}});
  testing::add_node(g, "Foo", {"x"}, {"y"}, "foo", "com.acme");
  testing::add_output(g, "y", onnx::TensorProto::FLOAT, {int64_t{2}});
  TempDir dir;
  for (bool checker : {true, false}) {
    LoadOptions options;
    options.run_checker = checker;
    auto r = testing::save_and_load(m, dir, options);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("node 'foo' (com.acme:Foo)"));
    EXPECT_THAT(r.status().message(), HasSubstr("'com.acme'"));
  }
}

}  // namespace
}  // namespace infer::onnx_io
