// The ONNX node test suite (generated at test time by generate_node_tests.py with Debian's
// python3-onnx) run through the public C++ API on the cpu backend.
//
// Every tensor-only case is one GoogleTest test (OnnxNode.<case>). Each output is compared
// with ONNX's own expected output: floats within rtol 1e-3 / atol 1e-5 (NaN equals NaN,
// infinities must match), integers and bool exactly. Cases listed in
// expected_failures.txt (one "<case> <reason>" per line) must fail: a listed case that
// passes fails the test too, so the list can only shrink. The run ends with a summary
// line ("ONNX node tests: N passed, N failed ...") and writes one line per case to the
// report file.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "onnx/external_data.hpp"
#include "onnx/tensor_convert.hpp"
#include "infer_test_paths.hpp"

namespace fs = std::filesystem;

namespace infer::conformance {
namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-5;
// Optimized and unoptimized runs must agree more tightly than either agrees with ONNX's
// reference (which was computed in another library).
constexpr double kEquivalenceRtol = 1e-4;
constexpr double kEquivalenceAtol = 1e-5;
constexpr int kHighestLevel = 3;

struct Paths {
  std::string data_dir;       // generate_node_tests.py's OUT_DIR
  std::string expected_file;  // expected_failures.txt
  std::string report_file;
  std::string plugin_dir;
  // Backends in priority order (INFER_CONFORMANCE_BACKENDS, comma-separated): the suite
  // runs once on "cpu" and once on "vulkan,cpu", where the Vulkan plugin claims what it
  // can and the CPU plugin takes the rest.
  std::vector<std::string> backends = {"cpu"};
  // Whether to also check optimization level 0 against the highest level per case.
  bool equivalence = true;
};
Paths g_paths;

enum class Outcome { kPassed, kFailed, kExpectedFailure, kUnexpectedPass };

struct CaseResult {
  Outcome outcome;
  std::string detail;
};
std::mutex g_results_mutex;
std::map<std::string, CaseResult> g_results;

void record(const std::string& name, Outcome outcome, const std::string& detail) {
  std::lock_guard<std::mutex> lock(g_results_mutex);
  g_results[name] = {outcome, detail};
}

// ---- Reading ONNX's .pb tensors -------------------------------------------------------

// `declared` is the model's dtype for the tensor: onnx 1.12 stores bfloat16 test data as
// uint16 bit patterns (numpy has no bfloat16), which are bfloat16 values bit for bit.
Result<Tensor> read_tensor_pb(const fs::path& path, DataType declared, std::string* name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "cannot open " + path.string());
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in))
    return Status(StatusCode::kInvalidArgument, path.string() + " is not a TensorProto");
  *name = proto.name();
  onnx_io::ExternalData external(path.parent_path().string());
  auto data = onnx_io::convert_tensor(proto, path.filename().string(), external);
  if (!data.is_ok()) return data.status().with_context(path.string());
  const ir::TensorData& d = **data;
  DataType dtype = d.dtype();
  if (declared == DataType::kBFloat16 && dtype == DataType::kUInt16) dtype = DataType::kBFloat16;
  return Tensor::from_bytes(dtype, d.dims(), d.data(), d.size_bytes());
}

// input_0.pb, input_1.pb, ... in numeric order.
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

