#include "npy_file.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

namespace infer::models_test {
namespace {

std::optional<DataType> dtype_of_descr(std::string_view descr) {
  struct Entry {
    std::string_view descr;
    DataType dtype;
  };
  static constexpr Entry kTable[] = {
      {"<f4", DataType::kFloat32}, {"<f8", DataType::kFloat64}, {"<f2", DataType::kFloat16},
      {"<i8", DataType::kInt64},   {"<i4", DataType::kInt32},   {"<i2", DataType::kInt16},
      {"|i1", DataType::kInt8},    {"<u8", DataType::kUInt64},  {"<u4", DataType::kUInt32},
      {"<u2", DataType::kUInt16},  {"|u1", DataType::kUInt8},   {"|b1", DataType::kBool},
  };
  for (const Entry& e : kTable)
    if (e.descr == descr) return e.dtype;
  return std::nullopt;
}

// The value of `key` in the header dict, up to the next ',' or '}' outside parentheses.
std::optional<std::string> header_value(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return std::nullopt;
  const size_t colon = header.find(':', k);
  if (colon == std::string::npos) return std::nullopt;
  size_t end = colon + 1;
  int depth = 0;
  while (end < header.size() && (depth > 0 || (header[end] != ',' && header[end] != '}'))) {
    if (header[end] == '(') ++depth;
    if (header[end] == ')') --depth;
    ++end;
  }
  std::string value = header.substr(colon + 1, end - colon - 1);
  const size_t first = value.find_first_not_of(" '");
  const size_t last = value.find_last_not_of(" '");
  return first == std::string::npos ? std::string() : value.substr(first, last - first + 1);
}

Result<std::vector<int64_t>> parse_shape(const std::string& text, const std::string& path) {
  // "(1, 3, 224, 224)", "(5,)" or "()" for a rank-0 array.
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return invalid_argument(path + ": bad shape '" + text + "' in the .npy header");
  std::vector<int64_t> shape;
  const std::string inner = text.substr(1, text.size() - 2);
  size_t start = 0;
  while (start < inner.size()) {
    size_t comma = inner.find(',', start);
    if (comma == std::string::npos) comma = inner.size();
    const std::string item = inner.substr(start, comma - start);
    if (item.find_first_not_of(' ') != std::string::npos) {
      char* end = nullptr;
      const long long dim = std::strtoll(item.c_str(), &end, 10);
      if (dim < 0 || end == item.c_str())
        return invalid_argument(path + ": bad dim '" + item + "' in the .npy shape");
      shape.push_back(dim);
    }
    start = comma + 1;
  }
  return shape;
}

}  // namespace

Result<Tensor> read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot open '" + path + "'");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                   std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return invalid_argument(path + ": not a .npy file (bad magic)");
  size_t header_len = 0;
  size_t pos = 0;
  if (bytes[6] == 1) {
    header_len = size_t{bytes[8]} | (size_t{bytes[9]} << 8);
    pos = 10;
  } else {
    if (bytes.size() < 12) return invalid_argument(path + ": truncated .npy header");
    header_len = size_t{bytes[8]} | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) |
                 (size_t{bytes[11]} << 24);
    pos = 12;
  }
  if (pos + header_len > bytes.size()) return invalid_argument(path + ": truncated .npy header");
  const std::string header(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                           bytes.begin() + static_cast<std::ptrdiff_t>(pos + header_len));

  const std::optional<std::string> descr = header_value(header, "descr");
  const std::optional<std::string> fortran = header_value(header, "fortran_order");
  const std::optional<std::string> shape_text = header_value(header, "shape");
  if (!descr || !fortran || !shape_text)
    return invalid_argument(path + ": .npy header lacks a key: " + header);
  if (*fortran != "False")
    return invalid_argument(path + ": Fortran-order arrays are not supported");
  const std::optional<DataType> dtype = dtype_of_descr(*descr);
  if (!dtype) return invalid_argument(path + ": unsupported .npy dtype '" + *descr + "'");
  INFER_ASSIGN_OR_RETURN(std::vector<int64_t> shape, parse_shape(*shape_text, path));

  const size_t data_pos = pos + header_len;
  Result<Tensor> tensor = Tensor::from_bytes(*dtype, std::move(shape), bytes.data() + data_pos,
                                             bytes.size() - data_pos);
  if (!tensor.is_ok()) return tensor.status().with_context(path);
  return tensor;
}

}  // namespace infer::models_test
