// The optimizer pipeline: a plain list of passes for one optimization level, run to a
// fixed point (with a cap), recording how often each pass changed the graph so that
// --explain can show it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "optimizer/pass.hpp"

namespace infer::optimizer {

inline constexpr int kMinOptimizationLevel = 0;
inline constexpr int kMaxOptimizationLevel = 3;

// What one pass did during Pipeline::run.
struct PassStats {
  std::string name;
  int applications = 0;  // how many times apply() was called
  int changes = 0;       // how many of those calls changed the graph
  int rewrites = 0;      // the rewrites those calls reported, summed
  double milliseconds = 0;  // wall time spent in apply()
};

class Pipeline {
 public:
  // The pipeline re-runs its whole list while any pass still changes the graph, at most
  // this many rounds: a pass pair that keeps undoing each other must not hang the load.
  static constexpr int kDefaultMaxRounds = 8;

  Pipeline() = default;
  Pipeline(Pipeline&&) = default;
  Pipeline& operator=(Pipeline&&) = default;

  void add(std::unique_ptr<Pass> pass);
  void set_max_rounds(int rounds) { max_rounds_ = rounds; }

  size_t size() const { return passes_.size(); }
  std::vector<std::string> pass_names() const;

  // Applies the passes in order, each up to its max_iterations() times in a row while it
  // reports a change, and repeats the list until a round changes nothing or the round
  // cap is reached; after each round that changed the graph, the context's shape refiner
  // (if any) updates the shapes for the next. Statistics accumulate over calls. A failing pass stops the pipeline
  // with "optimizer pass '<name>': <message>".
  Status run(ir::Graph& graph, const PassContext& context = {});

  // One entry per pass, in pipeline order.
  const std::vector<PassStats>& stats() const { return stats_; }
  // "dead_code_elimination: 3 rewrites" for every pass that changed the graph.
  std::vector<std::string> changed_summary() const;
  // Total wall time of all apply() calls so far.
  double total_milliseconds() const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<PassStats> stats_;
  int max_rounds_ = kDefaultMaxRounds;
};

// The pipeline for optimization `level` (0..3) without the passes named in
// `disabled_passes`. Level 0 runs nothing. An out-of-range level, or a disabled name
// that is not a known pass, is InvalidArgument (the latter lists the known names).
Result<Pipeline> make_pipeline(int level, const std::vector<std::string>& disabled_passes);

}  // namespace infer::optimizer
