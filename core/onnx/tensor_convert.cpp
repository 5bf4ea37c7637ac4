// See tensor_convert.hpp.
#include "onnx/tensor_convert.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "onnx/value_type.hpp"

namespace infer::onnx_io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw_data is little-endian; a big-endian host would need byte swapping");

// Raw data at least this large is moved out of the proto rather than copied. Smaller
// tensors are copied: the saving is nil and the copy keeps the proto's string object
// from outliving the load.
constexpr size_t kStealRawBytes = 4096;

// Which TensorProto field holds the values of each dtype when raw_data is not used.
enum class Field { kFloat, kInt32, kInt64, kDouble, kUInt64 };

const char* field_name(Field f) {
  switch (f) {
    case Field::kFloat:
      return "float_data";
    case Field::kInt32:
      return "int32_data";
    case Field::kInt64:
      return "int64_data";
    case Field::kDouble:
      return "double_data";
    case Field::kUInt64:
      return "uint64_data";
  }
  return "?";
}

// The typed field of `dtype` and how many entries it holds for `count` elements.
struct FieldLayout {
  Field field;
  int64_t entries;
};

FieldLayout layout_of(DataType dtype, int64_t count) {
  switch (dtype) {
    case DataType::kFloat32:
      return {Field::kFloat, count};
    case DataType::kComplex64:
      return {Field::kFloat, count * 2};
    case DataType::kFloat64:
      return {Field::kDouble, count};
    case DataType::kComplex128:
      return {Field::kDouble, count * 2};
    case DataType::kInt64:
      return {Field::kInt64, count};
    case DataType::kUInt32:
    case DataType::kUInt64:
      return {Field::kUInt64, count};
    // ONNX packs two 4-bit values into each int32_data entry, like raw_data's bytes.
    case DataType::kInt4:
    case DataType::kUInt4:
      return {Field::kInt32, (count + 1) / 2};
    // int32 itself, and every narrower type, one element per int32_data entry (float16,
    // bfloat16 and float8 as their bit patterns).
    default:
      return {Field::kInt32, count};
  }
}

// Writes `values` narrowed to T into `out` (the narrowing keeps the low bits, which is
// how ONNX stores int8/uint16/float16 bit patterns in int32_data).
template <typename T, typename Src>
void narrow_into(const Src& values, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(values.size()) * sizeof(T));
  T* dst = reinterpret_cast<T*>(out.data());
  for (int i = 0; i < values.size(); ++i) dst[i] = static_cast<T>(values.Get(i));
}

template <typename Src>
void copy_into(const Src& values, std::vector<uint8_t>& out) {
  using T = typename Src::value_type;
  out.resize(static_cast<size_t>(values.size()) * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
}

// Fills `out` from the typed field of `dtype` (whose entry count was checked).
void typed_bytes(const onnx::TensorProto& t, DataType dtype, std::vector<uint8_t>& out) {
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kComplex64:
      copy_into(t.float_data(), out);
      break;
    case DataType::kFloat64:
    case DataType::kComplex128:
      copy_into(t.double_data(), out);
      break;
    case DataType::kInt64:
      copy_into(t.int64_data(), out);
      break;
    case DataType::kUInt64:
      copy_into(t.uint64_data(), out);
      break;
    case DataType::kUInt32:
      narrow_into<uint32_t>(t.uint64_data(), out);
      break;
    case DataType::kInt32:
      copy_into(t.int32_data(), out);
      break;
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      narrow_into<uint16_t>(t.int32_data(), out);
      break;
    case DataType::kBool:
      out.resize(static_cast<size_t>(t.int32_data_size()));
      for (int i = 0; i < t.int32_data_size(); ++i)
        out[static_cast<size_t>(i)] = t.int32_data(i) != 0;
      break;
    default:  // int8, uint8, float8 variants, packed int4/uint4 pairs: one byte each
      narrow_into<uint8_t>(t.int32_data(), out);
      break;
  }
}

