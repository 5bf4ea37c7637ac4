// The "mixed" model shared by the runtime tests: ops both backends have (MatMul, Add,
// Relu, Mul: the example device) around one only cpu has (Softmax), so a session with
// example,cpu copies tensors both ways. With it, the same maths in double precision
// written out by hand: the independent reference the tests compare against.
//
//   x[batch,4] -> mm = x @ W -> h = mm + b -> r = Relu(h) -> s = Softmax(r) (cpu only)
//   -> m = s * x -> y = m + r.   Outputs y (made on the example device) and s (on cpu).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "onnx_model_writer.hpp"
#include "session_fixture.hpp"

namespace infer::testing {

constexpr int64_t kMixedFeatures = 4;

inline std::vector<float> mixed_weights() {
  constexpr int64_t n = kMixedFeatures;
  std::vector<float> w(n * n);
  for (int64_t i = 0; i < n * n; ++i) w[i] = 0.25f * static_cast<float>((i * 7) % 5) - 0.5f;
  return w;
}
inline const std::vector<float>& mixed_bias() {
  static const std::vector<float> b = {0.1f, -0.2f, 0.3f, 0.05f};
  return b;
}

// Writes the model to temp_path(file). `fixed_batch` > 0 gives x, y and s that batch as
// a fixed dim 0; otherwise dim 0 is the symbolic "batch".
inline std::string write_mixed_model(const std::string& file, int64_t fixed_batch = 0) {
  constexpr int64_t n = kMixedFeatures;
  OnnxModelWriter w;
  const auto batch_value = [&](const std::string& name, bool input) {
    if (fixed_batch > 0)
      input ? w.input(name, {fixed_batch, n}) : w.output(name, {fixed_batch, n});
    else
      input ? w.input(name, {-1, n}, {"batch"}) : w.output(name, {-1, n}, {"batch"});
  };
  batch_value("x", true);
  w.initializer("W", {n, n}, mixed_weights());
  w.initializer("b", {n}, mixed_bias());
  w.node("mm", "MatMul", {"x", "W"}, {"mm_out"});
  w.node("bias", "Add", {"mm_out", "b"}, {"h"});
  w.node("relu", "Relu", {"h"}, {"r"});
  OnnxModelWriter::int_attr(w.node("softmax", "Softmax", {"r"}, {"s"}), "axis", -1);
  w.node("mul", "Mul", {"s", "x"}, {"m"});
  w.node("sum", "Add", {"m", "r"}, {"y"});
  batch_value("y", false);
  batch_value("s", false);
  const std::string path = temp_path(file);
  EXPECT_TRUE(w.save(path));
  return path;
}

// y and s of the mixed model for x[batch, 4], in double precision.
inline void mixed_reference(const std::vector<float>& x, int64_t batch, std::vector<float>& y,
                            std::vector<float>& s) {
  constexpr int64_t n = kMixedFeatures;
  const std::vector<float> W = mixed_weights();
  y.assign(batch * n, 0);
  s.assign(batch * n, 0);
  for (int64_t b = 0; b < batch; ++b) {
    double r[n], e[n];
    for (int64_t j = 0; j < n; ++j) {
      double acc = mixed_bias()[j];
      for (int64_t k = 0; k < n; ++k) acc += double(x[b * n + k]) * W[k * n + j];
      r[j] = acc > 0 ? acc : 0;
    }
    double mx = r[0], sum = 0;
    for (int64_t j = 1; j < n; ++j) mx = std::max(mx, r[j]);
    for (int64_t j = 0; j < n; ++j) sum += e[j] = std::exp(r[j] - mx);
    for (int64_t j = 0; j < n; ++j) {
      const double sj = e[j] / sum;
      s[b * n + j] = static_cast<float>(sj);
      y[b * n + j] = static_cast<float>(sj * x[b * n + j] + r[j]);
    }
  }
}

// Deterministic inputs: 2 sin(0.7 i + phase) for i < count.
inline std::vector<float> mixed_input_values(int64_t count, float phase) {
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i) x[i] = std::sin(0.7f * static_cast<float>(i) + phase) * 2.0f;
  return x;
}

}  // namespace infer::testing
