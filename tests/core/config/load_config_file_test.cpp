// Loading deployment files from disk: missing files, paths resolved against the file's
// folder, messages that name the file, and every shipped configs/*.yaml.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "config/deployment_config.hpp"
#include "scratch_dir.hpp"
#include "infer_test_paths.hpp"

namespace infer::config {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

const fs::path kSourceDir = INFER_SOURCE_DIR;

std::string source_path(const std::string& relative) { return (kSourceDir / relative).lexically_normal().string(); }

TEST(LoadConfigFile, MissingFileIsNotFoundNamingThePath) {
  ScratchDir dir;
  const std::string path = (dir.path() / "absent.yaml").string();
  const Result<DeploymentConfig> config = load_config_file(path);
  ASSERT_FALSE(config.is_ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(config.status().message(), "deployment file '" + path + "' not found");
}

TEST(LoadConfigFile, FolderIsInvalidArgument) {
  ScratchDir dir;
  const Result<DeploymentConfig> config = load_config_file(dir.path().string());
  ASSERT_FALSE(config.is_ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find(dir.path().string()), std::string::npos) << config.status().message();
}

TEST(LoadConfigFile, EmptyFileIsAValidEmptyConfig) {
  ScratchDir dir;
  const std::string path = dir.write("empty.yaml", "");
  const Result<DeploymentConfig> config = load_config_file(path);
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->source, path);
  EXPECT_EQ(config->model, "");
  EXPECT_TRUE(config->backends.empty());
  EXPECT_FALSE(config->threads.has_value());
}

TEST(LoadConfigFile, RelativePathsResolveAgainstTheFilesFolder) {
  ScratchDir dir;
  const std::string path = dir.write("deploy/configs/d.yaml", R"(model: ../models/m.onnx
plugins:
  search_paths: [plugins]
inputs:
  image: {file: ../data/x.npy}
)");
  const Result<DeploymentConfig> config = load_config_file(path);
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->source, path);
  EXPECT_EQ(config->model, (dir.path() / "deploy/models/m.onnx").string());
  EXPECT_EQ(config->plugin_search_paths, (std::vector<std::string>{(dir.path() / "deploy/configs/plugins").string()}));
  ASSERT_EQ(config->inputs.size(), 1u);
  EXPECT_EQ(config->inputs[0].file, (dir.path() / "deploy/data/x.npy").string());
}

TEST(LoadConfigFile, SchemaErrorNamesFileLineAndKey) {
  ScratchDir dir;
  const std::string path =
      dir.write("bad.yaml", "model: m.onnx\nbackends: [cpu]\nthreads: 2\noptimisation:\n  level: 1\n");
  const Result<DeploymentConfig> config = load_config_file(path);
  ASSERT_FALSE(config.is_ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            path +
                ":4: unknown key 'optimisation' (expected one of: model, backends, "
                "threads, optimization, precision, placement, plugins, strict, inputs, micro_batches, trace, "
                "partitioner, name, version, instances, server, batching)");
}

TEST(LoadConfigFile, SyntaxErrorNamesFileAndLine) {
  ScratchDir dir;
  const std::string path = dir.write("broken.yaml", "model: m.onnx\n\tthreads: 2\n");
  const Result<DeploymentConfig> config = load_config_file(path);
  ASSERT_FALSE(config.is_ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(), path + ":2: YAML syntax error: illegal tab when looking for indentation");
}

// The deployment the README's main job runs.
TEST(ShippedConfigs, DefaultYaml) {
  const std::string path = source_path("configs/default.yaml");
  const Result<DeploymentConfig> config = load_config_file(path);
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->source, path);
  EXPECT_EQ(config->model, source_path("models/digits_cnn.onnx"));
  ASSERT_EQ(config->backends.size(), 1u);
  EXPECT_EQ(config->backends[0].name, "cpu");
  EXPECT_EQ(config->threads, 2);
  EXPECT_EQ(config->optimization_level, 3);
  ASSERT_EQ(config->inputs.size(), 1u);
  EXPECT_EQ(config->inputs[0].name, "image");
  EXPECT_EQ(config->inputs[0].file, source_path("models/digits_samples.npy"));
  // The files it names are part of the repository; a rename must update the config.
  EXPECT_TRUE(fs::exists(config->model)) << config->model;
  EXPECT_TRUE(fs::exists(config->inputs[0].file)) << config->inputs[0].file;
}

TEST(ShippedConfigs, ExampleSplitYaml) {
  const Result<DeploymentConfig> config = load_config_file(source_path("configs/example_split.yaml"));
  ASSERT_TRUE(config.is_ok()) << config.status().message();
  EXPECT_EQ(config->model, source_path("models/digits_cnn.onnx"));
  ASSERT_EQ(config->backends.size(), 2u);
  EXPECT_EQ(config->backends[0].name, "example");
  EXPECT_EQ(config->backends[1].name, "cpu");
  EXPECT_EQ(config->threads, 2);
  EXPECT_EQ(config->optimization_level, 1);
  ASSERT_EQ(config->inputs.size(), 1u);
  EXPECT_EQ(config->inputs[0].file, source_path("models/digits_samples.npy"));
}

// A config added later is at least checked against the schema, and the files it names
// must exist, even before a dedicated test is written for it.
TEST(ShippedConfigs, EveryYamlInConfigsLoadsAndNamesExistingFiles) {
  int count = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kSourceDir / "configs")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    SCOPED_TRACE(entry.path().string());
    const Result<DeploymentConfig> config = load_config_file(entry.path().string());
    ASSERT_TRUE(config.is_ok()) << config.status().message();
    if (!config->model.empty()) {
      EXPECT_TRUE(fs::exists(config->model)) << config->model;
    }
    for (const InputSpec& input : config->inputs) {
      if (!input.file.empty()) {
        EXPECT_TRUE(fs::exists(input.file)) << input.file;
      }
    }
  }
  EXPECT_GE(count, 2);
}

}  // namespace
}  // namespace infer::config
