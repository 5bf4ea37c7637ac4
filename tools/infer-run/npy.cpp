#include "npy.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace infer::cli {
namespace {

// The bytes of a tensor are copied to and from the file as they are, which is only right
// on a little-endian host; every platform infer targets is one.
static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy aligns the data to 64 bytes and leaves room for the first dim to grow to 21
// digits; matching both makes our files identical to np.save's.
constexpr size_t kAlign = 64;
constexpr size_t kGrowthAxisMaxDigits = 21;

struct NpyType {
  DataType dtype;
  char kind;  // numpy's kind character: f, i, u, b, c
  size_t itemsize;
};

constexpr std::array<NpyType, 14> kNpyTypes = {{
    {DataType::kFloat16, 'f', 2},
    {DataType::kFloat32, 'f', 4},
    {DataType::kFloat64, 'f', 8},
    {DataType::kInt8, 'i', 1},
    {DataType::kInt16, 'i', 2},
    {DataType::kInt32, 'i', 4},
    {DataType::kInt64, 'i', 8},
    {DataType::kUInt8, 'u', 1},
    {DataType::kUInt16, 'u', 2},
    {DataType::kUInt32, 'u', 4},
    {DataType::kUInt64, 'u', 8},
    {DataType::kBool, 'b', 1},
    {DataType::kComplex64, 'c', 8},
    {DataType::kComplex128, 'c', 16},
}};

const NpyType* find_type(DataType dtype) {
  for (const NpyType& t : kNpyTypes)
    if (t.dtype == dtype) return &t;
  return nullptr;
}

const NpyType* find_type(char kind, size_t itemsize) {
  for (const NpyType& t : kNpyTypes)
    if (t.kind == kind && t.itemsize == itemsize) return &t;
  return nullptr;
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (8, 1, 8, 8), }
// This is a parser for exactly the subset numpy writes (strings, True/False, tuples of
// integers), so a malformed header is an error rather than something to guess at.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  struct Fields {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<int64_t>> shape;
  };

  Result<Fields> parse() {
    Fields fields;
    skip_space();
    if (!consume('{')) return fail("expected '{' at the start of the header");
    while (true) {
      skip_space();
      if (consume('}')) break;
      INFER_ASSIGN_OR_RETURN(std::string key, parse_string());
      skip_space();
      if (!consume(':')) return fail("expected ':' after key '" + key + "'");
      skip_space();
      if (key == "descr") {
        if (peek() == '[') return fail("structured dtypes (a list in 'descr') are not supported");
        INFER_ASSIGN_OR_RETURN(std::string descr, parse_string());
        fields.descr = std::move(descr);
      } else if (key == "fortran_order") {
        INFER_ASSIGN_OR_RETURN(bool value, parse_bool());
        fields.fortran_order = value;
      } else if (key == "shape") {
        INFER_ASSIGN_OR_RETURN(std::vector<int64_t> shape, parse_shape());
        fields.shape = std::move(shape);
      } else {
        return fail("unexpected key '" + key + "' in the header");
      }
      skip_space();
      if (consume(',')) continue;
      skip_space();
      if (consume('}')) break;
      return fail("expected ',' or '}' after the value of '" + key + "'");
    }
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the header's closing '}'");
    if (!fields.descr) return fail("the header has no 'descr'");
    if (!fields.fortran_order) return fail("the header has no 'fortran_order'");
    if (!fields.shape) return fail("the header has no 'shape'");
    return fields;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  static Status fail(const std::string& why) { return invalid_argument("malformed header: " + why); }

  Result<std::string> parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return fail("expected a quoted string");
    ++pos_;
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return fail("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }

  Result<bool> parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return fail("expected True or False for 'fortran_order'");
  }

  // "()", "(5,)", "(8, 1, 8, 8)"; Python 2 wrote long integers with an 'L' suffix.
  Result<std::vector<int64_t>> parse_shape() {
    if (!consume('(')) return fail("expected a tuple for 'shape'");
    std::vector<int64_t> shape;
    while (true) {
      skip_space();
      if (consume(')')) break;
      const size_t start = pos_;
      int64_t dim = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        const int digit = text_[pos_] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10) return fail("a dim in 'shape' is too large");
        dim = dim * 10 + digit;
        ++pos_;
      }
      if (pos_ == start) return fail("expected a non-negative integer in 'shape'");
      consume('L');
      shape.push_back(dim);
      skip_space();
      if (consume(',')) continue;
      skip_space();
      if (consume(')')) break;
      return fail("expected ',' or ')' in 'shape'");
    }
    return shape;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string supported_list() {
  return "float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, complex64, "
         "complex128";
}

