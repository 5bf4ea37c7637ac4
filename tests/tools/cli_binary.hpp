// Running the built infer-run binary from tests: its path, the plugin folder of the
// build tree, and the checks every failing invocation must pass.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "subprocess.hpp"
#include "infer_test_paths.hpp"

namespace infer::cli::testing {

inline const std::string kInferRun = INFER_RUN_BINARY;
inline const std::string kPluginDir = INFER_PLUGIN_DIR;

// Runs infer-run with `args` plus --plugin-dir <build>/lib/infer/plugins, so the
// plugins of this build are found whatever the environment says.
inline ProcessResult infer_run(std::vector<std::string> args, const std::string& working_dir = "") {
  args.push_back("--plugin-dir");
  args.push_back(kPluginDir);
  return run_process(kInferRun, args, working_dir);
}

// Every failure: a non-zero exit (not a crash), nothing but one line on stderr, and
// that line is "infer-run: error: <message>". Returns the message.
inline std::string expect_one_line_error(const ProcessResult& r, int expected_code = 1) {
  EXPECT_EQ(r.term_signal, 0) << "killed by signal " << r.term_signal << "\nstderr:\n" << r.err;
  EXPECT_EQ(r.exit_code, expected_code) << "stderr:\n" << r.err;
  const std::vector<std::string> lines = split_lines(r.err);
  EXPECT_EQ(lines.size(), 1u) << "stderr:\n" << r.err;
  if (lines.empty()) return "";
  const std::string prefix = "infer-run: error: ";
  EXPECT_EQ(lines[0].rfind(prefix, 0), 0u) << lines[0];
  EXPECT_EQ(r.err.back(), '\n');
  return lines[0].rfind(prefix, 0) == 0 ? lines[0].substr(prefix.size()) : lines[0];
}

// A fresh, empty folder under the system's temp folder, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    const auto base = std::filesystem::temp_directory_path();
    for (int i = 0;; ++i) {
      path_ = base / ("infer_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(i));
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace infer::cli::testing
