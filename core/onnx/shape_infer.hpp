// ONNX's type and shape inference, run in place on the parsed model.
#pragma once

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"

namespace infer::onnx_io {

// Adds inferred types and shapes to the value_info of the graph and of its bodies, with
// data propagation (shapes computed through Shape/Gather/Concat... chains). Nodes whose
// operator has no schema (custom domains, opsets newer than the bundled ONNX: see
// schema_policy.hpp) are skipped, not errors, as are node-level inference failures;
// what remains an error is a contradiction between what the file declares and what ONNX
// infers (e.g. an output declared rank 1 that its producer makes rank 2), reported as
// InvalidArgument with ONNX's message on one line. The placeholder symbols ONNX invents
// for dims it cannot size ("unk__0") are removed again: those dims are unknown.
Status infer_shapes(onnx::ModelProto& model);

}  // namespace infer::onnx_io
