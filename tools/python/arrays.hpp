// numpy arrays <-> infer::Tensor for the Python module: which numpy dtype each tensor
// dtype is, reading a C-contiguous array of the right dtype in place (Tensor::borrow)
// and handing a result's bytes to numpy without a copy.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "infer/infer.hpp"

namespace infer::python {

namespace py = pybind11;

// The numpy dtype of a tensor dtype; nullopt for those numpy has no dtype for
// (bfloat16, the float8 kinds, 4-bit integers, string).
std::optional<py::dtype> numpy_dtype(DataType dtype);

// The tensor dtype of a numpy dtype (native byte order only); nullopt when infer has none.
std::optional<DataType> tensor_dtype(const py::dtype& dtype);

// The value for model input `name`, declared with `expected`: a numpy array of exactly
// that dtype (read in place when C-contiguous, copied to C order otherwise), or a
// non-array (list, scalar) converted to it. Throws infer.Error naming the input for a
// wrong dtype or a dtype infer cannot feed.
Tensor to_tensor(const py::handle& value, DataType expected, const std::string& name);

// A numpy array over the tensor's bytes, which it keeps alive (its base is a _Storage
// holding the tensor). bfloat16 comes back as float32 (exact), as numpy has no
// bfloat16. Throws infer.Error naming `name` for a dtype numpy cannot hold.
py::array to_array(Tensor tensor, const std::string& name);

// What the module's _Storage objects hold: a tensor whose bytes some array uses.
struct Storage {
  Tensor tensor;
};

// Raises infer.Error (set up by the module) with `message`.
[[noreturn]] void raise_error(const std::string& message);

}  // namespace infer::python
