// Percentiles and throughput on arrays computed by hand with numpy's default (linear)
// method: rank = p/100 * (n - 1), interpolating between the neighbouring values.
#include <gtest/gtest.h>

#include "bench_stats.hpp"

namespace infer::cli {
namespace {

TEST(Percentile, LinearInterpolationBetweenRanks) {
  const std::vector<double> sorted = {15, 20, 35, 40, 50};
  EXPECT_DOUBLE_EQ(percentile(sorted, 0), 15);
  EXPECT_DOUBLE_EQ(percentile(sorted, 40), 29);    // rank 1.6: 20 + 0.6 * 15
  EXPECT_DOUBLE_EQ(percentile(sorted, 50), 35);    // rank 2
  EXPECT_DOUBLE_EQ(percentile(sorted, 90), 46);    // rank 3.6: 40 + 0.6 * 10
  EXPECT_DOUBLE_EQ(percentile(sorted, 99), 49.6);  // rank 3.96: 40 + 0.96 * 10
  EXPECT_DOUBLE_EQ(percentile(sorted, 100), 50);
}

TEST(Percentile, SmallArrays) {
  EXPECT_DOUBLE_EQ(percentile({7}, 50), 7);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile({1, 3}, 50), 2);
  EXPECT_DOUBLE_EQ(percentile({1, 3}, 90), 2.8);
  EXPECT_DOUBLE_EQ(percentile({1, 3}, 99), 2.98);
}

TEST(SummarizeLatencies, SortsAndSummarizes) {
  const LatencySummary s = summarize_latencies({40, 15, 50, 35, 20});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.p50, 35);
  EXPECT_DOUBLE_EQ(s.p90, 46);
  EXPECT_DOUBLE_EQ(s.p99, 49.6);
  EXPECT_DOUBLE_EQ(s.mean, 32);
  EXPECT_DOUBLE_EQ(s.min, 15);
  EXPECT_DOUBLE_EQ(s.max, 50);
}

TEST(SummarizeLatencies, TenValues) {
  // 1..10: p50 rank 4.5 -> 5.5; p90 rank 8.1 -> 9.1; p99 rank 8.91 -> 9.91.
  const LatencySummary s = summarize_latencies({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_NEAR(s.p99, 9.91, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
}

TEST(SummarizeLatencies, EmptyIsAllZero) {
  const LatencySummary s = summarize_latencies({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.mean, 0);
}

TEST(Throughput, RunsPerSecond) {
  EXPECT_DOUBLE_EQ(throughput_per_s(50, 250), 200);
  EXPECT_DOUBLE_EQ(throughput_per_s(3, 1.5), 2000);
  EXPECT_DOUBLE_EQ(throughput_per_s(10, 0), 0);
}

TEST(PeakRss, ParsesVmHwm) {
  const char* status =
      "Name:\tinfer-run\nVmPeak:\t  123456 kB\nVmHWM:\t   45678 kB\nVmRSS:\t   40000 kB\n";
  EXPECT_EQ(parse_vmhwm_kb(status).value_or(-1), 45678);
  EXPECT_FALSE(parse_vmhwm_kb("Name:\tx\nVmRSS:\t 1 kB\n").has_value());
  EXPECT_FALSE(parse_vmhwm_kb("VmHWM:\t junk\n").has_value());
}

TEST(PeakRss, ReadsThisProcess) {
  const std::optional<double> mb = peak_rss_mb();
  ASSERT_TRUE(mb.has_value());  // the suite runs on Linux
  EXPECT_GT(*mb, 0.5);
}

}  // namespace
}  // namespace infer::cli
