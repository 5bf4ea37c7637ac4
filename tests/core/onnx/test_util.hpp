// Shared helpers of the loader tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model_builder.hpp"
#include "onnx/model_loader.hpp"

namespace infer::onnx_io::testing {

// Saves `m` into `dir` and loads it back.
inline Result<ir::Model> save_and_load(const onnx::ModelProto& m, const TempDir& dir,
                                       const LoadOptions& options = {}) {
  return load_model(save(m, dir), options);
}

inline const ir::Value& value_named(const ir::Graph& g, const std::string& name) {
  auto id = g.find_value(name);
  if (!id) {
    ADD_FAILURE() << "no value named '" << name << "'";
    static const ir::Value kMissing;
    return kMissing;
  }
  return g.value(*id);
}

inline const ir::Node* node_named(const ir::Graph& g, const std::string& name) {
  for (const ir::Node& n : g.nodes())
    if (n.name == name) return &n;
  ADD_FAILURE() << "no node named '" << name << "'";
  return nullptr;
}

inline std::vector<std::string> op_types(const ir::Graph& g) {
  std::vector<std::string> out;
  for (const ir::Node& n : g.nodes()) out.push_back(n.op_type);
  return out;
}

inline std::vector<std::string> node_names(const ir::Graph& g) {
  std::vector<std::string> out;
  for (const ir::Node& n : g.nodes()) out.push_back(n.name);
  return out;
}

}  // namespace infer::onnx_io::testing

#define ASSERT_LOADED(result) ASSERT_TRUE((result).is_ok()) << (result).status().message()
