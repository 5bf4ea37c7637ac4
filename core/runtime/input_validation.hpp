// Checks the tensors given to Session::run against the model's declared inputs.
#pragma once

#include <vector>

#include "infer/infer.hpp"

namespace infer::runtime {

// Returns, for each declared input in declaration order, the given tensor. Errors are
// InvalidArgument naming the input:
//   "unknown input 'foo' (model inputs: image)", "input 'image' is given twice",
//   "missing input 'image' (float32 [batch,1,8,8])",
//   "input 'image': expected dtype float32, got int64",
//   "input 'image': expected 4 dims [batch,1,8,8], got 3 dims [1,8,8]",
//   "input 'image': dim 2 is 8 in the model, got 9",
//   "input 'mask': dim 0 ('batch') is 3, but 'batch' is 2 in input 'image' dim 0",
//   "input 'image': dim 1 is -1" (negative), and a byte-size mismatch.
Result<std::vector<const Tensor*>> validate_inputs(const std::vector<TensorInfo>& declared,
                                                   const std::vector<NamedTensor>& given);

}  // namespace infer::runtime