// Maps a descriptor such as "<f4" to a dtype, explaining what is wrong with any other.
Result<DataType> dtype_from_descr(const std::string& descr) {
  if (descr.size() < 3) return invalid_argument("unsupported dtype '" + descr + "'");
  const char order = descr[0];
  const char kind = descr[1];
  size_t itemsize = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || itemsize > 1000)
      return invalid_argument("unsupported dtype '" + descr + "' (supported: " + supported_list() + ")");
    itemsize = itemsize * 10 + static_cast<size_t>(descr[i] - '0');
  }
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return invalid_argument("unsupported dtype '" + descr + "': unknown byte order '" + std::string(1, order) + "'");
  const NpyType* type = find_type(kind, itemsize);
  if (type == nullptr)
    return invalid_argument("unsupported dtype '" + descr + "' (supported: " + supported_list() + ")");
  // Byte order is meaningless for one-byte types, whatever character was written.
  if (order == '>' && itemsize > 1) {
    return invalid_argument("big-endian dtype '" + descr + "' is not supported; convert it with arr.astype('<" +
                            descr.substr(1) + "')");
  }
  return type->dtype;
}

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

uint32_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
  return value;
}

Result<HostArray> parse_npy_unlabelled(std::string_view bytes) {
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    return invalid_argument("not a .npy file (it does not start with the magic string \\x93NUMPY)");
  }
  const auto major = static_cast<uint8_t>(bytes[6]);
  const auto minor = static_cast<uint8_t>(bytes[7]);
  if (minor != 0 || major < 1 || major > 3) {
    return invalid_argument("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                            " (supported: 1.0, 2.0, 3.0)");
  }
  // Version 1.0 stores the header length in 2 bytes; 2.0 and 3.0 use 4.
  const size_t len_width = major == 1 ? 2 : 4;
  const size_t prefix = kMagic.size() + 2 + len_width;
  if (bytes.size() < prefix) return invalid_argument("truncated: the file ends inside the header length");
  const size_t header_len = read_le(bytes, kMagic.size() + 2, len_width);
  if (bytes.size() - prefix < header_len) {
    return invalid_argument("truncated: the header is " + std::to_string(header_len) + " bytes but the file holds only " +
                            std::to_string(bytes.size() - prefix) + " after the prefix");
  }
  HeaderParser parser(bytes.substr(prefix, header_len));
  INFER_ASSIGN_OR_RETURN(HeaderParser::Fields fields, parser.parse());

  INFER_ASSIGN_OR_RETURN(DataType dtype, dtype_from_descr(*fields.descr));
  const std::vector<int64_t>& shape = *fields.shape;
  // A Fortran-order array with fewer than two dims has the same bytes as a C-order
  // one, but numpy only writes fortran_order True for genuinely Fortran arrays of
  // rank >= 2, so refusing the flag outright keeps the rule simple to state.
  if (*fields.fortran_order) {
    return invalid_argument("Fortran-order arrays are not supported; save it with np.save(f, np.ascontiguousarray(a))");
  }
  const std::optional<int64_t> count = element_count(shape);
  const size_t itemsize = find_type(dtype)->itemsize;
  if (!count || static_cast<uint64_t>(*count) > std::numeric_limits<uint64_t>::max() / itemsize / 2) {
    return invalid_argument("shape " + shape_tuple(shape) + " is too large");
  }
  const uint64_t expected = static_cast<uint64_t>(*count) * itemsize;
  const uint64_t available = bytes.size() - prefix - header_len;
  if (available < expected) {
    return invalid_argument("truncated: shape " + shape_tuple(shape) + " of '" + *fields.descr + "' needs " +
                            std::to_string(expected) + " data bytes but the file holds " + std::to_string(available));
  }
  if (available > expected) {
    return invalid_argument("corrupt: " + std::to_string(available - expected) +
                            " unexpected bytes follow the data of shape " + shape_tuple(shape));
  }
  HostArray array;
  array.dtype = dtype;
  array.shape = shape;
  const char* data = bytes.data() + prefix + header_len;
  array.bytes.assign(reinterpret_cast<const uint8_t*>(data), reinterpret_cast<const uint8_t*>(data) + expected);
  return array;
}

}  // namespace

