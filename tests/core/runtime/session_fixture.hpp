// Shared helpers for the Session tests: where the plugins and models are, and options
// that find the plugins built in this tree first.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "infer_test_paths.hpp"

namespace infer::testing {

inline std::string source_path(const std::string& relative) {
  return std::string(INFER_SOURCE_DIR) + "/" + relative;
}

// A temporary file name of this process: ctest runs each test in its own process, two at
// a time, and two processes writing one fixed name would read each other's half-written
// files. Every name handed out is removed when the process exits, so test runs leave
// nothing behind in the temporary folder.
inline std::string temp_path(const std::string& name) {
  struct Cleanup {
    std::mutex mu;
    std::vector<std::string> paths;
    ~Cleanup() {
      for (const std::string& p : paths) std::remove(p.c_str());
    }
  };
  static Cleanup cleanup;
  std::string path = ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + name;
  std::lock_guard lock(cleanup.mu);
  cleanup.paths.push_back(path);
  return path;
}

// Log lines a session sent, collected from any thread.
class LogCollector {
 public:
  void add(const std::string& line) {
    std::lock_guard lock(mu_);
    lines_.push_back(line);
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Options for a session over `backends` with the tree's plugins. Warnings are collected
// instead of printed, so that tests can look at them.
inline SessionOptions tree_options(std::vector<std::string> backends,
                                   std::shared_ptr<LogCollector> log = nullptr) {
  SessionOptions o;
  o.backends = std::move(backends);
  o.plugin_dirs = {INFER_PLUGIN_DIR};
  o.threads = 2;
  o.log_level = LogLevel::kWarning;
  o.log_sink = [log](LogLevel, const std::string& m) {
    if (log) log->add(m);
  };
  return o;
}

inline float max_abs_diff(const Tensor& a, const float* b, int64_t n) {
  float worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    float d = a.data_as<float>()[i] - b[i];
    if (d < 0) d = -d;
    if (d > worst) worst = d;
  }
  return worst;
}

// n values drawn from `dist` with `rng`, cast to T (test data).
template <typename T, typename Dist, typename Rng>
std::vector<T> random_values(size_t n, Dist& dist, Rng& rng) {
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

}  // namespace infer::testing
