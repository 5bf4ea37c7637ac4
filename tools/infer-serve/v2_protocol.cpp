#include "v2_protocol.hpp"

#include <array>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "half_float.hpp"

namespace infer::serve {
namespace json = boost::json;
namespace {

struct V2Name {
  std::string_view name;
  DataType dtype;
};
constexpr std::array<V2Name, 13> kV2Names{{
    {"BOOL", DataType::kBool},
    {"UINT8", DataType::kUInt8},
    {"UINT16", DataType::kUInt16},
    {"UINT32", DataType::kUInt32},
    {"UINT64", DataType::kUInt64},
    {"INT8", DataType::kInt8},
    {"INT16", DataType::kInt16},
    {"INT32", DataType::kInt32},
    {"INT64", DataType::kInt64},
    {"FP16", DataType::kFloat16},
    {"FP32", DataType::kFloat32},
    {"FP64", DataType::kFloat64},
    {"BF16", DataType::kBFloat16},
}};

std::string kind_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "a number";
    case json::kind::string:
      return "a string";
    case json::kind::array:
      return "an array";
    case json::kind::object:
      return "an object";
  }
  return "a value";
}

// A number as the client wrote it, for messages (Boost.JSON would write 1.5 as 1.5E0).
std::string number_text(const json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_double());
  (void)ec;
  return std::string(buf, end);
}

// Converts one JSON element to T, or says why it cannot be one.
template <typename T>
bool convert_element(const json::value& v, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_bool()) return false;
    out = v.get_bool();
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    double d = 0;
    if (v.is_double()) {
      d = v.get_double();
    } else if (v.is_int64()) {
      d = static_cast<double>(v.get_int64());
    } else if (v.is_uint64()) {
      d = static_cast<double>(v.get_uint64());
    } else {
      return false;
    }
    out = static_cast<T>(d);
    // 1e39 as FP32 would silently become infinity: refused like an out-of-range integer.
    return std::isfinite(out);
  } else {
    // Integers must be written as integers within the type's range: 1.5 or 300 for a
    // UINT8 would otherwise be silently changed.
    if (v.is_int64()) {
      const int64_t x = v.get_int64();
      if constexpr (std::is_signed_v<T>) {
        if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) return false;
      } else {
        if (x < 0 || static_cast<uint64_t>(x) > std::numeric_limits<T>::max()) return false;
      }
      out = static_cast<T>(x);
      return true;
    }
    if (v.is_uint64()) {
      const uint64_t x = v.get_uint64();
      if (x > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
      out = static_cast<T>(x);
      return true;
    }
    return false;
  }
}

// Flattens a nested JSON array (any nesting, row-major) into `elements`.
Status flatten(const json::value& v, std::vector<const json::value*>& elements, size_t limit,
               const std::string& what) {
  if (!v.is_array()) {
    elements.push_back(&v);
    return Status::ok();
  }
  for (const json::value& item : v.get_array()) {
    if (elements.size() > limit) break;  // the count check reports it
    INFER_RETURN_IF_ERROR(flatten(item, elements, limit, what));
  }
  return Status::ok();
}

// `store` converts to a 16-bit float; `inf_bits` is that format's infinity (sign cleared),
// which a finite value must not become.
template <typename T, typename Store = T>
Status fill(const std::vector<const json::value*>& elements, void* dst, const std::string& input,
            std::string_view datatype, Store (*store)(T) = nullptr, Store inf_bits = 0) {
  Store* out = static_cast<Store*>(dst);
  for (size_t i = 0; i < elements.size(); ++i) {
    T value{};
    bool ok = convert_element<T>(*elements[i], value);
    if constexpr (std::is_same_v<T, Store>) {
      if (ok) out[i] = value;
    } else {
      if (ok) out[i] = store(value);
      ok = ok && (out[i] & 0x7FFF) != inf_bits;
    }
    if (!ok) {
      const json::value& e = *elements[i];
      const std::string shown = e.is_number() ? number_text(e) : kind_name(e);
      return invalid_argument("input '" + input + "': data element " + std::to_string(i) + " is " +
                              shown + ", not a value of datatype " + std::string(datatype));
    }
  }
  return Status::ok();
}

uint16_t to_half(float v) { return cli::float_to_half(v); }
uint16_t to_bfloat16(float v) { return cli::float_to_bfloat16(v); }

