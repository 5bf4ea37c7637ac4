#include "bench_stats.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

namespace infer::cli {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<size_t>(std::floor(rank));
  const size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

LatencySummary summarize_latencies(std::vector<double> samples_ms) {
  LatencySummary summary;
  if (samples_ms.empty()) return summary;
  std::sort(samples_ms.begin(), samples_ms.end());
  summary.count = samples_ms.size();
  summary.p50 = percentile(samples_ms, 50);
  summary.p90 = percentile(samples_ms, 90);
  summary.p99 = percentile(samples_ms, 99);
  summary.mean = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(samples_ms.size());
  summary.min = samples_ms.front();
  summary.max = samples_ms.back();
  return summary;
}

double throughput_per_s(size_t runs, double total_ms) {
  if (total_ms <= 0) return 0;
  return static_cast<double>(runs) * 1000.0 / total_ms;
}

std::optional<int64_t> parse_vmhwm_kb(std::string_view text) {
  constexpr std::string_view kKey = "VmHWM:";
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.substr(0, kKey.size()) != kKey) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    int64_t kb = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), kb);
    if (ec != std::errc() || ptr == line.data()) return std::nullopt;
    return kb;
  }
  return std::nullopt;
}

std::optional<double> peak_rss_mb() {
  std::ifstream in("/proc/self/status");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::optional<int64_t> kb = parse_vmhwm_kb(text.str());
  if (!kb) return std::nullopt;
  return static_cast<double>(*kb) / 1024.0;
}

}  // namespace infer::cli
