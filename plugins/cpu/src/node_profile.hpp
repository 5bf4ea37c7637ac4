// Per-node timing for the cpu plugin, on when INFER_CPU_PROFILE is set to anything but
// "" or "0" (a number above 1 is how many nodes the table lists; else 25). Each
// executable adds up the wall time of every node's kernel over all runs and prints a
// table to stderr when it is destroyed (at the end of the session): the slowest nodes
// first, then the totals per op type; load-time constant folding is left out. It answers
// "which layer is slow" without an external profiler. Kernels that split work over
// threads are timed whole, so the figures are latency shares, not CPU time. Header-only
// and ABI-free so the table's arithmetic is tested directly.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace infer::cpu {

class NodeProfile {
 public:
  struct Node {
    std::string name, op_type;
  };

  // Whether INFER_CPU_PROFILE asks for profiles (read once).
  static bool enabled() { return rows_wanted() > 0; }
  // How many node rows the table lists: INFER_CPU_PROFILE as a number (1 means the
  // default, 25), 0 when profiling is off.
  static size_t rows_wanted() {
    static const size_t rows = [] {
      const char* v = std::getenv("INFER_CPU_PROFILE");
      if (v == nullptr || v[0] == '\0' || std::string(v) == "0") return size_t{0};
      const long n = std::strtol(v, nullptr, 10);
      return n > 1 ? static_cast<size_t>(n) : size_t{25};
    }();
    return rows;
  }

  NodeProfile(std::string partition, std::vector<Node> nodes)
      : partition_(std::move(partition)),
        nodes_(std::move(nodes)),
        ns_(std::make_unique<std::atomic<int64_t>[]>(nodes_.size())),
        calls_(std::make_unique<std::atomic<int64_t>[]>(nodes_.size())) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      ns_[i] = 0;
      calls_[i] = 0;
    }
  }
  NodeProfile(const NodeProfile&) = delete;
  NodeProfile& operator=(const NodeProfile&) = delete;
  ~NodeProfile() {
    // The host evaluates constant subgraphs at load through one-node partitions named
    // "constant_folding/<node>": not part of the model's runs, so left out.
    if (partition_.rfind("constant_folding/", 0) == 0) return;
    const std::string table = format(rows_wanted());
    if (!table.empty()) std::fputs(table.c_str(), stderr);
  }

  // Safe from concurrent runs.
  void add(size_t node, int64_t ns) {
    ns_[node].fetch_add(ns, std::memory_order_relaxed);
    calls_[node].fetch_add(1, std::memory_order_relaxed);
  }
  void add_run() { runs_.fetch_add(1, std::memory_order_relaxed); }

  // The table: the `top` slowest nodes by total time (ties by position), then every op
  // type's total; empty when nothing ran.
  std::string format(size_t top) const {
    const int64_t runs = runs_.load();
    int64_t total = 0;
    std::vector<size_t> order;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      total += ns_[i].load();
      if (calls_[i].load() > 0) order.push_back(i);
    }
    if (runs == 0 || order.empty()) return {};
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ns_[a].load() > ns_[b].load(); });
    const double per_run = 1.0 / static_cast<double>(runs);
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line,
                  "infer cpu profile: partition '%s', %lld runs, %.3f ms per run in %zu nodes\n",
                  partition_.c_str(), static_cast<long long>(runs),
                  static_cast<double>(total) * per_run * 1e-6, nodes_.size());
    out += line;
    out += "   share  ms/run  calls/run  op type               node\n";
    auto row = [&](int64_t ns, double calls, const std::string& op, const std::string& name) {
      std::snprintf(line, sizeof line, "  %5.1f%%  %6.3f  %9.1f  %-20s  %s\n",
                    total > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(total) : 0.0,
                    static_cast<double>(ns) * per_run * 1e-6, calls * per_run, op.c_str(),
                    name.c_str());
      out += line;
    };
    for (size_t k = 0; k < order.size() && k < top; ++k) {
      const size_t i = order[k];
      row(ns_[i].load(), static_cast<double>(calls_[i].load()), nodes_[i].op_type, nodes_[i].name);
    }
    if (order.size() > top) {
      std::snprintf(line, sizeof line, "  (%zu more nodes)\n", order.size() - top);
      out += line;
    }
    std::map<std::string, std::pair<int64_t, int64_t>> by_type;
    for (size_t i : order) {
      auto& t = by_type[nodes_[i].op_type];
      t.first += ns_[i].load();
      t.second += calls_[i].load();
    }
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> types(by_type.begin(),
                                                                            by_type.end());
    std::stable_sort(types.begin(), types.end(),
                     [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    out += "  by op type:\n";
    for (const auto& [op, t] : types) row(t.first, static_cast<double>(t.second), op, "");
    return out;
  }

 private:
  std::string partition_;
  std::vector<Node> nodes_;
  std::unique_ptr<std::atomic<int64_t>[]> ns_;
  std::unique_ptr<std::atomic<int64_t>[]> calls_;
  std::atomic<int64_t> runs_{0};
};

}  // namespace infer::cpu