int field_size(const onnx::TensorProto& t, Field f) {
  switch (f) {
    case Field::kFloat:
      return t.float_data_size();
    case Field::kInt32:
      return t.int32_data_size();
    case Field::kInt64:
      return t.int64_data_size();
    case Field::kDouble:
      return t.double_data_size();
    case Field::kUInt64:
      return t.uint64_data_size();
  }
  return 0;
}

std::string dims_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

Result<ir::TensorDataPtr> convert_tensor(onnx::TensorProto& t, const std::string& tensor_name,
                                         ExternalData& external) {
  const std::string what = "tensor '" + tensor_name + "'";
  INFER_ASSIGN_OR_RETURN(DataType dtype, convert_dtype(t.data_type(), tensor_name));
  if (t.has_segment())
    return unsupported(what + " is segmented (TensorProto.segment), which infer does not support");

  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return invalid_argument(what + " has a negative dimension in " + dims_string(dims));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / 16 / d)
      return invalid_argument(what + " has an impossibly large shape " + dims_string(dims));
    count *= d;
  }
  const size_t expected = storage_bytes(dtype, count);
  const std::string described =
      what + " (" + std::string(dtype_name(dtype)) + " " + dims_string(dims) + ")";

  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!t.raw_data().empty() || t.float_data_size() || t.int32_data_size() ||
        t.int64_data_size() || t.double_data_size() || t.uint64_data_size() || t.string_data_size())
      return invalid_argument(what + " is stored externally but also carries data in the file");
    return external.load(t, tensor_name, dtype, std::move(dims), expected);
  }

  // Exactly one place may hold the values.
  std::vector<const char*> present;
  if (!t.raw_data().empty()) present.push_back("raw_data");
  for (Field f : {Field::kFloat, Field::kInt32, Field::kInt64, Field::kDouble, Field::kUInt64})
    if (field_size(t, f) > 0) present.push_back(field_name(f));
  if (t.string_data_size() > 0) present.push_back("string_data");
  if (present.size() > 1)
    return invalid_argument(what + " has values in both " + present[0] + " and " + present[1]);

  if (present.empty()) {
    if (count != 0) return invalid_argument(described + " has no data");
    return std::make_shared<const ir::TensorData>(dtype, std::move(dims), std::vector<uint8_t>{});
  }

  if (!t.raw_data().empty()) {
    if (t.raw_data().size() != expected)
      return invalid_argument(described + ": raw_data has " + std::to_string(t.raw_data().size()) +
                              " bytes, expected " + std::to_string(expected));
    if (expected >= kStealRawBytes) {
      std::shared_ptr<std::string> owned(t.release_raw_data());
      const void* data = owned->data();
      return std::make_shared<const ir::TensorData>(dtype, std::move(dims), data, owned->size(),
                                                    std::shared_ptr<const void>(owned));
    }
    std::vector<uint8_t> bytes(t.raw_data().begin(), t.raw_data().end());
    return std::make_shared<const ir::TensorData>(dtype, std::move(dims), std::move(bytes));
  }

  const FieldLayout layout = layout_of(dtype, count);
  const std::string field = field_name(layout.field);
  if (present[0] != field)
    return invalid_argument(described + " keeps its values in " + present[0] + ", but " +
                            std::string(dtype_name(dtype)) + " values belong in " + field +
                            " or raw_data");
  if (field_size(t, layout.field) != layout.entries)
    return invalid_argument(described + " has " + std::to_string(field_size(t, layout.field)) +
                            " entries in " + field + ", expected " +
                            std::to_string(layout.entries));
  std::vector<uint8_t> bytes;
  typed_bytes(t, dtype, bytes);
  if (bytes.size() != expected)
    return internal_error(described + ": converted " + std::to_string(bytes.size()) +
                          " bytes, expected " + std::to_string(expected));
  return std::make_shared<const ir::TensorData>(dtype, std::move(dims), std::move(bytes));
}

}  // namespace infer::onnx_io