// ---- Comparison -------------------------------------------------------------------------

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Element i as double (floats) for the tolerance comparison.
double float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat32: return t.data_as<float>()[i];
    case DataType::kFloat64: return t.data_as<double>()[i];
    case DataType::kFloat16: return half_to_float(t.data_as<uint16_t>()[i]);
    case DataType::kBFloat16: {
      uint32_t bits = static_cast<uint32_t>(t.data_as<uint16_t>()[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return 0;
  }
}

std::string dn(DataType t) { return std::string(dtype_name(t)); }

bool is_float(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat64 || t == DataType::kFloat16 ||
         t == DataType::kBFloat16;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// "" when `got` matches `want`, else what differs.
std::string compare(const std::string& what, const Tensor& got, const Tensor& want,
                    double rtol = kRtol, double atol = kAtol) {
  if (got.dtype() != want.dtype())
    return what + ": dtype " + dn(got.dtype()) + ", expected " + dn(want.dtype());
  if (got.shape() != want.shape())
    return what + ": shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  const int64_t n = want.element_count();
  if (!is_float(want.dtype())) {
    // Integers and bool: bytewise equality is exact equality.
    if (got.size_bytes() != want.size_bytes() ||
        (n > 0 && std::memcmp(got.data(), want.data(), want.size_bytes()) != 0)) {
      const size_t es = want.size_bytes() / static_cast<size_t>(std::max<int64_t>(n, 1));
      for (int64_t i = 0; i < n; ++i)
        if (std::memcmp(static_cast<const char*>(got.data()) + i * es,
                        static_cast<const char*>(want.data()) + i * es, es) != 0)
          return what + ": element " + std::to_string(i) + " differs (exact comparison for " +
                 dn(want.dtype()) + ")";
      return what + ": bytes differ";
    }
    return "";
  }
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double g = float_at(got, i), w = float_at(want, i);
    bool ok;
    if (std::isnan(w))
      ok = std::isnan(g);
    else if (std::isinf(w))
      ok = g == w;
    else
      ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  std::ostringstream ss;
  ss.precision(9);
  ss << what << ": " << bad << " of " << n << " elements differ; first at " << first << ": got "
     << float_at(got, first) << ", expected " << float_at(want, first);
  return ss.str();
}

// ---- One case -----------------------------------------------------------------------------

// The op type of the model's first random operator without a `seed` attribute, or "".
// Such an operator's outputs differ from run to run by design, so no engine reproduces
// the expected values ONNX drew once with numpy.
std::string unseeded_random_op(const fs::path& model_path) {
  static const char* kRandom[] = {"Bernoulli", "Multinomial", "RandomNormal",
                                  "RandomNormalLike", "RandomUniform", "RandomUniformLike"};
  onnx::ModelProto model;
  std::ifstream in(model_path, std::ios::binary);
  if (!model.ParseFromIstream(&in)) return "";
  for (const auto& node : model.graph().node()) {
    bool seeded = false;
    for (const auto& a : node.attribute()) seeded = seeded || a.name() == "seed";
    for (const char* op : kRandom)
      if (node.op_type() == op && !seeded) return op;
  }
  return "";
}

// What can be checked of an unseeded random operator's output: its dtype and shape, and
// for Bernoulli that every draw is 0 or 1. "" when it holds.
std::string check_random(const std::string& what, const std::string& op, const Tensor& got,
                         const Tensor& want) {
  if (got.dtype() != want.dtype())
    return what + ": dtype " + dn(got.dtype()) + ", expected " + dn(want.dtype());
  if (got.shape() != want.shape())
    return what + ": shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  if (op == "Bernoulli" && is_float(got.dtype()))
    for (int64_t i = 0; i < got.element_count(); ++i) {
      const double v = float_at(got, i);
      if (v != 0.0 && v != 1.0)
        return what + ": element " + std::to_string(i) + " is " + std::to_string(v) +
               ", a Bernoulli draw must be 0 or 1";
    }
  return "";
}

// Runs every test_data_set_N of the case at optimization `level`; "" on success, else the
// first problem. Each set's outputs are compared with ONNX's expected outputs when
// `check_expected` (for a model with an unseeded random operator, only what check_random
// can check), and appended to `produced` when it is given.
std::string run_case(const fs::path& dir, int level, bool check_expected = true,
                     std::vector<std::vector<Tensor>>* produced = nullptr) {
  SessionOptions options;
  options.backends = g_paths.backends;
  options.plugin_dirs = {g_paths.plugin_dir};
  options.threads = 2;
  options.optimization_level = level;
  options.log_level = LogLevel::kError;
  auto session = Session::create((dir / "model.onnx").string(), options);
  if (!session.is_ok()) return "create: " + session.status().message();
  const auto& declared_inputs = (*session)->inputs();
  const auto& declared_outputs = (*session)->outputs();
  const std::string random_op = check_expected ? unseeded_random_op(dir / "model.onnx") : "";

  int sets = 0;
  for (int s = 0;; ++s) {
    const fs::path set_dir = dir / ("test_data_set_" + std::to_string(s));
    if (!fs::is_directory(set_dir)) break;
    ++sets;
    std::vector<NamedTensor> inputs;
    const auto input_files = numbered_files(set_dir, "input_");
    for (size_t i = 0; i < input_files.size(); ++i) {
      std::string name;
      const DataType declared =
          i < declared_inputs.size() ? declared_inputs[i].dtype : DataType::kUndefined;
      auto t = read_tensor_pb(input_files[i], declared, &name);
      if (!t.is_ok()) return t.status().message();
      if (name.empty()) {
        if (i >= declared_inputs.size())
          return input_files[i].string() + " has no name and the model declares only " +
                 std::to_string(declared_inputs.size()) + " inputs";
        name = declared_inputs[i].name;
      }
      inputs.push_back({name, std::move(*t)});
    }
    auto outputs = (*session)->run(inputs);
    if (!outputs.is_ok()) return "run: " + outputs.status().message();
    if (produced != nullptr) {
      produced->emplace_back();
      for (auto& o : *outputs) produced->back().push_back(o.tensor);
    }
    if (!check_expected) continue;
    const auto output_files = numbered_files(set_dir, "output_");
    if (output_files.size() != outputs->size())
      return "the model returned " + std::to_string(outputs->size()) + " outputs, the test has " +
             std::to_string(output_files.size());
    for (size_t i = 0; i < output_files.size(); ++i) {
      std::string name;
      auto want = read_tensor_pb(output_files[i], declared_outputs[i].dtype, &name);
      if (!want.is_ok()) return want.status().message();
      const std::string what = "output '" + declared_outputs[i].name + "'";
      std::string diff = random_op.empty() ? compare(what, (*outputs)[i].tensor, *want)
                                           : check_random(what, random_op, (*outputs)[i].tensor, *want);
      if (!diff.empty()) return diff;
    }
  }
  if (sets == 0) return "no test_data_set_N folder in " + dir.string();
  return "";
}

class NodeCase : public ::testing::Test {
 public:
  NodeCase(std::string name, std::string expected_reason)
      : name_(std::move(name)), expected_reason_(std::move(expected_reason)) {}
  void TestBody() override {
    const std::string problem =
        run_case(fs::path(g_paths.data_dir) / "node" / name_, kHighestLevel);
    if (expected_reason_.empty()) {
      record(name_, problem.empty() ? Outcome::kPassed : Outcome::kFailed, problem);
      EXPECT_EQ(problem, "");
    } else if (problem.empty()) {
      record(name_, Outcome::kUnexpectedPass, expected_reason_);
      ADD_FAILURE() << name_ << " passes but is listed in expected_failures.txt ("
                    << expected_reason_ << "): remove it from the list";
    } else {
      record(name_, Outcome::kExpectedFailure, problem);
      std::cout << "[ expected failure: " << expected_reason_ << " ] " << problem << "\n";
    }
  }

 private:
  std::string name_, expected_reason_;
};

// The same case at level 0 and at the highest level: both fail, or both succeed with the
// same outputs (kEquivalence* tolerances). Outputs of unseeded random operators differ from
// run to run by design; for models with one, only dtypes and shapes must agree.
std::atomic<int> g_equivalent{0}, g_not_equivalent{0};

class EquivalenceCase : public ::testing::Test {
 public:
  explicit EquivalenceCase(std::string name) : name_(std::move(name)) {}
  void TearDown() override { (HasFailure() ? g_not_equivalent : g_equivalent)++; }
  void TestBody() override {
    const fs::path dir = fs::path(g_paths.data_dir) / "node" / name_;
    std::vector<std::vector<Tensor>> plain, optimized;
    const std::string p0 = run_case(dir, 0, false, &plain);
    const std::string p3 = run_case(dir, kHighestLevel, false, &optimized);
    ASSERT_EQ(p0.empty(), p3.empty()) << "level 0: " << (p0.empty() ? "ok" : p0)
                                      << "\nlevel " << kHighestLevel << ": "
                                      << (p3.empty() ? "ok" : p3);
    ASSERT_EQ(plain.size(), optimized.size());
    const bool random = !unseeded_random_op(dir / "model.onnx").empty();
    for (size_t set = 0; set < plain.size(); ++set) {
      ASSERT_EQ(plain[set].size(), optimized[set].size());
      for (size_t i = 0; i < plain[set].size(); ++i) {
        const Tensor& a = optimized[set][i];
        const Tensor& b = plain[set][i];
        const std::string what = "set " + std::to_string(set) + " output " + std::to_string(i);
        if (random) {
          EXPECT_EQ(a.dtype(), b.dtype()) << what;
          EXPECT_EQ(a.shape(), b.shape()) << what;
        } else {
          EXPECT_EQ(compare(what, a, b, kEquivalenceRtol, kEquivalenceAtol), "");
        }
      }
    }
  }

 private:
  std::string name_;
};

// ---- Suite setup and summary --------------------------------------------------------------

struct Manifest {
  std::vector<std::string> cases;  // tensor-only cases
  size_t excluded = 0;
};

Result<Manifest> read_manifest(const std::string& data_dir) {
  const std::string path = data_dir + "/cases.txt";
  std::ifstream in(path);
  if (!in)
    return Status(StatusCode::kNotFound,
                  path + " is missing: run tests/conformance/generate_node_tests.py " + data_dir +
                      " (ctest runs it as the conformance.generate_node_tests fixture)");
  Manifest m;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, kind;
    if (!(ls >> name >> kind)) continue;
    if (kind == "tensor")
      m.cases.push_back(name);
    else
      ++m.excluded;
  }
  return m;
}

// expected_failures.txt: "<case> <reason...>" per line; '#' starts a comment.
Result<std::map<std::string, std::string>> read_expected(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kNotFound, "cannot open " + path);
  std::map<std::string, std::string> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, reason;
    ls >> name;
    std::getline(ls, reason);
    reason.erase(0, reason.find_first_not_of(" \t"));
    if (name.empty()) continue;
    if (reason.empty())
      return Status(StatusCode::kInvalidArgument, path + ":" + std::to_string(line_no) +
                                                      ": '" + name + "' has no reason");
    if (!out.emplace(name, reason).second)
      return Status(StatusCode::kInvalidArgument,
                    path + ":" + std::to_string(line_no) + ": '" + name + "' is listed twice");
  }
  return out;
}