std::optional<std::string> npy_descr(DataType dtype) {
  const NpyType* type = find_type(dtype);
  if (type == nullptr) return std::nullopt;
  const char order = type->itemsize == 1 ? '|' : '<';
  return std::string(1, order) + type->kind + std::to_string(type->itemsize);
}

Result<HostArray> parse_npy(std::string_view file_bytes, const std::string& label) {
  Result<HostArray> array = parse_npy_unlabelled(file_bytes);
  if (!array.is_ok()) return array.status().with_context("cannot read '" + label + "'");
  return array;
}

Result<HostArray> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  // An empty file makes rdbuf() extraction set failbit, which is not a read error.
  if (in.bad()) return unavailable("cannot read '" + path + "': " + std::strerror(errno));
  const std::string bytes = contents.str();
  return parse_npy(bytes, path);
}

Result<std::string> encode_npy(const HostArray& array) {
  const std::optional<std::string> descr = npy_descr(array.dtype);
  if (!descr) {
    return unsupported("numpy has no dtype for " + std::string(dtype_name(array.dtype)));
  }
  const std::optional<int64_t> count = element_count(array.shape);
  const size_t itemsize = find_type(array.dtype)->itemsize;
  if (!count || array.bytes.size() != static_cast<uint64_t>(*count) * itemsize) {
    return internal_error("array of shape " + shape_to_string(array.shape) + " holds " +
                          std::to_string(array.bytes.size()) + " bytes, expected " +
                          std::to_string(count.value_or(-1) * static_cast<int64_t>(itemsize)));
  }
  std::string header = "{'descr': '" + *descr + "', 'fortran_order': False, 'shape': " + shape_tuple(array.shape) + ", }";
  if (!array.shape.empty()) header.append(kGrowthAxisMaxDigits - std::to_string(array.shape[0]).size(), ' ');
  // Magic (6) + version (2) + length (2) + header + padding + '\n' is a multiple of 64.
  const size_t unpadded = kMagic.size() + 2 + 2 + header.size() + 1;
  header.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  header += '\n';
  if (header.size() > 0xffff) return unsupported("the .npy header for shape " + shape_to_string(array.shape) + " is too long");

  std::string file;
  file.reserve(kMagic.size() + 4 + header.size() + array.bytes.size());
  file += kMagic;
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>((header.size() >> 8) & 0xff);
  file += header;
  file.append(reinterpret_cast<const char*>(array.bytes.data()), array.bytes.size());
  return file;
}

Status write_npy(const std::string& path, const HostArray& array) {
  Result<std::string> encoded = encode_npy(array);
  if (!encoded.is_ok()) return encoded.status().with_context("cannot write '" + path + "'");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return unavailable("cannot write '" + path + "': " + std::strerror(errno));
  out.write(encoded->data(), static_cast<std::streamsize>(encoded->size()));
  out.close();
  if (!out) return unavailable("cannot write '" + path + "': " + std::strerror(errno));
  return Status::ok();
}

}  // namespace infer::cli
