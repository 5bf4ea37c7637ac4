// ONNX's shape inference run again on an IR graph after the optimizer rewrote it: folding
// a Reshape's shape into a constant lets ONNX size everything downstream, which the
// loader's inference could not (e.g. torch exports at opset 13 with dynamic axes, where
// the head split's Reshape had a computed shape). Fusion passes decide from shapes, so
// the pipeline calls this between its rounds.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::onnx_io {

// Re-infers the types and shapes of the values of `graph` (the top-level graph; bodies
// are left as they are) and merges what ONNX learns into them: an unknown rank or dim
// becomes known, nothing known is ever replaced (ir values keep their dims where ONNX
// disagrees). Constants larger than 4 KiB are given to ONNX as typed inputs without their
// bytes, so the cost does not grow with the weights. Fails, changing nothing, when ONNX
// cannot run on the graph.
Status refine_shapes(ir::Graph& graph, const std::map<std::string, int64_t>& opsets);

// True when `after` knows more than `before` without contradicting it: a rank where
// `before` has none, or known sizes/symbols where `before` has unknown dims.
bool shape_more_known(const ir::Shape& before, const ir::Shape& after);

}  // namespace infer::onnx_io
