// Compiles one partition through its backend's plugin.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "partitioner/partition_plan.hpp"
#include "plugin_host/graph_views.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/execution_plan.hpp"

namespace infer::runtime {

// Maps each value view of `views` back to its ValueId (views identify values by pointer).
std::unordered_map<const infer_value_view*, ir::ValueId> value_ids_of(
    const host::GraphViewSet& views);

// Builds the partition's graph view and compiles it on `backend`'s device. The view's
// constant data stays alive as long as the executable (CompileOptions::keep_alive). The
// result's inputs and outputs follow the view's order, which must name the same values
// the partitioner computed (anything else is an internal error: the copies were planned
// from the partitioner's lists).
//
// When `graph` (the IR the views were built from) is given and the backend's prepacked
// forms replace their originals (INFER_PREPACK_REPLACES_CONSTANT), a constant whose only
// reader got a prepacked form is freed right after it was packed, in the views and in
// `graph` (its Value::constant is reset), so the originals and their packed copies never
// all coexist. After that, `graph` serves only names, types and shapes of such values.
Result<PlanPartition> compile_partition(
    host::GraphViewSet& views, const std::unordered_map<const infer_value_view*, ir::ValueId>& ids,
    const partitioner::Partition& partition, size_t device_index, const Backend& backend,
    uint32_t optimization_level, ir::Graph* graph = nullptr);

}  // namespace infer::runtime
