// Writing the IR back out as an ONNX file (infer-run --dump-graph, so that an optimized
// graph can be looked at in Netron). Like model_loader.hpp, nothing of onnx or protobuf
// appears in this header; to_model_proto() (the conversion itself, for callers that link
// onnx) is declared in graph_export.hpp.
//
// The file is a complete, self-contained model: constants loaded from external data are
// written inline, fused ops keep their domain ("ai.infer") with an opset import for it,
// and the result loads back with load_model() into the same graph. See graph_export.hpp
// for exactly what is written.
#pragma once

#include <string>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::onnx_io {

// Writes `model` to `path` (replacing any file there). Errors name the path: a folder
// that does not exist or cannot be written gives "cannot write model '<path>': <errno
// text>"; a model that cannot be represented (see graph_export.hpp, e.g. constants over
// protobuf's 2 GiB limit) gives "cannot write model '<path>': <why>". No exception
// escapes. On failure no partial file is left at `path`.
Status save_model(const ir::Model& model, const std::string& path);

}  // namespace infer::onnx_io
