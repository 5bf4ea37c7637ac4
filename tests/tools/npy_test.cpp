// The .npy reader and writer against files numpy wrote (gen_npy_fixtures.py). Expected
// values restate the generator's formulas by hand; the writer must reproduce numpy's
// files byte for byte.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "npy.hpp"
#include "test_data.hpp"

namespace infer::cli {
namespace {

using testing::data_path;
using testing::read_file_bytes;

template <typename T>
std::vector<T> values_of(const HostArray& array) {
  std::vector<T> values(array.bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), array.bytes.data(), array.bytes.size());
  return values;
}

HostArray read_ok(const std::string& name) {
  Result<HostArray> array = read_npy(data_path(name));
  EXPECT_TRUE(array.is_ok()) << array.status().message();
  return array.is_ok() ? std::move(array).value() : HostArray{};
}

const std::vector<int64_t> k2x3 = {2, 3};

TEST(NpyRead, Float32) {
  const HostArray a = read_ok("float32_2x3.npy");
  EXPECT_EQ(a.dtype, DataType::kFloat32);
  EXPECT_EQ(a.shape, k2x3);
  EXPECT_EQ(values_of<float>(a), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
}

TEST(NpyRead, Float64) {
  const HostArray a = read_ok("float64_2x3.npy");
  EXPECT_EQ(a.dtype, DataType::kFloat64);
  EXPECT_EQ(a.shape, k2x3);
  EXPECT_EQ(values_of<double>(a), (std::vector<double>{-1.0, -0.5, 0.0, 0.5, 1.0, 1.5}));
}

TEST(NpyRead, Float16KeepsBits) {
  const HostArray a = read_ok("float16_2x3.npy");
  EXPECT_EQ(a.dtype, DataType::kFloat16);
  EXPECT_EQ(a.shape, k2x3);
  // IEEE binary16 encodings of -1, -0.5, 0, 0.5, 1, 1.5.
  EXPECT_EQ(values_of<uint16_t>(a), (std::vector<uint16_t>{0xBC00, 0xB800, 0x0000, 0x3800, 0x3C00, 0x3E00}));
}

TEST(NpyRead, Float16SpecialValues) {
  const HostArray a = read_ok("float16_special.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{8}));
  // 1, -2, 0.5, 65504, 2^-14, 2^-24, inf, -0.
  EXPECT_EQ(values_of<uint16_t>(a),
            (std::vector<uint16_t>{0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0400, 0x0001, 0x7C00, 0x8000}));
}

TEST(NpyRead, Complex) {
  const HostArray c64 = read_ok("complex64_2x3.npy");
  EXPECT_EQ(c64.dtype, DataType::kComplex64);
  EXPECT_EQ(c64.shape, k2x3);
  EXPECT_EQ(values_of<float>(c64),
            (std::vector<float>{-1, 0, -0.5f, 0.25f, 0, 0.5f, 0.5f, 0.75f, 1, 1, 1.5f, 1.25f}));
  const HostArray c128 = read_ok("complex128_2x3.npy");
  EXPECT_EQ(c128.dtype, DataType::kComplex128);
  EXPECT_EQ(values_of<double>(c128), (std::vector<double>{-1, 0, -0.5, 0.25, 0, 0.5, 0.5, 0.75, 1, 1, 1.5, 1.25}));
}

TEST(NpyRead, SignedIntegers) {
  const HostArray i8 = read_ok("int8_2x3.npy");
  EXPECT_EQ(i8.dtype, DataType::kInt8);
  EXPECT_EQ(values_of<int8_t>(i8), (std::vector<int8_t>{-2, -1, 0, 1, 2, 3}));
  const HostArray i16 = read_ok("int16_2x3.npy");
  EXPECT_EQ(i16.dtype, DataType::kInt16);
  EXPECT_EQ(values_of<int16_t>(i16), (std::vector<int16_t>{-2, -1, 0, 1, 2, 3}));
  const HostArray i32 = read_ok("int32_2x3.npy");
  EXPECT_EQ(i32.dtype, DataType::kInt32);
  EXPECT_EQ(values_of<int32_t>(i32), (std::vector<int32_t>{-2, -1, 0, 1, 2, 3}));
  const HostArray i64 = read_ok("int64_2x3.npy");
  EXPECT_EQ(i64.dtype, DataType::kInt64);
  EXPECT_EQ(i64.shape, k2x3);
  EXPECT_EQ(values_of<int64_t>(i64), (std::vector<int64_t>{-2, -1, 0, 1, 2, 3}));
}

TEST(NpyRead, UnsignedIntegers) {
  const HostArray u8 = read_ok("uint8_2x3.npy");
  EXPECT_EQ(u8.dtype, DataType::kUInt8);
  EXPECT_EQ(values_of<uint8_t>(u8), (std::vector<uint8_t>{250, 251, 252, 253, 254, 255}));
  const HostArray u16 = read_ok("uint16_2x3.npy");
  EXPECT_EQ(u16.dtype, DataType::kUInt16);
  EXPECT_EQ(values_of<uint16_t>(u16), (std::vector<uint16_t>{250, 251, 252, 253, 254, 255}));
  const HostArray u32 = read_ok("uint32_2x3.npy");
  EXPECT_EQ(u32.dtype, DataType::kUInt32);
  EXPECT_EQ(values_of<uint32_t>(u32), (std::vector<uint32_t>{250, 251, 252, 253, 254, 255}));
  const HostArray u64 = read_ok("uint64_2x3.npy");
  EXPECT_EQ(u64.dtype, DataType::kUInt64);
  EXPECT_EQ(values_of<uint64_t>(u64), (std::vector<uint64_t>{250, 251, 252, 253, 254, 255}));
}

TEST(NpyRead, Bool) {
  const HostArray a = read_ok("bool_2x3.npy");
  EXPECT_EQ(a.dtype, DataType::kBool);
  EXPECT_EQ(a.shape, k2x3);
  EXPECT_EQ(a.bytes, (std::vector<uint8_t>{1, 0, 1, 1, 0, 0}));
}

TEST(NpyRead, ScalarHasRankZero) {
  const HostArray a = read_ok("float32_scalar.npy");
  EXPECT_EQ(a.dtype, DataType::kFloat32);
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(values_of<float>(a), (std::vector<float>{3.5f}));
}

TEST(NpyRead, ZeroSizeArrays) {
  const HostArray a = read_ok("float32_0x3.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(a.bytes.empty());
  const HostArray b = read_ok("int64_empty.npy");
  EXPECT_EQ(b.dtype, DataType::kInt64);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{0}));
  EXPECT_TRUE(b.bytes.empty());
}

TEST(NpyRead, OneDimAndRankFive) {
  const HostArray a = read_ok("int32_1d.npy");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(values_of<int32_t>(a), (std::vector<int32_t>{7, -1, 123456}));
  const HostArray b = read_ok("float32_rank5.npy");
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 1, 3, 1, 2}));
  const std::vector<float> values = values_of<float>(b);
  ASSERT_EQ(values.size(), 12u);
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], static_cast<float>(i));
}

