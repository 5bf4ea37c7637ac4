// Weight prepacking: the optional prepack_constant hook.
//
// Some layouts suit a device better than the one in the model file. The host lets a
// plugin transform each constant input once, keeps the result (shared by every session
// that loads the model) and hands it back at compile time in
// infer_value_view.prepacked_data. The example uses this for Gemm: its kernel walks B
// one output column at a time, so it wants B as [N, K] (transB = 1, each column's weights
// contiguous). A Gemm stored with transB = 0 ([K, N]) gets its B transposed once here
// instead of being read with a stride on every run.
//
// The host treats prepacked data as opaque bytes, so the plugin must be able to tell, at
// compile time, whether a blob is one it made and for which shape. The blob therefore
// starts with a small header (magic, format version, shape); compile falls back to the
// original constant when the header does not match.
#pragma once

#include <cstddef>
#include <cstdint>

#include "failure.hpp"

namespace infer::example {

struct PackedHeader {
  char magic[4];     // "EXPK"
  uint32_t version;  // kPackedVersion
  int64_t rows;      // the packed matrix is rows x cols float32, row-major,
  int64_t cols;      // following the header
};

// The hook: writes a host_alloc'ed blob to *out_data (or NULL to decline).
MaybeFailure prepack_constant(const sdk::Host& host, const infer_node_view& node,
                              size_t input_index, void** out_data, size_t* out_size);

// The packed float32 bytes (rows * cols * 4 of them, no alignment promised) of a blob this
// plugin made for a rows x cols matrix, or nullptr when `data` is not such a blob.
const void* read_packed(const void* data, size_t size, int64_t rows, int64_t cols);

}  // namespace infer::example
