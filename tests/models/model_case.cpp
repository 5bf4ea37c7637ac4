#include "model_case.hpp"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <vector>

#include "infer/infer.hpp"
#include "mini_json.hpp"
#include "npy_file.hpp"
#include "infer_test_paths.hpp"

namespace infer::models_test {
namespace {

using cli::testing::JsonParser;
using cli::testing::JsonValue;

struct OutputSpec {
  std::string name;
  std::string file;
  double rtol = 0;
  double atol = 0;
};

struct RunSpec {
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  std::vector<OutputSpec> outputs;
};

struct Manifest {
  std::string model;
  std::string source;
  std::vector<RunSpec> runs;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Parses manifest.json; the error says which field is missing, so a manifest that
// does not match this reader fails with the reason instead of a crash.
std::optional<Manifest> parse_manifest(const std::string& path, std::string& error) {
  const std::string text = read_text(path);
  if (text.empty()) {
    error = "cannot read '" + path +
            "'. The models cache is filled by the ctest fixture 'models_export' " +
            "(ctest -R models_export), or by hand: /usr/bin/python3 tools/models/export_models.py "
            "--out " +
            cache_dir();
    return std::nullopt;
  }
  const std::optional<JsonValue> json = JsonParser::parse(text);
  if (!json || !json->is_object()) {
    error = path + ": not a JSON object";
    return std::nullopt;
  }
  auto need = [&](const JsonValue& object, const char* key,
                  JsonValue::Type type) -> const JsonValue* {
    const JsonValue* v = object.get(key);
    if (v == nullptr || v->type != type) {
      if (error.empty()) error = path + ": field '" + key + "' is missing or has the wrong type";
      return nullptr;
    }
    return v;
  };
  Manifest m;
  const JsonValue* model = need(*json, "model", JsonValue::Type::kString);
  const JsonValue* source = need(*json, "source", JsonValue::Type::kString);
  const JsonValue* rtol = need(*json, "rtol", JsonValue::Type::kNumber);
  const JsonValue* atol = need(*json, "atol", JsonValue::Type::kNumber);
  const JsonValue* runs = need(*json, "runs", JsonValue::Type::kArray);
  if (!error.empty()) return std::nullopt;
  m.model = model->string;
  m.source = source->string;
  for (const JsonValue& run : runs->array) {
    RunSpec spec;
    const JsonValue* inputs = need(run, "inputs", JsonValue::Type::kArray);
    const JsonValue* outputs = need(run, "outputs", JsonValue::Type::kArray);
    if (!error.empty()) return std::nullopt;
    for (const JsonValue& in : inputs->array) {
      const JsonValue* name = need(in, "name", JsonValue::Type::kString);
      const JsonValue* file = need(in, "file", JsonValue::Type::kString);
      if (!error.empty()) return std::nullopt;
      spec.inputs.emplace_back(name->string, file->string);
    }
    for (const JsonValue& out : outputs->array) {
      const JsonValue* name = need(out, "name", JsonValue::Type::kString);
      const JsonValue* file = need(out, "file", JsonValue::Type::kString);
      if (!error.empty()) return std::nullopt;
      const JsonValue* out_rtol = out.get("rtol");
      const JsonValue* out_atol = out.get("atol");
      spec.outputs.push_back({name->string, file->string,
                              out_rtol ? out_rtol->number : rtol->number,
                              out_atol ? out_atol->number : atol->number});
    }
    m.runs.push_back(std::move(spec));
  }
  if (m.runs.empty()) {
    error = path + ": no runs";
    return std::nullopt;
  }
  return m;
}

bool is_floating(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16;
}

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32:
      return t.data_as<float>()[i];
    case DataType::kFloat64:
      return t.data_as<double>()[i];
    case DataType::kFloat16:
      return half_to_double(t.data_as<uint16_t>()[i]);
    default:
      return 0;
  }
}

std::string element_text(const Tensor& t, int64_t i) {
  std::ostringstream s;
  s.precision(9);
  if (is_floating(t.dtype())) {
    s << element_as_double(t, i);
    return s.str();
  }
  // Integers and bool: the raw little-endian value, sign-extended for signed types.
  const size_t size = dtype_size(t.dtype());
  uint64_t raw = 0;
  std::memcpy(&raw, static_cast<const uint8_t*>(t.data()) + static_cast<size_t>(i) * size, size);
  const bool is_signed = t.dtype() == DataType::kInt8 || t.dtype() == DataType::kInt16 ||
                         t.dtype() == DataType::kInt32 || t.dtype() == DataType::kInt64;
  if (is_signed && size < 8 && (raw >> (size * 8 - 1)) != 0) raw |= ~uint64_t{0} << (size * 8);
  if (is_signed) {
    s << static_cast<int64_t>(raw);
  } else {
    s << raw;
  }
  return s.str();
}

struct Comparison {
  std::string difference;  // "" when the output matches
  double max_abs = 0;      // largest |got - want| (floating outputs)
  double used = 0;  // largest |got - want| / (atol + rtol * |want|): the share of the bound used
};

// Compares one output: what differs (the worst element and how many are out of
// tolerance), and how close a matching output came to the bound.
Comparison compare(const Tensor& got, const Tensor& want, double rtol, double atol) {
  Comparison c;
  if (got.dtype() != want.dtype()) {
    c.difference = std::string("dtype ") + std::string(dtype_name(got.dtype())) + ", expected " +
                   std::string(dtype_name(want.dtype()));
    return c;
  }
  if (got.shape() != want.shape()) {
    c.difference = "shape " + shape_text(got.shape()) + ", expected " + shape_text(want.shape());
    return c;
  }
  const int64_t n = want.element_count();
  int64_t bad = 0;
  int64_t worst = -1;
  double worst_excess = -1;
  double& max_abs = c.max_abs;
  if (is_floating(want.dtype())) {
    for (int64_t i = 0; i < n; ++i) {
      const double g = element_as_double(got, i);
      const double w = element_as_double(want, i);
      if (std::isnan(w) || std::isnan(g)) {
        if (std::isnan(w) != std::isnan(g)) {
          ++bad;
          if (worst_excess < INFINITY) worst = i, worst_excess = INFINITY;
        }
        continue;
      }
      const double diff = std::fabs(g - w);
      const double bound = atol + rtol * std::fabs(w);
      max_abs = std::max(max_abs, diff);
      if (bound > 0) c.used = std::max(c.used, diff / bound);
      const double excess = diff - bound;
      if (excess > 0 || (std::isinf(w) && g != w)) {
        ++bad;
        if (excess > worst_excess) worst = i, worst_excess = excess;
      }
    }
  } else {
    const size_t size = dtype_size(want.dtype());
    const auto* g = static_cast<const uint8_t*>(got.data());
    const auto* w = static_cast<const uint8_t*>(want.data());
    for (int64_t i = 0; i < n; ++i) {
      if (std::memcmp(g + static_cast<size_t>(i) * size, w + static_cast<size_t>(i) * size, size) !=
          0) {
        ++bad;
        if (worst < 0) worst = i;
      }
    }
  }
  if (bad == 0) return c;
  std::ostringstream s;
  s << bad << " of " << n << " elements differ";
  if (is_floating(want.dtype()))
    s << " by more than atol " << atol << " + rtol " << rtol << " * |expected|";
  else
    s << " (must be equal)";
  s << "; worst at " << index_text(want.shape(), worst) << ": got " << element_text(got, worst)
    << ", expected " << element_text(want, worst);
  if (is_floating(want.dtype())) s << "; max |diff| " << max_abs;
  c.difference = s.str();
  return c;
}

void check_run(Session& session, const std::string& folder, const RunSpec& run, size_t run_index) {
  const std::string where = "run " + std::to_string(run_index);
  std::vector<NamedTensor> inputs;
  for (const auto& [name, file] : run.inputs) {
    Result<Tensor> tensor = read_npy(folder + "/" + file);
    ASSERT_TRUE(tensor.is_ok()) << where << ": " << tensor.status().message();
    inputs.push_back({name, std::move(tensor).value()});
  }
  const auto started = std::chrono::steady_clock::now();
  Result<std::vector<NamedTensor>> outputs = session.run(inputs);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(outputs.is_ok()) << where << ": run failed: " << outputs.status().message();
  std::cout << "[          ] " << where << ": " << ms << " ms\n";

  ASSERT_EQ(outputs->size(), run.outputs.size()) << where << ": number of outputs";
  for (size_t o = 0; o < run.outputs.size(); ++o) {
    const OutputSpec& spec = run.outputs[o];
    const NamedTensor& got = (*outputs)[o];
    EXPECT_EQ(got.name, spec.name)
        << where << ": output " << o << " is not the one the model declares there";
    Result<Tensor> want = read_npy(folder + "/" + spec.file);
    ASSERT_TRUE(want.is_ok()) << where << ": " << want.status().message();
    const Comparison c = compare(got.tensor, *want, spec.rtol, spec.atol);
    EXPECT_EQ(c.difference, "") << where << ", output '" << spec.name << "' (" << spec.file << ")";
    if (c.difference.empty() && is_floating(want->dtype()))
      std::cout << "[          ]   " << spec.name << ": max |diff| " << c.max_abs << ", "
                << 100 * c.used << "% of the tolerance\n";
  }
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// The multi-dimensional index of flat element `flat`, for messages: "[0,3,17]".
std::string index_text(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return shape_text(index);
}

// IEEE half to double, written out here so the comparison does not rely on infer's own
// conversion code.
double half_to_double(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

std::string cache_dir() { return INFER_MODELS_CACHE_DIR; }

namespace {

Result<std::unique_ptr<Session>> open_at_level(const std::string& model_path, int level,
                                               const std::string& dump_path = "") {
  SessionOptions options;
  options.backends = {"cpu"};
  options.plugin_dirs = {INFER_PLUGIN_DIR};
  options.optimization_level = level;
  options.dump_graph_path = dump_path;
  return Session::create(model_path, options);
}

Result<std::vector<NamedTensor>> run_inputs(Session& session, const std::string& folder,
                                            const RunSpec& run) {
  std::vector<NamedTensor> inputs;
  for (const auto& [name, file] : run.inputs) {
    INFER_ASSIGN_OR_RETURN(Tensor tensor, read_npy(folder + "/" + file));
    inputs.push_back({name, std::move(tensor)});
  }
  return session.run(inputs);
}

}  // namespace

void run_model_equivalence(const std::string& name, double rtol, double atol) {
  const std::string folder = cache_dir() + "/" + name;
  std::string error;
  const std::optional<Manifest> manifest = parse_manifest(folder + "/manifest.json", error);
  ASSERT_TRUE(manifest.has_value()) << error;
  const std::string model = folder + "/" + manifest->model;
  Result<std::unique_ptr<Session>> plain = open_at_level(model, 0);
  ASSERT_TRUE(plain.is_ok()) << name << " at level 0: " << plain.status().message();
  Result<std::unique_ptr<Session>> optimized = open_at_level(model, 3);
  ASSERT_TRUE(optimized.is_ok()) << name << " at level 3: " << optimized.status().message();
  for (size_t r = 0; r < manifest->runs.size(); ++r) {
    const std::string where = name + " run " + std::to_string(r);
    Result<std::vector<NamedTensor>> a = run_inputs(**plain, folder, manifest->runs[r]);
    ASSERT_TRUE(a.is_ok()) << where << " at level 0: " << a.status().message();
    Result<std::vector<NamedTensor>> b = run_inputs(**optimized, folder, manifest->runs[r]);
    ASSERT_TRUE(b.is_ok()) << where << " at level 3: " << b.status().message();
    ASSERT_EQ(a->size(), b->size()) << where;
    for (size_t o = 0; o < a->size(); ++o) {
      const Comparison c = compare((*b)[o].tensor, (*a)[o].tensor, rtol, atol);
      EXPECT_EQ(c.difference, "") << where << ", output '" << (*a)[o].name
                                  << "' at level 3 vs level 0";
      if (c.difference.empty() && is_floating((*a)[o].tensor.dtype()))
        std::cout << "[          ] " << where << " " << (*a)[o].name << ": max |diff| "
                  << c.max_abs << " between levels\n";
    }
  }
}

OptimizedGraph optimized_graph(const std::string& name) {
  OptimizedGraph g;
  const std::string folder = cache_dir() + "/" + name;
  std::string error;
  const std::optional<Manifest> manifest = parse_manifest(folder + "/manifest.json", error);
  if (!manifest) {
    g.error = error;
    return g;
  }
  const std::string dump =
      (std::filesystem::temp_directory_path() / ("infer_optimized_" + name + "_" +
                                                 std::to_string(::getpid()) + ".onnx"))
          .string();
  Result<std::unique_ptr<Session>> session = open_at_level(folder + "/" + manifest->model, 3, dump);
  if (!session.is_ok()) {
    g.error = session.status().message();
    return g;
  }
  g.loaded_nodes = (*session)->plan().nodes_loaded;
  g.optimizer_ms = (*session)->plan().optimizer_ms;
  {
    onnx::ModelProto original;
    std::ifstream in(folder + "/" + manifest->model, std::ios::binary);
    if (in && original.ParseFromIstream(&in))
      for (const onnx::NodeProto& n : original.graph().node()) ++g.loaded_ops[n.op_type()];
  }
  onnx::ModelProto proto;
  {
    std::ifstream in(dump, std::ios::binary);
    if (!in || !proto.ParseFromIstream(&in)) g.error = "cannot read the dumped graph " + dump;
  }
  std::filesystem::remove(dump);
  if (!g.error.empty()) return g;
  for (const onnx::NodeProto& n : proto.graph().node()) {
    ++g.nodes;
    ++g.ops[(n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + ".") + n.op_type()];
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == "activation") ++g.activations[a.s()];
  }
  return g;
}

void run_model_case(const std::string& name, const std::vector<std::string>& backends,
                    std::unique_ptr<Session>* session_out) {
  const std::string folder = cache_dir() + "/" + name;
  std::string error;
  const std::optional<Manifest> manifest = parse_manifest(folder + "/manifest.json", error);
  ASSERT_TRUE(manifest.has_value()) << error;
  std::cout << "[          ] " << name << ": " << manifest->source << "\n";

  SessionOptions options;
  options.backends = backends;
  options.plugin_dirs = {INFER_PLUGIN_DIR};
  const auto started = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Session>> session =
      Session::create(folder + "/" + manifest->model, options);
  ASSERT_TRUE(session.is_ok()) << name
                               << ": Session::create failed: " << session.status().message();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[          ] session created in " << ms << " ms\n";

  // The declared inputs and outputs must be the ones the manifest names, in that order
  // (initializers listed as inputs by old files are not inputs a caller must give).
  const RunSpec& first = manifest->runs.front();
  std::vector<std::string> declared_inputs, manifest_inputs, declared_outputs, manifest_outputs;
  for (const TensorInfo& info : (*session)->inputs()) declared_inputs.push_back(info.name);
  for (const auto& [input_name, file] : first.inputs) manifest_inputs.push_back(input_name);
  for (const TensorInfo& info : (*session)->outputs()) declared_outputs.push_back(info.name);
  for (const OutputSpec& spec : first.outputs) manifest_outputs.push_back(spec.name);
  EXPECT_EQ(declared_inputs, manifest_inputs) << name << ": Session::inputs()";
  EXPECT_EQ(declared_outputs, manifest_outputs) << name << ": Session::outputs()";

  for (size_t r = 0; r < manifest->runs.size(); ++r) {
    SCOPED_TRACE(name + " run " + std::to_string(r));
    check_run(**session, folder, manifest->runs[r], r);
  }
  if (session_out) *session_out = std::move(*session);
}

}  // namespace infer::models_test
