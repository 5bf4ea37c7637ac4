// The KServe v2 request parser and response writer (tools/infer-serve/v2_protocol), on
// hand-written bodies: values are checked against the numbers written in the JSON, and
// every refusal names the field or input at fault.
#include "v2_protocol.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace infer::serve {
namespace {

Result<InferRequest> parse(const std::string& body,
                           std::optional<size_t> header_length = std::nullopt) {
  auto owner = std::make_shared<std::string>(body);
  return parse_infer_request(*owner, header_length, owner);
}

std::string error_of(const std::string& body, std::optional<size_t> header_length = std::nullopt) {
  Result<InferRequest> r = parse(body, header_length);
  EXPECT_FALSE(r.is_ok()) << "accepted: " << body;
  return r.is_ok() ? "" : r.status().message();
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.element_count());
}

TEST(V2Datatypes, NamesMapBothWays) {
  EXPECT_EQ(dtype_from_v2("FP32"), DataType::kFloat32);
  EXPECT_EQ(dtype_from_v2("INT64"), DataType::kInt64);
  EXPECT_EQ(dtype_from_v2("BOOL"), DataType::kBool);
  EXPECT_EQ(dtype_from_v2("BF16"), DataType::kBFloat16);
  EXPECT_FALSE(dtype_from_v2("fp32").has_value());
  EXPECT_FALSE(dtype_from_v2("BYTES").has_value());
  EXPECT_EQ(v2_datatype(DataType::kFloat16), "FP16");
  EXPECT_EQ(v2_datatype(DataType::kUInt32), "UINT32");
  EXPECT_EQ(v2_datatype(DataType::kInt4), "");
}

TEST(ParseInferRequest, FlatAndNestedDataAreRowMajor) {
  Result<InferRequest> r = parse(R"({"id": "a1", "inputs": [
      {"name": "x", "shape": [2, 3], "datatype": "FP32", "data": [1, 2.5, -3, 4, 5, 6e-1]},
      {"name": "y", "shape": [2, 2], "datatype": "INT64", "data": [[1, -2], [9007199254740993, 4]]}]})");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->id, "a1");
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->inputs[0].name, "x");
  EXPECT_EQ(r->inputs[0].tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(r->inputs[0].tensor), (std::vector<float>{1, 2.5f, -3, 4, 5, 0.6f}));
  EXPECT_FALSE(r->inputs[0].tensor.borrowed());
  // 2^53 + 1 is kept exactly: integers are not read through a double.
  EXPECT_EQ(values<int64_t>(r->inputs[1].tensor),
            (std::vector<int64_t>{1, -2, 9007199254740993LL, 4}));
  EXPECT_TRUE(r->outputs.empty());
  EXPECT_FALSE(r->binary_data_output);
  EXPECT_FALSE(r->timeout_us.has_value());
}

TEST(ParseInferRequest, EveryDatatypeConverts) {
  Result<InferRequest> r = parse(R"({"inputs": [
      {"name": "b", "shape": [3], "datatype": "BOOL", "data": [true, false, true]},
      {"name": "u8", "shape": [2], "datatype": "UINT8", "data": [0, 255]},
      {"name": "i8", "shape": [2], "datatype": "INT8", "data": [-128, 127]},
      {"name": "u16", "shape": [1], "datatype": "UINT16", "data": [65535]},
      {"name": "i32", "shape": [1], "datatype": "INT32", "data": [-2147483648]},
      {"name": "u64", "shape": [1], "datatype": "UINT64", "data": [18446744073709551615]},
      {"name": "f64", "shape": [1], "datatype": "FP64", "data": [0.1]},
      {"name": "f16", "shape": [2], "datatype": "FP16", "data": [1.5, -65504]},
      {"name": "bf16", "shape": [1], "datatype": "BF16", "data": [3.0]}]})");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(values<bool>(r->inputs[0].tensor), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(values<uint8_t>(r->inputs[1].tensor), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(values<int8_t>(r->inputs[2].tensor), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(values<uint16_t>(r->inputs[3].tensor), (std::vector<uint16_t>{65535}));
  EXPECT_EQ(values<int32_t>(r->inputs[4].tensor),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(values<uint64_t>(r->inputs[5].tensor),
            (std::vector<uint64_t>{18446744073709551615ULL}));
  EXPECT_EQ(values<double>(r->inputs[6].tensor), (std::vector<double>{0.1}));
  // IEEE half: 1.5 = 0x3E00, -65504 = 0xFBFF; bfloat16 3.0 = 0x4040.
  EXPECT_EQ(values<uint16_t>(r->inputs[7].tensor), (std::vector<uint16_t>{0x3E00, 0xFBFF}));
  EXPECT_EQ(values<uint16_t>(r->inputs[8].tensor), (std::vector<uint16_t>{0x4040}));
}