Status fill_from_json(DataType dtype, const std::vector<const json::value*>& elements, void* dst,
                      const std::string& input, std::string_view datatype) {
  switch (dtype) {
    case DataType::kBool:
      return fill<bool>(elements, dst, input, datatype);
    case DataType::kUInt8:
      return fill<uint8_t>(elements, dst, input, datatype);
    case DataType::kUInt16:
      return fill<uint16_t>(elements, dst, input, datatype);
    case DataType::kUInt32:
      return fill<uint32_t>(elements, dst, input, datatype);
    case DataType::kUInt64:
      return fill<uint64_t>(elements, dst, input, datatype);
    case DataType::kInt8:
      return fill<int8_t>(elements, dst, input, datatype);
    case DataType::kInt16:
      return fill<int16_t>(elements, dst, input, datatype);
    case DataType::kInt32:
      return fill<int32_t>(elements, dst, input, datatype);
    case DataType::kInt64:
      return fill<int64_t>(elements, dst, input, datatype);
    case DataType::kFloat32:
      return fill<float>(elements, dst, input, datatype);
    case DataType::kFloat64:
      return fill<double>(elements, dst, input, datatype);
    case DataType::kFloat16:
      return fill<float, uint16_t>(elements, dst, input, datatype, to_half, 0x7C00);
    case DataType::kBFloat16:
      return fill<float, uint16_t>(elements, dst, input, datatype, to_bfloat16, 0x7F80);
    default:
      return unsupported("input '" + input + "': datatype " + std::string(datatype) +
                         " is not supported");
  }
}

Result<std::string> string_field(const json::object& obj, std::string_view key,
                                 const std::string& where, bool required) {
  const json::value* v = obj.if_contains(key);
  if (v == nullptr) {
    if (required)
      return invalid_argument(where + " is missing the required field '" + std::string(key) + "'");
    return std::string();
  }
  if (!v->is_string()) {
    return invalid_argument(where + ": '" + std::string(key) + "' must be a string, got " +
                            kind_name(*v));
  }
  return std::string(v->get_string());
}

Result<const json::object*> parameters_of(const json::object& obj, const std::string& where) {
  const json::value* v = obj.if_contains("parameters");
  if (v == nullptr) return static_cast<const json::object*>(nullptr);
  if (!v->is_object())
    return invalid_argument(where + ": 'parameters' must be an object, got " + kind_name(*v));
  return &v->get_object();
}

Result<std::optional<int64_t>> int_parameter(const json::object* params, std::string_view key,
                                             const std::string& where) {
  if (params == nullptr) return std::optional<int64_t>();
  const json::value* v = params->if_contains(key);
  if (v == nullptr) return std::optional<int64_t>();
  if (v->is_int64()) return std::optional<int64_t>(v->get_int64());
  if (v->is_uint64() &&
      v->get_uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::optional<int64_t>(static_cast<int64_t>(v->get_uint64()));
  }
  return invalid_argument(where + ": parameter '" + std::string(key) +
                          "' must be an integer, got " +
                          (v->is_number() ? number_text(*v) : kind_name(*v)));
}

Result<std::optional<bool>> bool_parameter(const json::object* params, std::string_view key,
                                           const std::string& where) {
  if (params == nullptr) return std::optional<bool>();
  const json::value* v = params->if_contains(key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_bool())
    return invalid_argument(where + ": parameter '" + std::string(key) + "' must be true or false");
  return std::optional<bool>(v->get_bool());
}

Result<std::vector<int64_t>> read_shape(const json::object& obj, const std::string& where) {
  const json::value* v = obj.if_contains("shape");
  if (v == nullptr) return invalid_argument(where + " is missing the required field 'shape'");
  if (!v->is_array())
    return invalid_argument(where + ": 'shape' must be an array of integers, got " + kind_name(*v));
  std::vector<int64_t> shape;
  for (const json::value& d : v->get_array()) {
    int64_t dim = -1;
    if (d.is_int64()) dim = d.get_int64();
    if (d.is_uint64() &&
        d.get_uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      dim = static_cast<int64_t>(d.get_uint64());
    }
    if (dim < 0) {
      return invalid_argument(where + ": 'shape' must hold integers >= 0, got " +
                              (d.is_number() ? number_text(d) : kind_name(d)));
    }
    shape.push_back(dim);
  }
  return shape;
}

