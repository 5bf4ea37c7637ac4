// Runs one exported model of the models cache (tools/models/export_models.py) through the
// public C++ API on the CPU backend, and compares every output of every run with the
// reference the exporter saved (PyTorch's own outputs, or numpy's for the graphs built
// with onnx.helper), within the manifest's tolerances.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "infer/infer.hpp"

namespace infer::models_test {

// The cache folder the ctest fixture fills (INFER_MODELS_CACHE_DIR).
std::string cache_dir();

// Loads <cache>/<name>/manifest.json, creates a Session on `backends` (in priority order)
// and checks every run; failures are reported through GoogleTest assertions with the
// model, run, output, element index and values. When `session_out` is given it receives
// the session (to inspect its plan), or stays null when creation failed.
void run_model_case(const std::string& name, const std::vector<std::string>& backends = {"cpu"},
                    std::unique_ptr<Session>* session_out = nullptr);

// Runs every run of the manifest at optimization level 0 and at level 3 and checks that
// the outputs agree within rtol / atol (the optimizer's equivalence promise).
void run_model_equivalence(const std::string& name, double rtol, double atol);

// The graph a level-3 session runs for the model, as written by --dump-graph
// (SessionOptions::dump_graph_path) and read back with ONNX's protobuf classes.
struct OptimizedGraph {
  size_t loaded_nodes = 0;                 // from the session's plan report
  size_t nodes = 0;
  std::map<std::string, int> ops;          // "Conv", "ai.infer.FusedConv", ...
  std::map<std::string, int> loaded_ops;   // the same for the model file as exported
  std::map<std::string, int> activations;  // fused nodes' `activation` attribute values
  double optimizer_ms = 0;
  std::string error;                       // non-empty when the graph could not be had
  int count(const std::string& op) const {
    auto it = ops.find(op);
    return it == ops.end() ? 0 : it->second;
  }
  int loaded_count(const std::string& op) const {
    auto it = loaded_ops.find(op);
    return it == loaded_ops.end() ? 0 : it->second;
  }
};
OptimizedGraph optimized_graph(const std::string& name);

// Helpers the model tests share for their messages and comparisons.
// "[1,3,224,224]".
std::string shape_text(const std::vector<int64_t>& shape);
// The multi-dimensional index of flat element `flat` of `shape`, for messages: "[0,3,17]".
std::string index_text(const std::vector<int64_t>& shape, int64_t flat);
// IEEE half to double, written out in the tests so that comparisons do not rely on
// infer's own conversion code.
double half_to_double(uint16_t h);

}  // namespace infer::models_test