int summarize(const Manifest& m) {
  size_t passed = 0, failed = 0, expected = 0, unexpected_pass = 0;
  std::ofstream report(g_paths.report_file);
  for (const auto& [name, r] : g_results) {
    const char* word = "";
    switch (r.outcome) {
      case Outcome::kPassed: ++passed, word = "PASS"; break;
      case Outcome::kFailed: ++failed, word = "FAIL"; break;
      case Outcome::kExpectedFailure: ++expected, word = "XFAIL"; break;
      case Outcome::kUnexpectedPass: ++unexpected_pass, word = "XPASS"; break;
    }
    report << word << " " << name << (r.detail.empty() ? "" : "  " + r.detail) << "\n";
  }
  std::ostringstream line;
  std::string backends;
  for (const std::string& b : g_paths.backends) backends += (backends.empty() ? "" : ",") + b;
  line << "ONNX node tests on " << backends << ": " << passed + unexpected_pass << " passed, " << failed + expected
       << " failed (" << expected << " listed in expected_failures.txt) of " << g_results.size()
       << " run; " << m.cases.size() << " tensor-only cases, " << m.excluded
       << " sequence/optional/string cases excluded";
  report << line.str() << "\n";
  std::cout << "\n" << line.str() << "\nper-case report: " << g_paths.report_file << "\n";
  if (unexpected_pass > 0)
    std::cout << unexpected_pass << " listed case(s) now pass: remove them from the list\n";
  return 0;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace
}  // namespace infer::conformance

