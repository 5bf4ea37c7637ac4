#include "optimizer/pipeline.hpp"

#include <algorithm>
#include <chrono>

#include "optimizer/pass_registry.hpp"

namespace infer::optimizer {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

void Pipeline::add(std::unique_ptr<Pass> pass) {
  stats_.push_back(PassStats{pass->name(), 0, 0});
  passes_.push_back(std::move(pass));
}

std::vector<std::string> Pipeline::pass_names() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.push_back(p->name());
  return names;
}

Status Pipeline::run(ir::Graph& graph, const PassContext& context) {
  for (int round = 0; round < max_rounds_; ++round) {
    bool round_changed = false;
    for (size_t i = 0; i < passes_.size(); ++i) {
      Pass& pass = *passes_[i];
      const int cap = std::max(1, pass.max_iterations());
      for (int it = 0; it < cap; ++it) {
        const auto start = std::chrono::steady_clock::now();
        Result<int> rewrites = pass.apply(graph, context);
        stats_[i].milliseconds +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        ++stats_[i].applications;
        if (!rewrites.is_ok())
          return rewrites.status().with_context("optimizer pass '" + pass.name() + "'");
        if (*rewrites <= 0) break;
        ++stats_[i].changes;
        stats_[i].rewrites += *rewrites;
        round_changed = true;
      }
    }
    if (!round_changed) break;
    // The next round's patterns see the shapes this round's rewrites made known.
    if (context.shape_refiner != nullptr) context.shape_refiner->refine(graph);
  }
  return Status::ok();
}

std::vector<std::string> Pipeline::changed_summary() const {
  std::vector<std::string> out;
  for (const PassStats& s : stats_)
    if (s.changes > 0)
      out.push_back(s.name + ": " + std::to_string(s.rewrites) +
                    (s.rewrites == 1 ? " rewrite" : " rewrites"));
  return out;
}

double Pipeline::total_milliseconds() const {
  double total = 0;
  for (const PassStats& s : stats_) total += s.milliseconds;
  return total;
}

Result<Pipeline> make_pipeline(int level, const std::vector<std::string>& disabled_passes) {
  if (level < kMinOptimizationLevel || level > kMaxOptimizationLevel)
    return invalid_argument("optimization level " + std::to_string(level) +
                            " is out of range (expected " + std::to_string(kMinOptimizationLevel) +
                            ".." + std::to_string(kMaxOptimizationLevel) + ")");
  const std::vector<std::string> known = known_pass_names();
  for (const std::string& name : disabled_passes)
    if (std::find(known.begin(), known.end(), name) == known.end())
      return invalid_argument("unknown optimizer pass '" + name +
                              "' in disabled passes (known passes: " + join(known) + ")");

  Pipeline pipeline;
  for (const PassEntry& entry : pass_registry()) {
    if (level < entry.min_level) continue;
    if (std::find(disabled_passes.begin(), disabled_passes.end(), entry.name) !=
        disabled_passes.end())
      continue;
    pipeline.add(entry.make());
  }
  return pipeline;
}

}  // namespace infer::optimizer