TEST(ParseInferRequest, BinaryInputsAreReadInPlace) {
  const std::string header =
      R"({"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "parameters": {"binary_data_size": 8}},)"
      R"( {"name": "b", "shape": [1], "datatype": "INT16", "data": [7]},)"
      R"( {"name": "c", "shape": [3], "datatype": "UINT8", "parameters": {"binary_data_size": 3}}],)"
      R"( "outputs": [{"name": "o1", "parameters": {"binary_data": true}}, {"name": "o2"}],)"
      R"( "parameters": {"binary_data_output": true, "timeout": 1500}})";
  std::string body = header;
  const float a[2] = {1.25f, -2.0f};
  body.append(reinterpret_cast<const char*>(a), sizeof a);
  body += std::string("\x01\x02\xff", 3);
  auto owner = std::make_shared<std::string>(body);
  Result<InferRequest> r = parse_infer_request(*owner, header.size(), owner);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->inputs.size(), 3u);
  EXPECT_TRUE(r->inputs[0].tensor.borrowed());
  EXPECT_EQ(r->inputs[0].tensor.data(), owner->data() + header.size());
  EXPECT_EQ(values<float>(r->inputs[0].tensor), (std::vector<float>{1.25f, -2.0f}));
  EXPECT_EQ(values<int16_t>(r->inputs[1].tensor), (std::vector<int16_t>{7}));
  EXPECT_EQ(values<uint8_t>(r->inputs[2].tensor), (std::vector<uint8_t>{1, 2, 255}));
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(r->outputs[0].name, "o1");
  EXPECT_EQ(r->outputs[0].binary_data, true);
  EXPECT_FALSE(r->outputs[1].binary_data.has_value());
  EXPECT_TRUE(r->binary_data_output);
  EXPECT_EQ(r->timeout_us, 1500);
}

TEST(ParseInferRequest, BinaryDataErrors) {
  const std::string h =
      R"({"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "parameters": {"binary_data_size": 8}}]})";
  EXPECT_EQ(error_of(h + std::string(4, '\0'), h.size()),
            "input 'a': the binary data is truncated: 8 bytes expected, 4 left");
  EXPECT_EQ(error_of(h + std::string(12, '\0'), h.size()),
            "the body has 4 bytes of binary data after the JSON header that no input claims");
  EXPECT_EQ(error_of(h, h.size() + 1),
            "Inference-Header-Content-Length is " + std::to_string(h.size() + 1) +
                " but the body has only " + std::to_string(h.size()) + " bytes");
  EXPECT_EQ(error_of(h),
            "input 'a' gives binary_data_size but the request has no "
            "Inference-Header-Content-Length header");
  const std::string wrong =
      R"({"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "parameters": {"binary_data_size": 6}}]})";
  EXPECT_EQ(error_of(wrong + std::string(6, '\0'), wrong.size()),
            "input 'a': binary_data_size is 6 but FP32 [2] needs 8 bytes");
  Result<InferRequest> raw = parse("abcd", 0);
  ASSERT_FALSE(raw.is_ok());
  EXPECT_EQ(raw.status().code(), StatusCode::kUnsupported);
}

struct BadBody {
  const char* name;
  const char* body;
  const char* message;
};

