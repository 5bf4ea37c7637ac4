// The model's declared inputs and outputs as the public TensorInfo, checked for what
// infer can exchange with an application.
#pragma once

#include <vector>

#include "infer/infer.hpp"
#include "ir/graph.hpp"

namespace infer::runtime {

TensorInfo tensor_info_of(const ir::Value& value);

// `kind` is "input" or "output", for messages. A value without a known dtype, or of
// dtype string, is InvalidArgument: "model input 'text' has dtype string, which infer
// does not support".
Result<std::vector<TensorInfo>> signature_of(const ir::Graph& graph,
                                             const std::vector<ir::ValueId>& values,
                                             const char* kind);

}  // namespace infer::runtime
