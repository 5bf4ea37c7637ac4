// Builds the tensors fed to the model: each declared input comes from its .npy file or
// is generated from its shape (the --shape/YAML shape, else the declared one).
#pragma once

#include <string>
#include <vector>

#include "host_array.hpp"
#include "infer/infer.hpp"
#include "report.hpp"
#include "run_plan.hpp"

namespace infer::cli {

// The shape to generate for `info`, from `given` (may be null) or the declaration.
// Fails when a dim is symbolic or unknown and no shape was given, or when the given
// shape contradicts the declared rank or a fixed dim.
Result<std::vector<int64_t>> resolve_generated_shape(const TensorInfo& info, const std::vector<int64_t>* given,
                                                     const std::string& origin);

struct InputFeed {
  std::vector<NamedTensor> tensors;  // in the model's declaration order
  std::vector<InputReport> reports;
};

// Reads or generates every declared input. Fails when a source names no model input.
Result<InputFeed> prepare_inputs(const std::vector<TensorInfo>& declared, const std::vector<InputSource>& sources);

}  // namespace infer::cli