const BadBody kBadBodies[] = {
    {"NotJson", "{\"inputs\": [", "the request body is not valid JSON: incomplete JSON"},
    {"NotAnObject", "[1, 2]", "the request body must be a JSON object, got an array"},
    {"NoInputs", "{\"id\": \"x\"}", "the request is missing the required field 'inputs'"},
    {"InputsNotArray", "{\"inputs\": {}}", "the request: 'inputs' must be an array, got an object"},
    {"InputNotObject", "{\"inputs\": [3]}", "inputs[0] must be an object, got a number"},
    {"InputWithoutName", "{\"inputs\": [{\"shape\": [1]}]}",
     "inputs[0] is missing the required field 'name'"},
    {"IdNotString", "{\"id\": 5, \"inputs\": []}",
     "the request: 'id' must be a string, got a number"},
    {"UnknownDatatype",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "BYTES", "data": ["a"]}]})",
     "input 'x': datatype 'BYTES' is not one infer serves (BOOL, UINT8..UINT64, INT8..INT64, FP16, "
     "BF16, FP32, "
     "FP64)"},
    {"NoShape", R"({"inputs": [{"name": "x", "datatype": "FP32", "data": [1]}]})",
     "input 'x' is missing the required field 'shape'"},
    {"NegativeDim",
     R"({"inputs": [{"name": "x", "shape": [2, -1], "datatype": "FP32", "data": [1]}]})",
     "input 'x': 'shape' must hold integers >= 0, got -1"},
    {"HugeShape",
     R"({"inputs": [{"name": "x", "shape": [4294967296, 4294967296], "datatype": "FP32", "data": [1]}]})",
     "input 'x': shape [4294967296,4294967296] has too many elements"},
    {"TooFewElements",
     R"({"inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3]}]})",
     "input 'x': shape [2,2] has 4 elements but 'data' holds 3"},
    {"TooManyElements",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [[1, 2], [3]]}]})",
     "input 'x': shape [1] has 1 elements but 'data' holds more"},
    {"NoData", R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32"}]})",
     "input 'x' has neither 'data' nor parameters.binary_data_size"},
    {"Uint8OutOfRange",
     R"({"inputs": [{"name": "x", "shape": [2], "datatype": "UINT8", "data": [1, 300]}]})",
     "input 'x': data element 1 is 300, not a value of datatype UINT8"},
    {"FractionForInt",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "INT32", "data": [1.5]}]})",
     "input 'x': data element 0 is 1.5, not a value of datatype INT32"},
    {"Fp32Overflow",
     R"({"inputs": [{"name": "x", "shape": [2], "datatype": "FP32", "data": [1, 1e39]}]})",
     "input 'x': data element 1 is 1e+39, not a value of datatype FP32"},
    {"Fp16Overflow",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP16", "data": [70000]}]})",
     "input 'x': data element 0 is 70000, not a value of datatype FP16"},
    {"StringForFloat",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": ["1"]}]})",
     "input 'x': data element 0 is a string, not a value of datatype FP32"},
    {"NumberForBool",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "BOOL", "data": [1]}]})",
     "input 'x': data element 0 is 1, not a value of datatype BOOL"},
    {"DuplicateInput",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1]}, {"name": "x", "shape": [1], "datatype": "FP32", "data": [1]}]})",
     "input 'x' is given twice"},
    {"DuplicateOutput", R"({"inputs": [], "outputs": [{"name": "y"}, {"name": "y"}]})",
     "output 'y' is requested twice"},
    {"OutputsNotArray", R"({"inputs": [], "outputs": "y"})",
     "the request: 'outputs' must be an array, got a string"},
    {"BinaryFlagNotBool",
     R"({"inputs": [], "outputs": [{"name": "y", "parameters": {"binary_data": 1}}]})",
     "output 'y': parameter 'binary_data' must be true or false"},
    {"NegativeTimeout", R"({"inputs": [], "parameters": {"timeout": -5}})",
     "the request: parameter 'timeout' must be >= 0 (microseconds)"},
    {"ParametersNotObject", R"({"inputs": [], "parameters": [1]})",
     "the request: 'parameters' must be an object, got an array"},
    {"DataAndBinary",
     R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1], "parameters": {"binary_data_size": 4}}]})",
     "input 'x' has both 'data' and parameters.binary_data_size"},
};

class BadBodyTest : public ::testing::TestWithParam<BadBody> {};