// The element count of `shape`, or nullopt when it does not fit in int64.
std::optional<int64_t> element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

std::optional<DataType> dtype_from_v2(std::string_view name) {
  for (const V2Name& n : kV2Names) {
    if (n.name == name) return n.dtype;
  }
  return std::nullopt;
}

std::string_view v2_datatype(DataType dtype) {
  for (const V2Name& n : kV2Names) {
    if (n.dtype == dtype) return n.name;
  }
  return {};
}

Result<InferRequest> parse_infer_request(std::string_view body, std::optional<size_t> header_length,
                                         std::shared_ptr<const void> body_owner) {
  if (header_length && *header_length > body.size()) {
    return invalid_argument("Inference-Header-Content-Length is " + std::to_string(*header_length) +
                            " but the body has only " + std::to_string(body.size()) + " bytes");
  }
  if (header_length && *header_length == 0) {
    return unsupported(
        "a raw binary request (Inference-Header-Content-Length: 0) is not supported; send a JSON "
        "header naming the input");
  }
  const std::string_view header = header_length ? body.substr(0, *header_length) : body;
  std::string_view binary = header_length ? body.substr(*header_length) : std::string_view();

  json::parse_options options;
  options.max_depth = 64;
  boost::system::error_code ec;
  json::value doc = json::parse(json::string_view(header.data(), header.size()), ec, {}, options);
  if (ec) return invalid_argument("the request body is not valid JSON: " + ec.message());
  if (!doc.is_object())
    return invalid_argument("the request body must be a JSON object, got " + kind_name(doc));
  const json::object& root = doc.get_object();

  InferRequest request;
  INFER_ASSIGN_OR_RETURN(request.id, string_field(root, "id", "the request", false));
  INFER_ASSIGN_OR_RETURN(const json::object* params, parameters_of(root, "the request"));
  INFER_ASSIGN_OR_RETURN(std::optional<bool> binary_output,
                         bool_parameter(params, "binary_data_output", "the request"));
  request.binary_data_output = binary_output.value_or(false);
  INFER_ASSIGN_OR_RETURN(std::optional<int64_t> timeout,
                         int_parameter(params, "timeout", "the request"));
  if (timeout && *timeout < 0)
    return invalid_argument("the request: parameter 'timeout' must be >= 0 (microseconds)");
  if (timeout && *timeout > 0) request.timeout_us = timeout;

  const json::value* inputs = root.if_contains("inputs");
  if (inputs == nullptr)
    return invalid_argument("the request is missing the required field 'inputs'");
  if (!inputs->is_array())
    return invalid_argument("the request: 'inputs' must be an array, got " + kind_name(*inputs));

  size_t binary_offset = 0;
  for (size_t i = 0; i < inputs->get_array().size(); ++i) {
    const json::value& item = inputs->get_array()[i];
    const std::string at = "inputs[" + std::to_string(i) + "]";
    if (!item.is_object())
      return invalid_argument(at + " must be an object, got " + kind_name(item));
    const json::object& in = item.get_object();
    INFER_ASSIGN_OR_RETURN(std::string name, string_field(in, "name", at, true));
    const std::string where = "input '" + name + "'";
    for (const NamedTensor& seen : request.inputs) {
      if (seen.name == name) return invalid_argument(where + " is given twice");
    }
    INFER_ASSIGN_OR_RETURN(std::string datatype, string_field(in, "datatype", where, true));
    const std::optional<DataType> dtype = dtype_from_v2(datatype);
    if (!dtype) {
      return invalid_argument(
          where + ": datatype '" + datatype +
          "' is not one infer serves (BOOL, UINT8..UINT64, INT8..INT64, FP16, BF16, FP32, FP64)");
    }
    INFER_ASSIGN_OR_RETURN(std::vector<int64_t> shape, read_shape(in, where));
    const std::optional<int64_t> count = element_count(shape);
    if (!count)
      return invalid_argument(where + ": shape " + shape_text(shape) + " has too many elements");
    const size_t bytes = storage_bytes(*dtype, *count);
    if (*count > 0 && bytes / static_cast<size_t>(*count) != dtype_size(*dtype)) {
      return invalid_argument(where + ": shape " + shape_text(shape) + " has too many elements");
    }
    INFER_ASSIGN_OR_RETURN(const json::object* in_params, parameters_of(in, where));
    INFER_ASSIGN_OR_RETURN(std::optional<int64_t> binary_size,
                           int_parameter(in_params, "binary_data_size", where));
    const json::value* data = in.if_contains("data");

    if (binary_size) {
      if (data != nullptr)
        return invalid_argument(where + " has both 'data' and parameters.binary_data_size");
      if (!header_length) {
        return invalid_argument(where +
                                " gives binary_data_size but the request has no "
                                "Inference-Header-Content-Length header");
      }
      if (*binary_size < 0 || static_cast<size_t>(*binary_size) != bytes) {
        return invalid_argument(where + ": binary_data_size is " + std::to_string(*binary_size) +
                                " but " + datatype + " " + shape_text(shape) + " needs " +
                                std::to_string(bytes) + " bytes");
      }
      if (binary.size() - binary_offset < bytes) {
        return invalid_argument(where + ": the binary data is truncated: " + std::to_string(bytes) +
                                " bytes expected, " +
                                std::to_string(binary.size() - binary_offset) + " left");
      }
      INFER_ASSIGN_OR_RETURN(
          Tensor tensor,
          Tensor::borrow(*dtype, shape, binary.data() + binary_offset, bytes, body_owner));
      binary_offset += bytes;
      request.inputs.push_back(NamedTensor{name, std::move(tensor)});
      continue;
    }
    if (data == nullptr)
      return invalid_argument(where + " has neither 'data' nor parameters.binary_data_size");
    std::vector<const json::value*> elements;
    // Each element takes at least two bytes of JSON, so the header's size bounds the count
    // worth reserving for, whatever the shape claims.
    elements.reserve(std::min(static_cast<size_t>(*count), header.size() / 2 + 1));
    INFER_RETURN_IF_ERROR(flatten(*data, elements, static_cast<size_t>(*count), where));
    if (elements.size() != static_cast<size_t>(*count)) {
      return invalid_argument(where + ": shape " + shape_text(shape) + " has " +
                              std::to_string(*count) + " elements but 'data' holds " +
                              (elements.size() > static_cast<size_t>(*count)
                                   ? "more"
                                   : std::to_string(elements.size())));
    }
    Tensor tensor = Tensor::zeros(*dtype, shape);
    INFER_RETURN_IF_ERROR(fill_from_json(*dtype, elements, tensor.mutable_data(), name, datatype));
    request.inputs.push_back(NamedTensor{name, std::move(tensor)});
  }
  if (header_length && binary_offset != binary.size()) {
    return invalid_argument("the body has " + std::to_string(binary.size() - binary_offset) +
                            " bytes of binary data after the JSON header that no input claims");
  }

  if (const json::value* outputs = root.if_contains("outputs")) {
    if (!outputs->is_array())
      return invalid_argument("the request: 'outputs' must be an array, got " +
                              kind_name(*outputs));
    for (size_t i = 0; i < outputs->get_array().size(); ++i) {
      const json::value& item = outputs->get_array()[i];
      const std::string at = "outputs[" + std::to_string(i) + "]";
      if (!item.is_object())
        return invalid_argument(at + " must be an object, got " + kind_name(item));
      RequestedOutput out;
      INFER_ASSIGN_OR_RETURN(out.name, string_field(item.get_object(), "name", at, true));
      for (const RequestedOutput& seen : request.outputs) {
        if (seen.name == out.name)
          return invalid_argument("output '" + out.name + "' is requested twice");
      }
      INFER_ASSIGN_OR_RETURN(const json::object* out_params,
                             parameters_of(item.get_object(), "output '" + out.name + "'"));
      INFER_ASSIGN_OR_RETURN(
          out.binary_data, bool_parameter(out_params, "binary_data", "output '" + out.name + "'"));
      request.outputs.push_back(std::move(out));
    }
  }
  return request;
}

