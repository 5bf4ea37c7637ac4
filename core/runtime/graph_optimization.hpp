// The session's use of the optimizer: the pipeline for the options' level, run with the
// services passes may not implement themselves (constant evaluation on the CPU plugin's
// kernels, ONNX's shape inference between rounds), and what it did, for --explain.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "ir/graph.hpp"
#include "optimizer/pass.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/logger.hpp"

namespace infer::runtime {

struct OptimizationOutcome {
  optimizer::PassContext context;  // what the passes were given (opsets, for decompositions)
  // "constant_folding: 12 rewrites, 0.8 ms" for every pass that changed the graph.
  std::vector<std::string> pass_lines;
};

// Runs the pipeline of options.optimization_level (without options.disabled_passes) on
// model.graph, then imports the ai.infer domain when fused nodes appeared. Errors: an
// out-of-range level or unknown pass name (InvalidArgument, as make_pipeline says), or a
// failing pass (with the model's path as context).
Result<OptimizationOutcome> optimize_model(ir::Model& model, const SessionOptions& options,
                                           const std::vector<Backend>& backends,
                                           const std::shared_ptr<tbb::task_arena>& arena,
                                           const Logger& log);

}  // namespace infer::runtime