TEST_P(BadBodyTest, IsRefusedNamingTheField) {
  const BadBody& c = GetParam();
  Result<InferRequest> r = parse(c.body);
  ASSERT_FALSE(r.is_ok()) << "accepted: " << c.body;
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(Rules, BadBodyTest, ::testing::ValuesIn(kBadBodies),
                         [](const ::testing::TestParamInfo<BadBody>& info) {
                           return info.param.name;
                         });

Tensor make(DataType dtype, std::vector<int64_t> shape, const void* data) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Result<Tensor> t = Tensor::from_bytes(dtype, shape, data, storage_bytes(dtype, n));
  EXPECT_TRUE(t.is_ok());
  return t.is_ok() ? std::move(t).value() : Tensor();
}

TEST(EncodeInferResponse, JsonOutputsRoundTripExactly) {
  const float f[4] = {0.1f, -3.4028235e38f, 1e-45f, 7.0f};
  const int64_t i[2] = {-9007199254740993LL, 5};
  const bool b[2] = {true, false};
  const uint16_t h[1] = {0x3C00};  // half 1.0
  std::vector<ResponseOutput> outputs = {{"f", make(DataType::kFloat32, {2, 2}, f), false},
                                         {"i", make(DataType::kInt64, {2}, i), false},
                                         {"b", make(DataType::kBool, {2}, b), false},
                                         {"h", make(DataType::kFloat16, {1}, h), false}};
  Result<EncodedResponse> r = encode_infer_response("m", "2", "req-7", outputs);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_FALSE(r->header_length.has_value());
  EXPECT_EQ(r->body,
            R"({"model_name":"m","model_version":"2","id":"req-7","outputs":[)"
            R"({"name":"f","datatype":"FP32","shape":[2,2],"data":[0.1,-3.4028235e+38,1e-45,7]},)"
            R"({"name":"i","datatype":"INT64","shape":[2],"data":[-9007199254740993,5]},)"
            R"({"name":"b","datatype":"BOOL","shape":[2],"data":[true,false]},)"
            R"({"name":"h","datatype":"FP16","shape":[1],"data":[1]}]})");
  // The shortest forms read back as the same floats.
  EXPECT_EQ(std::strtof("0.1", nullptr), f[0]);
  EXPECT_EQ(std::strtof("-3.4028235e+38", nullptr), f[1]);
  EXPECT_EQ(std::strtof("1e-45", nullptr), f[2]);
}

TEST(EncodeInferResponse, BinaryOutputsFollowTheJson) {
  const float f[2] = {1.5f, -2.0f};
  const int32_t i[1] = {42};
  std::vector<ResponseOutput> outputs = {{"f", make(DataType::kFloat32, {2}, f), true},
                                         {"i", make(DataType::kInt32, {1}, i), false}};
  Result<EncodedResponse> r = encode_infer_response("m", "", "", outputs);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const std::string json =
      R"({"model_name":"m","outputs":[{"name":"f","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}},)"
      R"({"name":"i","datatype":"INT32","shape":[1],"data":[42]}]})";
  ASSERT_EQ(r->header_length, json.size());
  EXPECT_EQ(r->body.substr(0, json.size()), json);
  ASSERT_EQ(r->body.size(), json.size() + 8);
  EXPECT_EQ(std::memcmp(r->body.data() + json.size(), f, 8), 0);
}

TEST(EncodeInferResponse, NonFiniteJsonIsRefusedAskingForBinary) {
  const float f[2] = {1.0f, std::nanf("")};
  Result<EncodedResponse> r =
      encode_infer_response("m", "1", "", {{"y", make(DataType::kFloat32, {2}, f), false}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(),
            "output 'y' holds NaN or infinite values, which JSON cannot carry: request it with "
            "parameters.binary_data: true");
  // As binary data the same output is fine.
  EXPECT_TRUE(
      encode_infer_response("m", "1", "", {{"y", make(DataType::kFloat32, {2}, f), true}}).is_ok());
}

TEST(EncodeInferResponse, StringsAreEscaped) {
  EXPECT_EQ(json_string("a\"b\\c\n"), R"("a\"b\\c\n")");
  EXPECT_EQ(error_body("bad \"x\""), R"({"error":"bad \"x\""})");
}

}  // namespace
}  // namespace infer::serve
