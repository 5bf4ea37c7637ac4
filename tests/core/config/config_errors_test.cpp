// Invalid deployment documents: each rule of the schema fails with InvalidArgument and a
// message naming the file, the 1-based line and the key path, and saying what was
// expected. Messages are compared whole; line numbers are counted by hand.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "config/deployment_config.hpp"

namespace infer::config {
namespace {

struct ErrorCase {
  const char* name;  // the test's name in the report
  const char* yaml;
  const char* message;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

const ErrorCase kErrorCases[] = {
    // Unknown keys, at every level that has a fixed set of keys.
    {"UnknownTopLevelKey", "model: m.onnx\nthreads: 2\noptimisation:\n  level: 1\n",
     "x.yaml:3: unknown key 'optimisation' (expected one of: model, backends, threads, "
     "optimization, precision, placement, "
     "plugins, strict, inputs, micro_batches, trace, partitioner, name, version, instances, "
     "server, batching)"},
    {"UnknownOptimizationKey", "optimization:\n  level: 1\n  disabled: [cse]\n",
     "x.yaml:3: unknown key 'optimization.disabled' (expected one of: level, disabled_passes)"},
    {"UnknownBackendKey", "backends:\n  - cpu\n  - name: example\n    option:\n      a: 1\n",
     "x.yaml:4: unknown key 'backends[1].option' (expected one of: name, options, "
     "memory_budget_mb)"},
    {"UnknownInputKey", "inputs:\n  image:\n    path: a.npy\n",
     "x.yaml:3: unknown key 'inputs.image.path' (expected one of: file, shape)"},
    {"UnknownPartitionerKey", "partitioner:\n  cost_model: false\n  min_island: 2\n",
     "x.yaml:3: unknown key 'partitioner.min_island' (expected one of: cost_model, "
     "min_island_nodes, "
     "assumed_symbolic_dim)"},
    {"UnknownPluginsKey", "strict: true\nplugins:\n  paths: [a]\n",
     "x.yaml:3: unknown key 'plugins.paths' (expected one of: search_paths)"},

    // Keys given twice: yaml-cpp would keep the first silently.
    {"DuplicateTopLevelKey", "threads: 2\nmodel: m.onnx\nthreads: 3\n",
     "x.yaml:3: duplicate key 'threads' (first given on line 1)"},
    {"DuplicatePin", "placement:\n  conv1: cpu\n  conv1: example\n",
     "x.yaml:3: duplicate key 'placement.conv1' (first given on line 2)"},
    {"KeyThatIsNotAName", "? [a, b]\n: 1\n",
     "x.yaml:1: keys of the top level must be non-empty names, got a list"},

    // The top level.
    {"TopLevelList", "- cpu\n", "x.yaml:1: the top level must be a map, got a list"},
    {"TopLevelScalar", "hello\n", "x.yaml:1: the top level must be a map, got 'hello'"},
    {"SecondDocument", "threads: 2\n---\nthreads: 3\n",
     "x.yaml:3: found a second YAML document; a deployment file holds exactly one"},
    // yaml-cpp 0.7's LoadAll never returned on a stray ',' (tests/fuzz found it).
    {"StrayCommaAtTheStart", ",\n",
     "x.yaml:1: YAML syntax error: unexpected ',' (a ',' outside [] or {}?)"},
    {"StrayCommaAfterSpaces", "  ,model: m.onnx\n",
     "x.yaml:1: YAML syntax error: unexpected ',' (a ',' outside [] or {}?)"},

    // model
    {"ModelList", "model: [a, b]\n", "x.yaml:1: 'model' must be a non-empty string, got a list"},
    {"ModelEmpty", "threads: 1\nmodel: \"\"\n",
     "x.yaml:2: 'model' must be a non-empty string, got \"\""},
    {"ModelWithoutValue", "model:\nthreads: 1\n",
     "x.yaml:1: 'model' must be a non-empty string, got nothing"},

    // threads
    {"ThreadsWord", "model: m.onnx\nthreads: two\n",
     "x.yaml:2: 'threads' must be an integer >= 1, got 'two'"},
    {"ThreadsZero", "threads: 0\n", "x.yaml:1: 'threads' must be an integer >= 1, got '0'"},
    {"ThreadsQuoted", "threads: \"2\"\n", "x.yaml:1: 'threads' must be an integer >= 1, got \"2\""},
    {"ThreadsFraction", "threads: 1.5\n", "x.yaml:1: 'threads' must be an integer >= 1, got '1.5'"},
    {"ThreadsHex", "threads: 0x2\n", "x.yaml:1: 'threads' must be an integer >= 1, got '0x2'"},
    {"ThreadsTrailingText", "threads: 2x\n",
     "x.yaml:1: 'threads' must be an integer >= 1, got '2x'"},
    {"ThreadsTooLarge", "threads: 99999999999\n",
     "x.yaml:1: 'threads' must be an integer >= 1, got '99999999999' (too large)"},
    {"ThreadsBeyondInt64", "threads: 99999999999999999999999\n",
     "x.yaml:1: 'threads' must be an integer >= 1, got '99999999999999999999999' (too large)"},
    // A value written as nothing is located at its key, not at the next line.
    {"ThreadsWithoutValue", "threads:\nstrict: true\n",
     "x.yaml:1: 'threads' must be an integer >= 1, got nothing"},
    {"ThreadsList", "threads: [2]\n", "x.yaml:1: 'threads' must be an integer >= 1, got a list"},

    // optimization
    {"LevelTooHigh", "optimization:\n  level: 7\n",
     "x.yaml:2: 'optimization.level' must be an integer from 0 to 3, got '7'"},
    {"LevelNegative", "optimization:\n  level: -1\n",
     "x.yaml:2: 'optimization.level' must be an integer from 0 to 3, got '-1'"},
    {"OptimizationScalar", "optimization: 2\n", "x.yaml:1: 'optimization' must be a map, got '2'"},
    {"DisabledPassesScalar", "optimization:\n  disabled_passes: cse\n",
     "x.yaml:2: 'optimization.disabled_passes' must be a list, got 'cse'"},
    {"DisabledPassNotString", "optimization:\n  disabled_passes:\n    - cse\n    - {a: 1}\n",
     "x.yaml:4: 'optimization.disabled_passes[1]' must be a non-empty string, got a map"},

    // strict
    {"StrictMaybe", "strict: maybe\n", "x.yaml:1: 'strict' must be true or false, got 'maybe'"},
    {"StrictYes", "strict: yes\n", "x.yaml:1: 'strict' must be true or false, got 'yes'"},
    {"StrictQuoted", "strict: \"true\"\n",
     "x.yaml:1: 'strict' must be true or false, got \"true\""},

    // backends
    {"BackendsScalar", "backends: cpu\n", "x.yaml:1: 'backends' must be a list, got 'cpu'"},
    {"BackendItemList", "backends:\n  - [cpu]\n",
     "x.yaml:2: 'backends[0]' must be a backend name or a map with keys name, options, "
     "memory_budget_mb, got a list"},
    {"DuplicateBackend",
     "backends:\n  - cpu\n  - name: example\n  - name: cpu\n    options: {a: 1}\n",
     "x.yaml:4: duplicate backend 'cpu' in 'backends' (first listed on line 2)"},
    {"UppercaseBackendName", "backends:\n  - cpu\n  - CUDA\n",
     "x.yaml:3: 'backends[1]' must be a backend name of lowercase letters, digits and '_' "
     "([a-z0-9_]+), got 'CUDA'"},
    {"DashInBackendName", "backends:\n  - name: my-gpu\n",
     "x.yaml:2: 'backends[0].name' must be a backend name of lowercase letters, digits and '_' "
     "([a-z0-9_]+), got "
     "'my-gpu'"},
    {"BackendWithoutName", "backends:\n  - cpu\n  - options: {a: 1}\n",
     "x.yaml:3: 'backends[1]' is missing the required key 'name'"},
    {"OptionsList", "backends:\n  - name: example\n    options: [a, b]\n",
     "x.yaml:3: 'backends[0].options' must be a map, got a list"},
    {"OptionValueList", "backends:\n  - name: example\n    options:\n      sizes: [1, 2]\n",
     "x.yaml:4: 'backends[0].options.sizes' must be a single value (number, string or boolean), "
     "got a list"},
    {"OptionValueMissing", "backends:\n  - name: example\n    options:\n      sizes:\n",
     "x.yaml:4: 'backends[0].options.sizes' must be a single value (number, string or boolean), "
     "got nothing"},

    // placement
    {"PlacementList", "placement: [conv1]\n", "x.yaml:1: 'placement' must be a map, got a list"},
    {"PinToBadBackendName", "placement:\n  conv1: GPU\n",
     "x.yaml:2: 'placement.conv1' must be a backend name of lowercase letters, digits and '_' "
     "([a-z0-9_]+), got "
     "'GPU'"},

    // trace and partitioner
    {"TraceList", "trace: [a.json]\n", "x.yaml:1: 'trace' must be a non-empty string, got a list"},
    {"PartitionerScalar", "partitioner: off\n", "x.yaml:1: 'partitioner' must be a map, got 'off'"},
    {"CostModelWord", "partitioner:\n  cost_model: off\n",
     "x.yaml:2: 'partitioner.cost_model' must be true or false, got 'off'"},
    {"MinIslandZero", "partitioner:\n  min_island_nodes: 0\n",
     "x.yaml:2: 'partitioner.min_island_nodes' must be an integer >= 1, got '0'"},
    {"AssumedDimNegative", "partitioner:\n  assumed_symbolic_dim: -4\n",
     "x.yaml:2: 'partitioner.assumed_symbolic_dim' must be an integer >= 1, got '-4'"},

    // plugins
    {"SearchPathsScalar", "plugins:\n  search_paths: lib\n",
     "x.yaml:2: 'plugins.search_paths' must be a list, got 'lib'"},
    {"SearchPathEmpty", "plugins:\n  search_paths: [a, '']\n",
     "x.yaml:2: 'plugins.search_paths[1]' must be a non-empty string, got \"\""},

    // inputs
    {"InputsList", "inputs: [image]\n", "x.yaml:1: 'inputs' must be a map, got a list"},
    {"InputSpecScalar", "inputs:\n  image: a.npy\n",
     "x.yaml:2: 'inputs.image' must be a map, got 'a.npy'"},
    {"InputSpecWithoutValue", "inputs:\n  image:\n",
     "x.yaml:2: 'inputs.image' must give 'file', 'shape' or both"},
    {"InputFileList", "inputs:\n  image:\n    file: [a.npy]\n",
     "x.yaml:3: 'inputs.image.file' must be a non-empty string, got a list"},
    {"ShapeNegative", "inputs:\n  image:\n    shape: [1, -1]\n",
     "x.yaml:3: 'inputs.image.shape[1]' must be an integer >= 0, got '-1'"},
    {"ShapeWord", "inputs:\n  image:\n    shape:\n      - 1\n      - batch\n",
     "x.yaml:5: 'inputs.image.shape[1]' must be an integer >= 0, got 'batch'"},
    {"ShapeEmpty", "inputs:\n  image:\n    shape: []\n",
     "x.yaml:3: 'inputs.image.shape' must list at least one dimension (leave it out to take the "
     "shape from the "
     "file)"},
    {"ShapeScalar", "inputs:\n  image:\n    shape: 8\n",
     "x.yaml:3: 'inputs.image.shape' must be a list, got '8'"},

    // infer-serve's keys
    {"NameWithSlash", "name: a/b\n",
     "x.yaml:1: 'name' must be a model name of letters, digits, '_', '-' and '.' (at most 128), "
     "got 'a/b'"},
    {"NameDotDot", "name: ..\n",
     "x.yaml:1: 'name' must be a model name of letters, digits, '_', '-' and '.' (at most 128), "
     "got '..'"},
    {"VersionZero", "version: 0\n", "x.yaml:1: 'version' must be an integer >= 1, got '0'"},
    {"InstancesTooMany", "instances: 5000\n",
     "x.yaml:1: 'instances' must be an integer from 1 to 1024, got '5000'"},
    {"UnknownServerKey", "server:\n  port: 80\n",
     "x.yaml:2: unknown key 'server.port' (expected one of: host, http_port, grpc_port, "
     "max_request_mb, "
     "idle_timeout_s, drain_timeout_s)"},
    {"PortTooLarge", "server:\n  http_port: 70000\n",
     "x.yaml:2: 'server.http_port' must be an integer from 1 to 65535, got '70000'"},
    {"UnknownBatchingKey", "batching:\n  max_batch: 8\n",
     "x.yaml:2: unknown key 'batching.max_batch' (expected one of: max_batch_size, "
     "preferred_batch_size, "
     "max_queue_delay_us, max_queue_size, timeout_us)"},
    {"PreferredNotAscending", "batching:\n  max_batch_size: 8\n  preferred_batch_size: [4, 2]\n",
     "x.yaml:3: 'batching.preferred_batch_size' must list sizes in ascending order, each once"},
    {"PreferredAboveMax", "batching:\n  max_batch_size: 8\n  preferred_batch_size: [4, 16]\n",
     "x.yaml:3: 'batching.preferred_batch_size' lists 16, more than batching.max_batch_size (8)"},
    {"PreferredWithoutMax", "batching:\n  preferred_batch_size: [4]\n",
     "x.yaml:2: 'batching.preferred_batch_size' lists 4, more than batching.max_batch_size (0)"},
    {"QueueSizeZero", "batching:\n  max_queue_size: 0\n",
     "x.yaml:2: 'batching.max_queue_size' must be an integer from 1 to 16777216, got '0'"},

    {"PrecisionUnknown", "model: m.onnx\nprecision: int8\n",
     "x.yaml:2: 'precision' must be one of fp32, bf16, fp16, got 'int8'"},
    {"PrecisionList", "precision: [bf16]\n",
     "x.yaml:1: 'precision' must be a non-empty string, got a list"},

    // YAML syntax: yaml-cpp's own message, located.
    {"UnclosedFlowList", "model: m.onnx\nbackends: [cpu, example\nthreads: 2\n",
     "x.yaml:3: YAML syntax error: end of sequence flow not found"},
    {"TabIndentation", "model: m.onnx\n\tthreads: 2\n",
     "x.yaml:2: YAML syntax error: illegal tab when looking for indentation"},
    {"BadIndentation", "model: m.onnx\nthreads: 2\n  strict: true\n",
     "x.yaml:3: YAML syntax error: illegal map value"},
};

class ConfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigErrorTest, FailsWithLocatedMessage) {
  const ErrorCase& c = GetParam();
  const Result<DeploymentConfig> config = parse_config(c.yaml, "x.yaml", "");
  ASSERT_FALSE(config.is_ok()) << "accepted:\n" << c.yaml;
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(), c.message);
}

INSTANTIATE_TEST_SUITE_P(Rules, ConfigErrorTest, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(ConfigErrors, UnnamedSourceIsLabelledString) {
  const Result<DeploymentConfig> config = parse_config("threads: two\n", "", "");
  ASSERT_FALSE(config.is_ok());
  EXPECT_EQ(config.status().message(), "<string>:1: 'threads' must be an integer >= 1, got 'two'");
}

TEST(ConfigErrors, EmptyListItemIsRejected) {
  // yaml-cpp places an empty item at the next token, so only the rule is asserted here.
  const Result<DeploymentConfig> config = parse_config("backends:\n  - cpu\n  -\n", "x.yaml", "");
  ASSERT_FALSE(config.is_ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find("'backends[1]' must be a backend name"), std::string::npos)
      << config.status().message();
}

}  // namespace
}  // namespace infer::config
