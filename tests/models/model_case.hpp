// Runs one exported model of the models cache (tools/models/export_models.py) through the
// public C++ API on the CPU backend, and compares every output of every run with the
// reference the exporter saved (PyTorch's own outputs, or numpy's for the graphs built
// with onnx.helper), within the manifest's tolerances.
#pragma once

#include <string>

namespace infer::models_test {

// The cache folder the ctest fixture fills (INFER_MODELS_CACHE_DIR).
std::string cache_dir();

// Loads <cache>/<name>/manifest.json, creates a Session on the CPU backend and checks
// every run; failures are reported through GoogleTest assertions with the model, run,
// output, element index and values.
void run_model_case(const std::string& name);

}  // namespace infer::models_test
