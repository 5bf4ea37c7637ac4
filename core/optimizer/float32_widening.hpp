// Computing float16 and bfloat16 nodes in float32: the rewrite behind the session's
// precision fallback (runtime/precision_fallback.hpp), which applies it to the nodes that
// no backend runs at their own precision but one runs in float32 (as ONNX Runtime inserts
// casts around the float16 nodes its CPU provider has no kernel for).
#pragma once

#include <cstddef>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::optimizer {

// True for a float16 or bfloat16 tensor dtype.
bool is_low_precision_float(DataType dtype);

// True when `node` (of `graph`) reads or writes a float16/bfloat16 tensor and computing it
// in float32 means the same thing: it has no subgraphs and no attribute that fixes an
// output dtype (Cast's 'to', the random generators' 'dtype', ConstantOfShape's 'value').
bool is_widenable(const ir::Graph& graph, const ir::Node& node);

struct WideningSummary {
  size_t casts = 0;      // Cast nodes added (to float32 before, back after)
  size_t constants = 0;  // float16/bfloat16 constants given a float32 copy
};

// Rewrites each listed node (each must satisfy is_widenable) to compute in float32:
//  - a float16/bfloat16 input is read through a Cast to float32; a constant input gets a
//    float32 copy instead; a value that several listed nodes read is converted once;
//  - a float16/bfloat16 output becomes a new float32 value, followed by a Cast back that
//    writes the original value (same id and name), so other readers, graph outputs and
//    captures see what they saw before;
//  - a listed node reading the output of another listed node reads the float32 value
//    directly, without the round trip through float16 (ONNX Runtime's CPU provider does
//    the same between its cast-wrapped nodes); a Cast back that nothing reads then goes.
// The node keeps its name; the new values are "<value>/float32", the casts
// "<node>/cast_in_<i>" and "<node>/cast_out_<i>". Commits (sorts) the graph.
Result<WideningSummary> widen_to_float32(ir::Graph& graph, const std::vector<ir::NodeId>& nodes);

}  // namespace infer::optimizer
