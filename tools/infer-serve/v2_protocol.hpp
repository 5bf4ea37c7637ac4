// The KServe v2 (Open Inference Protocol) inference request and response bodies, JSON
// and the binary tensor data extension, independent of any transport: the HTTP server
// hands a body in and writes a body out, and the fuzz target drives the parser alone.
//
// Request:  {"id", "parameters", "inputs": [{"name", "shape", "datatype", "parameters",
//            "data"}], "outputs": [{"name", "parameters"}]}, where "data" is a flat or
//            nested JSON array, or absent with parameters.binary_data_size given and the
//            bytes following the JSON header (Inference-Header-Content-Length bytes long).
// Response: {"model_name", "model_version", "id", "outputs": [{"name", "shape",
//            "datatype", "data"}]}, or with binary outputs their bytes after the JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "infer/dtype.hpp"
#include "infer/infer.hpp"
#include "infer/status.hpp"

namespace infer::serve {

// "FP32", "INT64", "BOOL", ... (the v2 names); nullopt for a name infer has no dtype for.
std::optional<DataType> dtype_from_v2(std::string_view name);
// The v2 name of `dtype`; "" when the protocol has none (int4, float8, complex...).
std::string_view v2_datatype(DataType dtype);

struct RequestedOutput {
  std::string name;
  std::optional<bool> binary_data;  // parameters.binary_data; unset: the request's default
};

struct InferRequest {
  std::string id;                        // echoed in the response; "" when absent
  std::vector<NamedTensor> inputs;       // in request order, shapes as sent
  std::vector<RequestedOutput> outputs;  // empty: every output of the model
  bool binary_data_output = false;       // parameters.binary_data_output
  std::optional<int64_t> timeout_us;     // parameters.timeout (> 0)
};

// Parses a request body. `header_length` is the Inference-Header-Content-Length value
// when the client sent one: the JSON is then that prefix of `body` and the binary input
// data follows it. Inputs given as binary data are read in place (Tensor::borrow) and
// keep `body_owner` alive; JSON data is converted to the declared datatype. Errors are
// InvalidArgument and name the field or the input and what was expected.
Result<InferRequest> parse_infer_request(std::string_view body, std::optional<size_t> header_length,
                                         std::shared_ptr<const void> body_owner);

// One output as it goes into a response.
struct ResponseOutput {
  std::string name;
  Tensor tensor;
  bool binary = false;  // its bytes follow the JSON instead of a "data" array
};

struct EncodedResponse {
  std::string body;
  // Set when binary outputs follow the JSON: the JSON's length, for the
  // Inference-Header-Content-Length header.
  std::optional<size_t> header_length;
};

// Writes a response body. Floats are written in their shortest round-trip form;
// non-finite values, which JSON cannot carry, are refused with a message that asks for
// binary_data. Fails for an output dtype with no v2 name.
Result<EncodedResponse> encode_infer_response(std::string_view model_name,
                                              std::string_view model_version, std::string_view id,
                                              const std::vector<ResponseOutput>& outputs);

// {"error": "<message>"}
std::string error_body(std::string_view message);
// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);

}  // namespace infer::serve
