// Micro-batching (SessionOptions::micro_batches): one run's batch is split along axis 0
// into N equal micro-batches, which run through the plan pipelined (scheduler.cpp), and
// their outputs are concatenated along axis 0 again. These are the checks and the
// splitting and joining; none of it knows about devices.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "runtime/run_state.hpp"

namespace infer::runtime {

// At Session::create, with micro_batches > 1: every input and every output must have a
// known rank of at least 1 and a dim 0 that is symbolic (a dim_param such as 'batch', or
// unknown), since a fixed dim 0 cannot take a smaller micro-batch. Fails naming the
// first tensor that does not.
Status check_micro_batchable(const std::vector<TensorInfo>& inputs,
                             const std::vector<TensorInfo>& outputs, int micro_batches);

// The rows (dim 0) of each micro-batch, after checking that every input has the same
// dim 0 and that it divides by `count`: "input 'x': batch 6 is not divisible by
// micro_batches 4". `names` are the inputs' names in declaration order. 0 when the batch
// is 0 (nothing to split).
Result<int64_t> micro_batch_rows(const std::vector<std::string>& names,
                                 const std::vector<const Tensor*>& inputs, size_t count);

// The inputs of micro-batch `index`: views of rows [index*rows, (index+1)*rows) of each
// input, no bytes copied.
std::vector<HostInput> slice_inputs(const std::vector<const Tensor*>& inputs, size_t index,
                                    int64_t rows);

// Joins the outputs of the micro-batches (parts[i] = micro-batch i's outputs in
// declaration order) along axis 0. Every part of an output must have the same dtype and
// the same dims after dim 0.
Result<std::vector<Tensor>> concat_outputs(const std::vector<std::string>& names,
                                           const std::vector<std::vector<Tensor>>& parts);

}  // namespace infer::runtime
