// Helpers of the shape and data-movement operators (shape_ops.cpp, shape_alias_ops.cpp):
// reading constant shape inputs, axes, the size limits of the copy shaders, the output
// declaration, and the strided copy that Transpose, Concat, Slice, Expand and Tile share.
//
// Every copy moves whole elements as 32-bit words (copy_words in op_kernel.hpp), so the
// shaders need neither 64-bit integers nor 8- or 16-bit storage. Shape-like inputs must be
// constants, since the plan is made on the host before the device runs.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "op_kernel.hpp"

namespace infer::vk::shape_ops {

using Dims = std::vector<int64_t>;

constexpr uint32_t kLanes = 128;  // workgroup size of the 1-D copy kernels
constexpr size_t kMaxCopyRank = 6;
// Offsets in the shaders are 32-bit signed: every tensor's word count stays below this.
constexpr int64_t kMaxWords = std::numeric_limits<int32_t>::max();

// ---- Plan time -----------------------------------------------------------------------

// The values of a constant int64/int32 tensor at plan time; false when it is not one.
bool desc_ints(const TensorDesc& t, Dims* out);
// desc_ints of input `i`, false when that input is absent or not a constant int tensor.
bool input_ints(std::span<const TensorDesc> in, size_t i, Dims* out);
// Row-major element strides of `dims`.
Dims strides_of(const Dims& dims);
int64_t count_of(const Dims& dims);
// Normalizes axis `a` against `rank`; false when out of [-rank, rank).
bool norm_axis(int64_t a, int64_t rank, int64_t* out);
// The `axis` attribute (`fallback` when absent) normalized against the rank of `x`;
// false with *error "axis A is out of range for input [dims]".
bool axis_attr(const NodeInfo& node, int64_t fallback, const TensorDesc& x, int64_t* axis,
               std::string* error);

// Which tensors an op checks against kMaxWords before declaring its output: the input
// (ops whose output is no larger), the output (ops that grow it), or both.
enum class SizeCheck { kInput, kOutput, kBoth };
// Declares output `y` of an op that copies elements of input `x` (same dtype), after the
// size check; false with *error "input [..] is too large" (or output, or "input [..] or
// output [..] is too large" for kBoth).
bool declare_output(const NodeInfo& node, const TensorDesc& x, const TensorDesc& y, SizeCheck check,
                    OpPlan* out, std::string* error);

// Appends dispatch `d` of shader `name` over `n` invocations of kLanes-wide workgroups.
bool add_dispatch(const NodeInfo& node, const char* name, Dispatch d, int64_t n, OpPlan* out,
                  std::string* error);

// One strided copy: per iteration dim its size, source and destination strides (in
// elements), and an optional source modulus (Tile).
struct StridedCopy {
  Dims dims, src_stride, dst_stride, src_mod;  // per iteration dim; src_mod 0: none
  int64_t src_base = 0, dst_base = 0;

  void add(int64_t size, int64_t ss, int64_t ds, int64_t mod = 0) {
    dims.push_back(size);
    src_stride.push_back(ss);
    dst_stride.push_back(ds);
    src_mod.push_back(mod);
  }
};
// Appends the shape_copy dispatch of `raw` (simplified first) from `src` to `dst`.
bool add_copy(const NodeInfo& node, const StridedCopy& raw, uint32_t words, Operand src,
              Operand dst, OpPlan* out, std::string* error);

// ---- Partition time ------------------------------------------------------------------

bool is_const(const infer_value_view* v);
// Alias ops move bytes of any dtype.
bool alias_dtype_ok(const infer_node_view& node, std::string* reason);
// Copy ops move 4- and 8-byte elements.
bool copy_dtype_ok(const infer_node_view& node, std::string* reason);
// Input `i`, when present, must be a constant int64/int32 tensor.
bool const_ints_ok(const infer_node_view& node, size_t i, const char* what, bool required,
                   std::string* reason);

// Registers Reshape, Flatten, Squeeze, Unsqueeze and Identity (shape_alias_ops.cpp).
void add_alias_ops(std::vector<OpKernel>& table);

}  // namespace infer::vk::shape_ops