int main(int argc, char** argv) {
  using namespace infer::conformance;
  ::testing::InitGoogleTest(&argc, argv);
  g_paths.data_dir = env_or("INFER_CONFORMANCE_DATA", INFER_CONFORMANCE_DATA);
  g_paths.expected_file = env_or("INFER_CONFORMANCE_EXPECTED",
                                  std::string(INFER_SOURCE_DIR) + "/tests/conformance/expected_failures.txt");
  g_paths.report_file = env_or("INFER_CONFORMANCE_REPORT", g_paths.data_dir + "/report.txt");
  g_paths.plugin_dir = env_or("INFER_CONFORMANCE_PLUGIN_DIR", INFER_PLUGIN_DIR);
  g_paths.backends = split_list(env_or("INFER_CONFORMANCE_BACKENDS", "cpu"));
  g_paths.equivalence = env_or("INFER_CONFORMANCE_EQUIVALENCE", "1") != "0";

  auto manifest = read_manifest(g_paths.data_dir);
  auto expected = read_expected(g_paths.expected_file);
  if (!manifest.is_ok() || !expected.is_ok()) {
    const std::string why =
        !manifest.is_ok() ? manifest.status().message() : expected.status().message();
    ::testing::RegisterTest("OnnxNode", "Setup", nullptr, nullptr, __FILE__, __LINE__,
                            [why]() -> ::testing::Test* {
                              struct Fail : ::testing::Test {
                                std::string why;
                                void TestBody() override { FAIL() << why; }
                              };
                              auto* t = new Fail;
                              t->why = why;
                              return t;
                            });
    return RUN_ALL_TESTS();
  }
  // Every listed case must exist, or a renamed case would hide in the list forever.
  std::vector<std::string> stale;
  for (const auto& [name, reason] : *expected)
    if (std::find(manifest->cases.begin(), manifest->cases.end(), name) == manifest->cases.end())
      stale.push_back(name);
  if (!stale.empty()) {
    std::string names;
    for (const auto& s : stale) names += " " + s;
    ::testing::RegisterTest("OnnxNode", "ExpectedFailuresAreCases", nullptr, nullptr, __FILE__,
                            __LINE__, [names]() -> ::testing::Test* {
                              struct Fail : ::testing::Test {
                                std::string names;
                                void TestBody() override {
                                  FAIL() << "expected_failures.txt lists cases the suite does "
                                            "not have (or that are not tensor-only):"
                                         << names;
                                }
                              };
                              auto* t = new Fail;
                              t->names = names;
                              return t;
                            });
  }
  for (const std::string& name : manifest->cases) {
    auto it = expected->find(name);
    const std::string reason = it == expected->end() ? "" : it->second;
    ::testing::RegisterTest("OnnxNode", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [name, reason]() -> ::testing::Test* {
                              return new NodeCase(name, reason);
                            });
    if (g_paths.equivalence)
      ::testing::RegisterTest("OnnxNodeOptimized", name.c_str(), nullptr, nullptr, __FILE__,
                              __LINE__,
                              [name]() -> ::testing::Test* { return new EquivalenceCase(name); });
  }
  const int rc = RUN_ALL_TESTS();
  summarize(*manifest);
  std::cout << "Optimization level 0 vs " << kHighestLevel << ": " << g_equivalent.load()
            << " cases agree, " << g_not_equivalent.load() << " differ\n";
  return rc;
}
