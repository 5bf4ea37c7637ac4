// The per-node profile table (node_profile.hpp, INFER_CPU_PROFILE): fed hand-chosen
// times, it must rank nodes by total time, give per-run figures and shares that add up,
// and total the op types.
#include <gtest/gtest.h>

#include <string>

#include "node_profile.hpp"

namespace infer::test {
namespace {

using cpu::NodeProfile;

TEST(NodeProfile, RanksNodesAndTotalsOpTypes) {
  NodeProfile p("part0", {{"conv_a", "Conv"}, {"relu", "Relu"}, {"conv_b", "Conv"}, {"idle", "Add"}});
  // Two runs: conv_a 3 ms + 1 ms, relu 0.5 ms twice, conv_b 2 ms twice, idle never ran.
  for (int run = 0; run < 2; ++run) {
    p.add_run();
    p.add(0, run == 0 ? 3'000'000 : 1'000'000);
    p.add(1, 500'000);
    p.add(2, 2'000'000);
  }
  const std::string t = p.format(10);
  // Total 4 + 1 + 4 = 9 ms over 2 runs = 4.5 ms per run.
  EXPECT_NE(t.find("partition 'part0', 2 runs, 4.500 ms per run in 4 nodes"), std::string::npos) << t;
  // conv_a and conv_b tie at 4 ms: position breaks the tie; relu is last; idle is absent.
  const size_t a = t.find("conv_a"), b = t.find("conv_b"), r = t.find("  relu");
  ASSERT_NE(a, std::string::npos) << t;
  ASSERT_NE(b, std::string::npos) << t;
  ASSERT_NE(r, std::string::npos) << t;
  EXPECT_LT(a, b);
  EXPECT_LT(b, r);
  EXPECT_EQ(t.find("idle"), std::string::npos) << t;
  // 4 / 9 = 44.4%, 2.000 ms per run, one call per run.
  EXPECT_NE(t.find("   44.4%   2.000        1.0  Conv                  conv_a"), std::string::npos) << t;
  EXPECT_NE(t.find("   11.1%   0.500        1.0  Relu                  relu"), std::string::npos) << t;
  // By op type: Conv 8 / 9 = 88.9%, 4 ms and 2 calls per run, then Relu.
  const size_t by = t.find("by op type:");
  ASSERT_NE(by, std::string::npos) << t;
  const size_t conv = t.find("   88.9%   4.000        2.0  Conv", by);
  const size_t relu = t.find("   11.1%   0.500        1.0  Relu", by);
  EXPECT_NE(conv, std::string::npos) << t;
  EXPECT_NE(relu, std::string::npos) << t;
  EXPECT_LT(conv, relu);
}

TEST(NodeProfile, LimitsRowsAndStaysEmptyWithoutRuns) {
  NodeProfile idle("p", {{"n", "Relu"}});
  EXPECT_EQ(idle.format(10), "");
  NodeProfile p("p", {{"n0", "Relu"}, {"n1", "Relu"}, {"n2", "Relu"}});
  p.add_run();
  for (size_t i = 0; i < 3; ++i) p.add(i, 1000 * static_cast<int64_t>(i + 1));
  const std::string t = p.format(2);
  EXPECT_NE(t.find("n2"), std::string::npos);
  EXPECT_NE(t.find("n1"), std::string::npos);
  EXPECT_EQ(t.find("Relu                  n0"), std::string::npos) << t;
  EXPECT_NE(t.find("(1 more nodes)"), std::string::npos) << t;
}

}  // namespace
}  // namespace infer::test
