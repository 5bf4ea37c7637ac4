// GraphProto -> ir::Graph, recursively through If/Loop/Scan bodies.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "onnx/external_data.hpp"
#include "onnx/node_names.hpp"

namespace infer::onnx_io {

struct ConvertContext {
  const std::map<std::string, int64_t>* opsets = nullptr;  // domain ("" = ONNX) -> version
  ExternalData* external = nullptr;
  const NodeNames* names = nullptr;
  // (domain, name) of the model's local functions, which infer does not expand.
  std::set<std::pair<std::string, std::string>> local_functions;
};

// Converts the main graph. Initializers become constant values (their raw data is moved
// out of `graph`); graph inputs that are also initializers are constants, not inputs;
// value types come from the inputs, outputs and value_info (including what shape
// inference added); every name a body uses without defining it becomes a value with
// outer_scope = true in that body and in each graph between it and the definer. Every
// graph comes out topologically sorted with its links built. Messages name the node,
// value or tensor (the caller adds the model).
Result<std::shared_ptr<ir::Graph>> convert_main_graph(onnx::GraphProto& graph, ConvertContext& ctx);

}  // namespace infer::onnx_io
