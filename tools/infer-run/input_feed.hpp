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

// The shape to generate for `info`, from `given` (may be null) or the declaration. A
// symbolic or unknown dim with no shape given is 1, as in the benchmark tools users
// know, and is described in `defaulted` (may be null) as "NAME dim I ('PARAM')"; with
// `strict` it is an error asking for --shape instead. Fails when the rank is unknown and
// no shape was given, or when the given shape contradicts the declared rank or a fixed dim.
Result<std::vector<int64_t>> resolve_generated_shape(const TensorInfo& info,
                                                     const std::vector<int64_t>* given,
                                                     const std::string& origin, bool strict,
                                                     std::vector<std::string>* defaulted = nullptr);

struct InputFeed {
  std::vector<NamedTensor> tensors;  // in the model's declaration order
  std::vector<InputReport> reports;
  // One line naming the symbolic dims set to 1 and the --shape values that set them;
  // empty when none was.
  std::string notice;
};

// Reads or generates every declared input (symbolic dims as resolve_generated_shape
// says). Fails when a source names no model input.
Result<InputFeed> prepare_inputs(const std::vector<TensorInfo>& declared,
                                 const std::vector<InputSource>& sources, bool strict);

}  // namespace infer::cli
