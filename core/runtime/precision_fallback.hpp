// Float16 and bfloat16 nodes that no backend runs at their own precision compute in
// float32, with casts at their edges, when a backend runs the float32 form.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "partitioner/capability.hpp"
#include "plugin_host/graph_views.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/logger.hpp"

namespace infer::runtime {

// After the capability answers: every node that reads or writes a float16/bfloat16 tensor
// and that no backend claims is tried in float32 (optimizer::widen_to_float32) on a trial
// copy of the graph; the nodes some backend claims in that form are widened in the model
// (adjacent widened nodes exchange float32 values directly) and the views and
// capabilities are rebuilt. A node no backend claims in float32 either is left as it was,
// for the partitioner to report. Returns one line per widened node for --explain, e.g.
// "node 'conv1' (Conv): float16 -> float32 (cpu: Conv does not support dtype float16
// (input 0 'x'))", then one line with the casts added.
Result<std::vector<std::string>> widen_unclaimed_low_precision_nodes(
    ir::Model& model, const std::vector<Backend>& backends,
    std::shared_ptr<host::GraphViewSet>& views,
    std::vector<partitioner::BackendCapabilities>& capabilities, const Logger& log);

}  // namespace infer::runtime