namespace {

template <typename T>
void append_number(std::string& out, T value) {
  char buf[64];
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
    return;
  } else {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    (void)ec;
    out.append(buf, end);
  }
}

template <typename T>
void append_elements(std::string& out, const T* data, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (i) out += ',';
    append_number(out, data[i]);
  }
}

template <typename T>
bool all_finite(const T* data, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(static_cast<double>(data[i]))) return false;
  }
  return true;
}

Status append_data(std::string& out, const ResponseOutput& o) {
  const Tensor& t = o.tensor;
  const int64_t n = t.element_count();
  switch (t.dtype()) {
    case DataType::kBool:
      append_elements(out, t.data_as<bool>(), n);
      break;
    case DataType::kUInt8:
      append_elements(out, t.data_as<uint8_t>(), n);
      break;
    case DataType::kUInt16:
      append_elements(out, t.data_as<uint16_t>(), n);
      break;
    case DataType::kUInt32:
      append_elements(out, t.data_as<uint32_t>(), n);
      break;
    case DataType::kUInt64:
      append_elements(out, t.data_as<uint64_t>(), n);
      break;
    case DataType::kInt8:
      append_elements(out, t.data_as<int8_t>(), n);
      break;
    case DataType::kInt16:
      append_elements(out, t.data_as<int16_t>(), n);
      break;
    case DataType::kInt32:
      append_elements(out, t.data_as<int32_t>(), n);
      break;
    case DataType::kInt64:
      append_elements(out, t.data_as<int64_t>(), n);
      break;
    case DataType::kFloat32:
      if (!all_finite(t.data_as<float>(), n)) break;
      append_elements(out, t.data_as<float>(), n);
      return Status::ok();
    case DataType::kFloat64:
      if (!all_finite(t.data_as<double>(), n)) break;
      append_elements(out, t.data_as<double>(), n);
      return Status::ok();
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      std::vector<float> f(static_cast<size_t>(n));
      const uint16_t* bits = t.data_as<uint16_t>();
      for (int64_t i = 0; i < n; ++i) {
        f[i] = t.dtype() == DataType::kFloat16 ? cli::half_to_float(bits[i])
                                               : cli::bfloat16_to_float(bits[i]);
      }
      if (!all_finite(f.data(), n)) break;
      append_elements(out, f.data(), n);
      return Status::ok();
    }
    default:
      return unsupported("output '" + o.name + "' is " + std::string(dtype_name(t.dtype())) +
                         ", which the v2 protocol cannot carry");
  }
  if (t.dtype() == DataType::kFloat32 || t.dtype() == DataType::kFloat64 ||
      t.dtype() == DataType::kFloat16 || t.dtype() == DataType::kBFloat16) {
    return invalid_argument(
        "output '" + o.name +
        "' holds NaN or infinite values, which JSON cannot carry: request it with "
        "parameters.binary_data: true");
  }
  return Status::ok();
}

}  // namespace

