#include "arrays.hpp"

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace infer::python {
namespace {

struct DtypePair {
  DataType dtype;
  const char* numpy;  // numpy's name
};

// Every tensor dtype numpy can hold, by numpy's name.
constexpr DtypePair kPairs[] = {
    {DataType::kFloat32, "float32"},     {DataType::kFloat64, "float64"},
    {DataType::kFloat16, "float16"},     {DataType::kInt8, "int8"},
    {DataType::kInt16, "int16"},         {DataType::kInt32, "int32"},
    {DataType::kInt64, "int64"},         {DataType::kUInt8, "uint8"},
    {DataType::kUInt16, "uint16"},       {DataType::kUInt32, "uint32"},
    {DataType::kUInt64, "uint64"},       {DataType::kBool, "bool"},
    {DataType::kComplex64, "complex64"}, {DataType::kComplex128, "complex128"},
};

std::string describe(const py::dtype& dtype) {
  return py::str(py::handle(dtype)).cast<std::string>();
}

std::vector<int64_t> shape_of(const py::array& a) {
  std::vector<int64_t> shape(static_cast<size_t>(a.ndim()));
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] = static_cast<int64_t>(a.shape(static_cast<py::ssize_t>(i)));
  return shape;
}

// The owner Tensor::borrow keeps: a reference to the array, dropped with the GIL held
// (the last tensor copy may go away on a runtime thread).
std::shared_ptr<const void> hold(py::array array) {
  auto* ref = new py::object(std::move(array));
  return std::shared_ptr<const void>(ref, [](const void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::object*>(p);
  });
}

// bfloat16 bits -> float32: the same sign, exponent and top mantissa bits.
py::array widen_bfloat16(const Tensor& t) {
  py::array_t<float> out(std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
  const auto* src = t.data_as<uint16_t>();
  float* dst = out.mutable_data();
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(dst + i, &bits, sizeof bits);
  }
  return out;
}

}  // namespace

std::optional<py::dtype> numpy_dtype(DataType dtype) {
  for (const DtypePair& p : kPairs)
    if (p.dtype == dtype) return py::dtype(p.numpy);
  return std::nullopt;
}

std::optional<DataType> tensor_dtype(const py::dtype& dtype) {
  if (dtype.attr("isnative").cast<bool>() == false) return std::nullopt;
  for (const DtypePair& p : kPairs)
    if (dtype.equal(py::dtype(p.numpy))) return p.dtype;
  return std::nullopt;
}

Tensor to_tensor(const py::handle& value, DataType expected, const std::string& name) {
  const std::optional<py::dtype> want = numpy_dtype(expected);
  if (!want)
    raise_error("input '" + name + "' is " + std::string(dtype_name(expected)) +
                ", which numpy has no dtype for: infer's Python module cannot feed it");
  py::array array;
  if (py::isinstance<py::array>(value)) {
    array = py::reinterpret_borrow<py::array>(value);
    if (!array.dtype().equal(*want)) {
      const std::string got = describe(array.dtype());
      raise_error("input '" + name + "': expected a numpy array of dtype " + describe(*want) +
                  ", got " + got + " (convert it with .astype(numpy." + describe(*want) + "))");
    }
  } else {
    try {
      array = py::module_::import("numpy").attr("asarray")(value, *want);
    } catch (py::error_already_set& e) {
      raise_error("input '" + name + "': cannot convert the " +
                  py::str(py::type::of(value).attr("__name__")).cast<std::string>() +
                  " given to a numpy array of dtype " + describe(*want) + ": " + e.what());
    }
  }
  if (!(array.flags() & py::array::c_style))
    array = py::module_::import("numpy").attr("ascontiguousarray")(array);
  const void* data = array.data();
  const size_t bytes = static_cast<size_t>(array.nbytes());
  std::vector<int64_t> shape = shape_of(array);
  Result<Tensor> t = Tensor::borrow(expected, std::move(shape), data, bytes, hold(array));
  if (!t.is_ok()) raise_error("input '" + name + "': " + t.status().message());
  return std::move(*t);
}

py::array to_array(Tensor tensor, const std::string& name) {
  if (tensor.dtype() == DataType::kBFloat16) return widen_bfloat16(tensor);
  const std::optional<py::dtype> dtype = numpy_dtype(tensor.dtype());
  if (!dtype)
    raise_error("output '" + name + "' is " + std::string(dtype_name(tensor.dtype())) +
                ", which numpy has no dtype for");
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  void* data = tensor.mutable_data();
  py::object base = py::cast(Storage{std::move(tensor)});
  return py::array(*dtype, shape, data, base);
}

}  // namespace infer::python
