// Conversions between the CLI's HostArray and the runtime's Tensor, and the widening
// that lets outputs numpy has no dtype for still be saved as .npy.
#pragma once

#include <string>

#include "host_array.hpp"
#include "infer/infer.hpp"

namespace infer::cli {

// Copies the array into a new Tensor (checks that the byte count fits dtype and shape).
Result<Tensor> to_tensor(const HostArray& array);

// Copies the tensor's bytes into a HostArray.
HostArray to_host_array(const Tensor& tensor);

// The array numpy can hold for `array`: unchanged for dtypes numpy has; bfloat16 widens
// exactly to float32 and int4/uint4 unpack to int8/uint8. Fails (naming `what`) for
// float8 and string, which have no lossless numpy form.
Result<HostArray> to_npy_compatible(const HostArray& array, const std::string& what);

}  // namespace infer::cli
