// Reads the .npy files tools/models/export_models.py writes (NumPy's format: magic,
// version, a Python-dict header with descr/fortran_order/shape, then the raw data) into
// an infer::Tensor. Little-endian C-order arrays of the numeric dtypes, bool and float16;
// anything else is an error naming the file, so a surprising export fails clearly.
#pragma once

#include <string>

#include "infer/infer.hpp"

namespace infer::models_test {

Result<Tensor> read_npy(const std::string& path);

}  // namespace infer::models_test
