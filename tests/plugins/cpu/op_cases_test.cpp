// Runs every case of data/op_cases.txt and data/fused_cases.txt (inputs and expected
// outputs computed by numpy and PyTorch in gen_expected.py and gen_fused_cases.py) through
// the cpu plugin: compile the case's graph, execute it through the ABI, compare the
// outputs.
#include <gtest/gtest.h>

#include "infer/test_support/test_support.hpp"
#include "infer_test_paths.hpp"

namespace infer::test {
namespace {

const std::vector<OpCase>& all_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all;
    for (const char* file : {"op_cases.txt", "fused_cases.txt"}) {
      std::string error;
      auto c = load_op_cases(std::string(INFER_SOURCE_DIR) + "/tests/plugins/cpu/data/" + file,
                             &error);
      if (c.empty()) ADD_FAILURE() << "no cases in " << file << ": " << error;
      for (auto& one : c) all.push_back(std::move(one));
    }
    return all;
  }();
  return cases;
}

class CpuOpCase : public ::testing::TestWithParam<size_t> {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    plugin_ = PluginHandle::load(plugin_path("cpu"), &error).release();
    ASSERT_NE(plugin_, nullptr) << error;
  }
  static void TearDownTestSuite() {
    delete plugin_;
    plugin_ = nullptr;
  }
  static PluginHandle* plugin_;
};
PluginHandle* CpuOpCase::plugin_ = nullptr;

TEST_P(CpuOpCase, MatchesReference) {
  ASSERT_NE(plugin_, nullptr);
  const OpCase& c = all_cases()[GetParam()];
  GraphBuilder builder;
  const infer_graph_view* graph = c.build(builder);
  // Every node of the case must be claimed by the capability query too.
  for (size_t i = 0; i < graph->num_nodes; ++i) {
    infer_capability cap{};
    cap.struct_size = sizeof cap;
    ASSERT_TRUE(
        take_status(plugin_->api()->query_capability(plugin_->device(), graph->nodes[i], &cap))
            .ok());
    EXPECT_EQ(cap.support, INFER_SUPPORT_YES) << graph->nodes[i]->op_type << ": " << cap.reason;
  }
  StatusInfo st;
  auto exe = CompiledGraph::compile(*plugin_, graph, &st);
  ASSERT_TRUE(exe) << status_code_name(st.code) << ": " << st.message;
  // Once with mapped buffers, once with every transfer through copy_batch on a stream.
  for (bool allow_map : {true, false}) {
    RunOptions options;
    options.allow_map = allow_map;
    RunResult r = exe->run(c.inputs(), options);
    ASSERT_TRUE(r.ok()) << status_code_name(r.status.code) << ": " << r.status.message;
    std::string diff = c.compare(r.outputs);
    EXPECT_TRUE(diff.empty()) << (allow_map ? "mapped: " : "copied: ") << diff;
  }
  exe.reset();
  EXPECT_EQ(plugin_->host().live_allocations(), 0) << "buffers or temporaries leaked";
}

std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  return all_cases()[info.param].name;
}

std::vector<size_t> case_indices() {
  std::vector<size_t> v(all_cases().size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

INSTANTIATE_TEST_SUITE_P(Generated, CpuOpCase, ::testing::ValuesIn(case_indices()), case_name);

}  // namespace
}  // namespace infer::test
