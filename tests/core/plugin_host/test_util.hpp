// Helpers shared by the plugin host tests: fixture paths, scratch folders, a log sink
// that records what it receives, and tiny IR graphs.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "infer/infer.hpp"
#include "infer_test_paths.hpp"

namespace infer::host::testing {

inline std::string fixture_path(const std::string& name) {
  return std::string(INFER_FIXTURE_PLUGIN_DIR) + "/libinfer_plugin_" + name + ".so";
}

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "infer_plugin_host_XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Copies fixture `fixture` here as libinfer_plugin_<as>.so; returns the new path.
  std::string add(const std::string& fixture, const std::string& as = "") const {
    std::string target = path_ + "/libinfer_plugin_" + (as.empty() ? fixture : as) + ".so";
    std::filesystem::copy_file(fixture_path(fixture), target,
                               std::filesystem::copy_options::overwrite_existing);
    return target;
  }

 private:
  std::string path_;
};

// Records every log line.
struct LogRecorder {
  std::mutex mu;
  std::vector<std::pair<LogLevel, std::string>> lines;

  LogSink sink() {
    return [this](LogLevel level, const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.emplace_back(level, line);
    };
  }
  size_t count(LogLevel level, const std::string& needle) {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& [l, text] : lines)
      if (l == level && text.find(needle) != std::string::npos) ++n;
    return n;
  }
};

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace infer::host::testing