TEST(NpyRead, FormatVersions2And3) {
  for (const char* name : {"float32_v2.npy", "float32_v3.npy"}) {
    const HostArray a = read_ok(name);
    EXPECT_EQ(a.shape, k2x3) << name;
    EXPECT_EQ(values_of<float>(a), (std::vector<float>{0, 1, 2, 3, 4, 5})) << name;
  }
}

TEST(NpyRead, LongHeaders) {
  const HostArray dims = read_ok("float32_32dims.npy");
  std::vector<int64_t> expected(31, 1);
  expected.push_back(2);
  EXPECT_EQ(dims.shape, expected);
  EXPECT_EQ(values_of<float>(dims), (std::vector<float>{1.25f, 1.25f}));

  // A version 2.0 header longer than 64 KiB.
  const HostArray big = read_ok("float32_bigheader.npy");
  EXPECT_EQ(big.shape, k2x3);
  EXPECT_EQ(values_of<float>(big), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

// Every version 1.0 file numpy wrote: decoding then encoding gives numpy's bytes back.
TEST(NpyWrite, ReproducesNumpyFilesByteForByte) {
  for (const char* name :
       {"float16_2x3.npy", "float32_2x3.npy", "float64_2x3.npy", "complex64_2x3.npy", "complex128_2x3.npy",
        "int8_2x3.npy", "int16_2x3.npy", "int32_2x3.npy", "int64_2x3.npy", "uint8_2x3.npy", "uint16_2x3.npy",
        "uint32_2x3.npy", "uint64_2x3.npy", "bool_2x3.npy", "float16_special.npy", "float32_scalar.npy",
        "float32_0x3.npy", "int64_empty.npy", "int32_1d.npy", "float32_rank5.npy", "float32_32dims.npy"}) {
    const std::string original = read_file_bytes(data_path(name));
    Result<HostArray> array = parse_npy(original, name);
    ASSERT_TRUE(array.is_ok()) << array.status().message();
    Result<std::string> encoded = encode_npy(*array);
    ASSERT_TRUE(encoded.is_ok()) << encoded.status().message();
    EXPECT_EQ(*encoded, original) << name;
  }
}

TEST(NpyWrite, HeaderIsAlignedAndNewlineTerminated) {
  HostArray array{DataType::kInt16, {4}, std::vector<uint8_t>(8, 0)};
  Result<std::string> encoded = encode_npy(array);
  ASSERT_TRUE(encoded.is_ok());
  const size_t header_len = static_cast<uint8_t>((*encoded)[8]) | (static_cast<uint8_t>((*encoded)[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ((*encoded)[10 + header_len - 1], '\n');
  EXPECT_EQ(encoded->size(), 10 + header_len + 8);
}

TEST(NpyWrite, WritesAFileThatReadsBack) {
  const std::string path = (std::filesystem::temp_directory_path() / "infer_npy_write_test.npy").string();
  HostArray array{DataType::kFloat32, {1, 2}, {}};
  const float values[2] = {1.5f, -2.25f};
  array.bytes.assign(reinterpret_cast<const uint8_t*>(values), reinterpret_cast<const uint8_t*>(values) + 8);
  ASSERT_TRUE(write_npy(path, array).is_ok());
  Result<HostArray> back = read_npy(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->dtype, DataType::kFloat32);
  EXPECT_EQ(back->shape, array.shape);
  EXPECT_EQ(back->bytes, array.bytes);
  std::filesystem::remove(path);
}

TEST(NpyWrite, RefusesDtypesNumpyLacks) {
  HostArray array{DataType::kBFloat16, {2}, std::vector<uint8_t>(4, 0)};
  Result<std::string> encoded = encode_npy(array);
  ASSERT_FALSE(encoded.is_ok());
  EXPECT_NE(encoded.status().message().find("bfloat16"), std::string::npos) << encoded.status().message();
  EXPECT_FALSE(npy_descr(DataType::kString).has_value());
  EXPECT_FALSE(npy_descr(DataType::kFloat8E4M3FN).has_value());
  EXPECT_EQ(npy_descr(DataType::kBool).value_or(""), "|b1");
  EXPECT_EQ(npy_descr(DataType::kFloat16).value_or(""), "<f2");
  EXPECT_EQ(npy_descr(DataType::kUInt8).value_or(""), "|u1");
  EXPECT_EQ(npy_descr(DataType::kComplex128).value_or(""), "<c16");
}

// Each refused file: the message starts with "cannot read '<path>': " and says why.
struct BadFile {
  const char* name;
  const char* why;
};

class NpyRejects : public ::testing::TestWithParam<BadFile> {};

TEST_P(NpyRejects, WithAMessageNamingTheFile) {
  const std::string path = data_path(GetParam().name);
  Result<HostArray> array = read_npy(path);
  ASSERT_FALSE(array.is_ok());
  const std::string& message = array.status().message();
  EXPECT_EQ(message.rfind("cannot read '" + path + "': ", 0), 0u) << message;
  EXPECT_NE(message.find(GetParam().why), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Files, NpyRejects,
    ::testing::Values(BadFile{"fortran_2x3.npy", "Fortran-order arrays are not supported"},
                      BadFile{"bigendian_2x3.npy", "big-endian dtype '>f4' is not supported"},
                      BadFile{"structured.npy", "structured dtypes"},
                      BadFile{"unicode.npy", "unsupported dtype '<U2'"},
                      BadFile{"truncated_data.npy", "truncated: shape (2, 3) of '<f4' needs 24 data bytes but the file holds 19"},
                      BadFile{"truncated_header.npy", "truncated"},
                      BadFile{"trailing_bytes.npy", "4 unexpected bytes follow the data"},
                      BadFile{"bad_magic.npy", "not a .npy file"},
                      BadFile{"empty_file.npy", "not a .npy file"},
                      BadFile{"no_such_file.npy", "No such file"}),
    [](const ::testing::TestParamInfo<BadFile>& info) {
      std::string name = info.param.name;
      return name.substr(0, name.find('.'));
    });

std::string with_header(std::string_view version, const std::string& header) {
  std::string file = "\x93NUMPY";
  file += version;
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header;
}

TEST(NpyParse, RejectsMalformedHeaders) {
  const struct {
    std::string file;
    std::string why;
  } cases[] = {
      {with_header(std::string("\x04\x00", 2), "{}"), "unsupported .npy format version 4.0"},
      {with_header(std::string("\x01\x00", 2), "{'descr': '<f4', 'shape': (), }"), "no 'fortran_order'"},
      {with_header(std::string("\x01\x00", 2), "{'descr': '<f4', 'fortran_order': False}"), "no 'shape'"},
      {with_header(std::string("\x01\x00", 2), "{'descr': '<f4', 'fortran_order': Maybe, 'shape': ()}"),
       "expected True or False"},
      {with_header(std::string("\x01\x00", 2), "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}"),
       "non-negative integer"},
      {with_header(std::string("\x01\x00", 2), "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}"),
       "unexpected key 'x'"},
      {with_header(std::string("\x01\x00", 2), "{'descr': '<f3', 'fortran_order': False, 'shape': ()}"),
       "unsupported dtype '<f3'"},
      {with_header(std::string("\x01\x00", 2), "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
       "too large"},
  };
  for (const auto& c : cases) {
    Result<HostArray> array = parse_npy(c.file, "x.npy");
    ASSERT_FALSE(array.is_ok()) << c.why;
    EXPECT_EQ(array.status().message().rfind("cannot read 'x.npy': ", 0), 0u) << array.status().message();
    EXPECT_NE(array.status().message().find(c.why), std::string::npos) << array.status().message();
  }
}

TEST(NpyParse, AcceptsPython2LongsAndDoubleQuotes) {
  std::string file = with_header(std::string("\x01\x00", 2),
                                 "{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (2L, 1L), }\n");
  file += std::string("\x05\x00\xff\xff", 4);
  Result<HostArray> array = parse_npy(file, "py2.npy");
  ASSERT_TRUE(array.is_ok()) << array.status().message();
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values_of<int16_t>(*array), (std::vector<int16_t>{5, -1}));
}

}  // namespace
}  // namespace infer::cli
