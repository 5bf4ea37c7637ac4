// infer-serve's metrics text (tools/infer-serve/metrics): histogram buckets are
// cumulative and counted by hand here, labels are escaped as the text format says, and
// the whole page passes Debian's `promtool check metrics`, the linter Prometheus ships.
#include "metrics.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace infer::serve {
namespace {

bool contains_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(Histogram, BucketsAreCumulativeWithSumAndCount) {
  Histogram h({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 3.0, 7.0, 7.0}) h.observe(v);
  std::string out;
  h.render(out, "x", "a=\"b\"");
  // <=1: 0.5 and 1.0 (bounds are inclusive); <=2: +1.5; <=5: +3.0; +Inf: +7, +7.
  EXPECT_EQ(out,
            "x_bucket{a=\"b\",le=\"1\"} 2\n"
            "x_bucket{a=\"b\",le=\"2\"} 3\n"
            "x_bucket{a=\"b\",le=\"5\"} 4\n"
            "x_bucket{a=\"b\",le=\"+Inf\"} 6\n"
            "x_sum{a=\"b\"} 20\n"
            "x_count{a=\"b\"} 6\n");
}

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(Metrics, PageHasEverySeriesPerModel) {
  Metrics metrics;
  ModelMetrics& a = metrics.add_model("digits", "1");
  ModelMetrics& b = metrics.add_model("other", "3");
  a.count(Outcome::kSuccess);
  a.count(Outcome::kSuccess);
  a.count(Outcome::kRejected);
  b.count(Outcome::kBadRequest);
  a.batch_size.observe(8);
  a.request_seconds.observe(0.003);
  a.inflight = 2;
  a.load_seconds = 0.25;
  a.queue_depth = [] { return size_t{5}; };
  const std::string page = metrics.render();
  EXPECT_TRUE(contains_line(
      page, "infer_requests_total{model=\"digits\",version=\"1\",outcome=\"success\"} 2"));
  EXPECT_TRUE(contains_line(
      page, "infer_requests_total{model=\"digits\",version=\"1\",outcome=\"rejected\"} 1"));
  EXPECT_TRUE(contains_line(
      page, "infer_requests_total{model=\"other\",version=\"3\",outcome=\"bad_request\"} 1"));
  EXPECT_TRUE(
      contains_line(page, "infer_batch_size_bucket{model=\"digits\",version=\"1\",le=\"4\"} 0"));
  EXPECT_TRUE(
      contains_line(page, "infer_batch_size_bucket{model=\"digits\",version=\"1\",le=\"8\"} 1"));
  EXPECT_TRUE(contains_line(
      page,
      "infer_request_duration_seconds_bucket{model=\"digits\",version=\"1\",le=\"0.0025\"} 0"));
  EXPECT_TRUE(contains_line(
      page,
      "infer_request_duration_seconds_bucket{model=\"digits\",version=\"1\",le=\"0.005\"} 1"));
  EXPECT_TRUE(contains_line(page, "infer_queue_depth{model=\"digits\",version=\"1\"} 5"));
  EXPECT_TRUE(contains_line(page, "infer_queue_depth{model=\"other\",version=\"3\"} 0"));
  EXPECT_TRUE(contains_line(page, "infer_inflight_requests{model=\"digits\",version=\"1\"} 2"));
  EXPECT_TRUE(contains_line(
      page, "infer_model_load_duration_seconds{model=\"digits\",version=\"1\"} 0.25"));
  EXPECT_TRUE(contains_line(page, "# TYPE infer_requests_total counter"));
  EXPECT_TRUE(contains_line(page, "# TYPE infer_compute_duration_seconds histogram"));
  EXPECT_NE(page.find("\nprocess_resident_memory_bytes "), std::string::npos);
  EXPECT_GT(resident_memory_bytes(), 0u);
}

// promtool is a test dependency (tools/install-deps.sh installs Debian's prometheus).
TEST(Metrics, PagePassesPromtool) {
  ASSERT_EQ(std::system("command -v promtool >/dev/null"), 0)
      << "promtool is missing: bash tools/install-deps.sh installs Debian's prometheus package";
  Metrics metrics;
  ModelMetrics& m = metrics.add_model("digits", "1");
  m.count(Outcome::kSuccess);
  m.queue_seconds.observe(0.0001);
  m.compute_seconds.observe(0.02);
  const std::string path = ::testing::TempDir() + "metrics_" + std::to_string(getpid()) + ".txt";
  const std::string report = path + ".out";
  std::ofstream(path) << metrics.render();
  const int rc =
      std::system(("promtool check metrics < " + path + " > " + report + " 2>&1").c_str());
  std::ifstream in(report);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << said;
  EXPECT_EQ(said, "");
  std::remove(path.c_str());
  std::remove(report.c_str());
}

}  // namespace
}  // namespace infer::serve
