#include <gtest/gtest.h>

#include "infer/infer.hpp"

namespace infer {
namespace {

TEST(PlanReport, ToTextListsNodesPartitionsCopiesAndPasses) {
  PlanReport r;
  r.nodes = {{"mm", "MatMul", "", "example", "example: supported"},
             {"sm", "Softmax", "", "cpu", "cpu: fallback (example: unsupported op Softmax)"},
             {"f", "Foo", "com.acme", "cpu", "cpu: supported"}};
  r.partitions = {{"p0", "example", 1}, {"p1", "cpu", 2}};
  r.copies = {{"x", "host", "example", 32}, {"h", "example", "cpu", -1}, {"y", "cpu", "host", 1}};
  r.passes = {"dead_code_elimination: 1 rewrite, 0.1 ms"};
  r.optimization_level = 3;
  r.nodes_loaded = 4;
  r.nodes_optimized = 3;
  r.optimizer_ms = 1.25;
  r.decomposed = {"node 'f2' (FusedConv): decomposed (no backend claims it)"};
  EXPECT_EQ(r.to_text(),
            "nodes (3):\n"
            "  mm (MatMul) -> example  [example: supported]\n"
            "  sm (Softmax) -> cpu  [cpu: fallback (example: unsupported op Softmax)]\n"
            "  f (Foo, domain com.acme) -> cpu  [cpu: supported]\n"
            "partitions (2):\n"
            "  p0 on example: 1 node\n"
            "  p1 on cpu: 2 nodes\n"
            "copies per run (3):\n"
            "  x: host -> example, 32 bytes\n"
            "  h: example -> cpu, size known at run time\n"
            "  y: cpu -> host, 1 byte\n"
            "  total: 33 bytes + 1 of run-time size\n"
            "optimizer: level 3, 4 nodes loaded -> 3 nodes run, 1.2 ms\n"
            "optimizer passes that changed the graph:\n"
            "  dead_code_elimination: 1 rewrite, 0.1 ms\n"
            "fused nodes run as their standard operators:\n"
            "  node 'f2' (FusedConv): decomposed (no backend claims it)\n");
}

TEST(PlanReport, TotalOfCopiesWhoseSizesAreAllSymbolic) {
  PlanReport r;
  r.copies = {{"x", "host", "example", -1}, {"y", "example", "host", -1}};
  const std::string text = r.to_text();
  EXPECT_NE(text.find("copies per run (2):\n"
                      "  x: host -> example, size known at run time\n"
                      "  y: example -> host, size known at run time\n"
                      "  total: known at run time\n"),
            std::string::npos)
      << text;
}

TEST(PlanReport, EmptySectionsSayNone) {
  PlanReport r;
  r.nodes = {{"relu", "Relu", "", "cpu", "cpu: supported"}};
  r.partitions = {{"p0", "cpu", 1}};
  EXPECT_EQ(r.to_text(),
            "nodes (1):\n"
            "  relu (Relu) -> cpu  [cpu: supported]\n"
            "partitions (1):\n"
            "  p0 on cpu: 1 node\n"
            "copies per run (0):\n"
            "  none\n"
            "optimizer: level 0, 0 nodes loaded -> 0 nodes run, 0.0 ms\n"
            "optimizer passes that changed the graph: none\n");
}

}  // namespace
}  // namespace infer