std::string json_string(std::string_view text) {
  return json::serialize(json::string_view(text.data(), text.size()));
}

std::string error_body(std::string_view message) {
  return "{\"error\":" + json_string(message) + "}";
}

Result<EncodedResponse> encode_infer_response(std::string_view model_name,
                                              std::string_view model_version, std::string_view id,
                                              const std::vector<ResponseOutput>& outputs) {
  EncodedResponse response;
  std::string& out = response.body;
  out += "{\"model_name\":" + json_string(model_name);
  if (!model_version.empty()) out += ",\"model_version\":" + json_string(model_version);
  if (!id.empty()) out += ",\"id\":" + json_string(id);
  out += ",\"outputs\":[";
  bool any_binary = false;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ResponseOutput& o = outputs[i];
    const std::string_view datatype = v2_datatype(o.tensor.dtype());
    if (datatype.empty()) {
      return unsupported("output '" + o.name + "' is " + std::string(dtype_name(o.tensor.dtype())) +
                         ", which the v2 protocol cannot carry");
    }
    if (i) out += ',';
    out += "{\"name\":" + json_string(o.name) + ",\"datatype\":\"" + std::string(datatype) +
           "\",\"shape\":[";
    append_elements(out, o.tensor.shape().data(), static_cast<int64_t>(o.tensor.shape().size()));
    out += ']';
    if (o.binary) {
      any_binary = true;
      out +=
          ",\"parameters\":{\"binary_data_size\":" + std::to_string(o.tensor.size_bytes()) + "}}";
      continue;
    }
    out += ",\"data\":[";
    INFER_RETURN_IF_ERROR(append_data(out, o));
    out += "]}";
  }
  out += "]}";
  if (any_binary) {
    response.header_length = out.size();
    for (const ResponseOutput& o : outputs) {
      if (o.binary) out.append(static_cast<const char*>(o.tensor.data()), o.tensor.size_bytes());
    }
  }
  return response;
}

}  // namespace infer::serve
