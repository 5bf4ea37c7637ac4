// ONNX's checker, run with infer's policy.
//
// infer drives the checker's building blocks (check_node, check_attribute, check_tensor)
// itself instead of calling onnx::checker::check_model, because check_model of the
// bundled release (1.12) rejects models infer should load:
//   - a model whose ir_version is newer than 8: checked as IR 8 instead (newer IR
//     versions add types and fields that the converter validates on its own);
//   - nodes of an opset newer than the release knows: checked for well-formedness only
//     (see schema_policy.hpp);
//   - graph outputs declared without a shape: the IR represents an unknown rank;
//   - nodes out of topological order: the loader sorts them (and reports real cycles).
// Custom domains (anything but "", "ai.onnx", "ai.onnx.ml" and ONNX's training
// domains) are legitimate: a plugin may implement their operators, so their nodes are
// checked for well-formedness and need only be imported in opset_import; whether
// anything runs them is the partitioner's question ("no backend supports it").
// External initializers are left to the converter, which also confines them to the
// model's folder; ONNX's check of external tensors inside attributes (a Constant's value)
// looks for the file in `base_dir`.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"
#include "onnx/node_names.hpp"

namespace infer::onnx_io {

// Fails with InvalidArgument naming the node or initializer ONNX's checker objects to.
// Messages are not prefixed with the model name (the caller adds it).
Status check_model(const onnx::ModelProto& model, const NodeNames& names,
                   const std::string& base_dir);

}  // namespace infer::onnx_io
