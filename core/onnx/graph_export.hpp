// ir::Model -> onnx::ModelProto: the inverse of the loader's conversion (graph_convert,
// attribute_convert, tensor_convert, value_type). Internal to infer_onnx, like the
// loader's converters: model_writer.hpp is the header without onnx types.
//
// What comes out:
//   - ir_version from the model (4 at least, so that initializers need not be listed
//     among the inputs; ONNX's current IR version when the model has none), producer
//     "infer", the original producer and source file in doc_string;
//   - opset_import from Model::opsets, plus an import for every node domain of the graph
//     or of any body that the model lacks ("ai.infer" and other custom domains at version
//     1; the default domain at the newest version the bundled ONNX knows), so that an
//     optimized graph holding fused ops is still a valid file;
//   - per graph: its name, inputs and outputs with their types (symbolic dims as
//     dim_param, unknown dims as an empty Dimension, unknown rank as no shape), one
//     initializer with inline raw_data for every constant a node, a body (captures) or a
//     graph output uses (constants the IR no longer uses are dropped), value_info for
//     every node output whose type is at least partly known, and the nodes in order.
//     Omitted optional inputs are written as ""; omitted outputs as "" in the middle and
//     dropped at the end. A body's outer-scope values are not declared in the body
//     (ONNX resolves them by name in the enclosing graphs). Quantization descriptors are
//     not written (the file's DequantizeLinear nodes carry them).
// Fails (never throws) on a graph that does not validate, an unnamed value, two values
// sharing a name in one graph, an attribute without a type, or constants totalling more
// than protobuf's 2 GiB message limit.
#pragma once

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::onnx_io {

Result<onnx::ModelProto> to_model_proto(const ir::Model& model);

// The domain "ai.infer" of infer's fused operators (sdk/FUSED_OPS.md) and the version
// its import gets when the model does not already import it.
inline constexpr const char* kFusedDomain = "ai.infer";
inline constexpr int64_t kFusedDomainVersion = 1;

}  // namespace infer::onnx_io
