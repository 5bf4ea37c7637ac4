// The contract between the Vulkan plugin's runtime (device, memory, queues, executables)
// and its operator kernels. An operator is one OpKernel entry: a capability check that
// reads the ABI's node view, and a planner that, given concrete input shapes, returns the
// output shapes and the compute dispatches to record. The runtime owns everything else:
// descriptor sets, pipelines (cached per shader and specialization constants), scratch
// buffers, barriers between dispatches, uploads of constant inputs, and the caching of
// plans per input-shape signature. Adding an op touches one file under src/ops/, its
// shaders under shaders/, and nothing in the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infer/plugin_glue.hpp"

namespace infer::vk {

// A SPIR-V module compiled at build time by glslc from shaders/<name>.comp and embedded
// in the plugin.
struct Shader {
  const char* name;  // the file stem, e.g. "matmul_tiled"
  const uint32_t* words;
  size_t num_words;
};

// The embedded shader named `name` (its file stem), or nullptr when the build has none.
const Shader* find_shader(std::string_view name);

// A node as an executable keeps it: the node view copied (with its attributes), since the
// view is only valid during compile. The SDK's copy (plugin_glue.hpp) is exactly what the
// kernels need. Constant inputs keep a pointer to the host's constant data instead (see
// TensorDesc), which the ABI guarantees stays valid as long as the executable lives.
using Attr = sdk::Attribute;
using NodeInfo = sdk::NodeInfo;

// An input or output of one node execution. For a constant input `host_data` points at
// the host's constant bytes (row-major, the dtype's natural size); otherwise it is null
// and only the dtype and dims are known at plan time.
struct TensorDesc {
  infer_dtype dtype = INFER_DTYPE_FLOAT32;
  std::vector<int64_t> dims;
  const void* host_data = nullptr;
  bool present = true;  // false for an omitted optional input

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

// What a dispatch binding refers to. Storage buffers are bound at set 0, binding =
// position in Dispatch::bindings, each starting at the tensor's first element.
struct Operand {
  enum class Kind { kInput, kOutput, kTemp };
  Kind kind = Kind::kInput;
  uint32_t index = 0;  // node input / node output / OpPlan::temps index

  static Operand input(uint32_t i) { return {Kind::kInput, i}; }
  static Operand output(uint32_t i) { return {Kind::kOutput, i}; }
  static Operand temp(uint32_t i) { return {Kind::kTemp, i}; }
};

// One vkCmdDispatch. The runtime inserts a compute-to-compute memory barrier between
// consecutive dispatches of a plan (and between nodes), so a dispatch may read what the
// previous one wrote.
struct Dispatch {
  const Shader* shader = nullptr;
  // Specialization constants with constant_id 0, 1, 2, ... in order (32-bit each: an
  // int, a uint, or a float's bits via spec_float()). Convention: ids 0..2 are the
  // workgroup size (layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id =
  // 2)), so a kernel picks its workgroup shape here; the pipeline cache keys on them.
  std::vector<uint32_t> spec;
  // Push constants, at most 32 words (128 bytes, the Vulkan minimum guarantee). Layout
  // as the shader's push_constant block declares it (std430: 4-byte scalars).
  std::vector<uint32_t> push;
  std::vector<Operand> bindings;
  uint32_t groups[3] = {1, 1, 1};  // workgroup counts (each <= 65535)
};

inline uint32_t spec_float(float f) {
  uint32_t u;
  static_assert(sizeof u == sizeof f);
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}
inline uint32_t push_float(float f) { return spec_float(f); }

struct OpPlan {
  std::vector<TensorDesc> outputs;    // dtype and dims of each node output (host_data null)
  std::vector<uint64_t> temps;        // byte sizes of scratch buffers for this execution
  std::vector<Dispatch> dispatches;   // recorded in order
  // Per output: the index of an input whose bytes the output is (Reshape, Flatten,
  // Squeeze, Unsqueeze, Identity), or -1. The runtime then copies the bytes (or aliases
  // them) and records no dispatch for that output. Empty means all -1.
  std::vector<int> alias_of_input;
};

struct OpKernel {
  const char* domain;   // "" for ONNX, "ai.infer"
  const char* op_type;  // "Conv"
  // Partition time: whether this device runs the node, from the read-only view (dtypes,
  // attributes, ranks, which inputs are constant; dims may be -1). Write a short reason
  // on NO ("unsupported attribute mode=cubic"), optionally a note on YES. Must not
  // throw; must not keep pointers into the view.
  infer_support (*check)(const infer_node_view& node, std::string* reason);
  // Run time (cached per input-shape signature): output shapes and dispatches for
  // concrete input shapes. Return false with *error set ("node 'x' (Conv): input 1 has
  // 3 dims, expected 4") for inputs it cannot run. Must not throw.
  bool (*plan)(const NodeInfo& node, std::span<const TensorDesc> inputs, OpPlan* out,
               std::string* error);
  // Optional (may be null): floating-point operations of the node for the partitioner's
  // time estimate, from the view (return < 0 when the shapes are not known).
  double (*flops)(const infer_node_view& node);
};

// Fused activations (sdk/FUSED_OPS.md), as the shaders' activation.glsl numbers them.
enum class Activation : uint32_t {
  kNone = 0,
  kRelu = 1,
  kTanh = 2,
  kSigmoid = 3,
  kLeakyRelu = 4,   // p0 = alpha
  kClip = 5,        // p0 = min, p1 = max
  kHardSigmoid = 6, // p0 = alpha, p1 = beta
  kHardSwish = 7,
  kGelu = 8,        // erf form
  kGeluTanh = 9,
};

struct ActivationSpec {
  Activation kind = Activation::kNone;
  float p0 = 0;
  float p1 = 0;
};

// Reads the `activation` / `activation_params` attributes of a fused node. False with
// *error set for an unknown name or a wrong number of parameters.
bool parse_activation(const NodeInfo& node, ActivationSpec* out, std::string* error);
// The same check on a node view (for OpKernel::check).
bool activation_supported(const infer_node_view& node, std::string* reason);

// The operator families. Each appends its kernels to the table; the runtime calls them
// all once. A family file owns its ops completely.
void add_elementwise_ops(std::vector<OpKernel>& table);  // unary, binary (broadcast), Where, Clip, Cast f32
void add_matmul_ops(std::vector<OpKernel>& table);       // MatMul, Gemm, FusedGemm, FusedMatMul
void add_conv_ops(std::vector<OpKernel>& table);         // Conv, FusedConv (grouped, depthwise)
void add_pool_ops(std::vector<OpKernel>& table);         // MaxPool, AveragePool, Global*Pool
void add_norm_ops(std::vector<OpKernel>& table);         // Softmax, LayerNormalization, Gelu, BatchNormalization, Attention
void add_shape_ops(std::vector<OpKernel>& table);        // Reshape, Flatten, (Un)Squeeze, Identity, Transpose, Concat, Slice, Gather
void add_resize_ops(std::vector<OpKernel>& table);       // Resize
void add_reduce_ops(std::vector<OpKernel>& table);       // ReduceMean/Sum/Max/Min/Prod/L2..., ArgMax/ArgMin

// Helpers every family uses (src/ops/op_util.cpp).
using sdk::dims_text;
using sdk::dtype_name;
// The value view of input `i`, or nullptr when omitted / out of range.
const infer_value_view* node_input(const infer_node_view& node, size_t i);
// The attribute named `key`, or nullptr.
const infer_attr_view* node_attr(const infer_node_view& node, const char* key);
// ceil(a / b) for positive b, as a workgroup count.
inline uint32_t div_up(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
// Elements of a value view for OpKernel::flops, or -1 when it is absent or a dim is
// unknown.
inline double view_elements(const infer_value_view* v) {
  if (v == nullptr || v->rank < 0) return -1;
  double n = 1;
  for (int64_t i = 0; i < v->rank; ++i) {
    if (v->dims[i] < 0) return -1;
    n *= static_cast<double>(v->dims[i]);
  }
  return n;
}
// OpKernel::plan's failure: *error = "node 'x' (Op): <what>", and false.
inline bool fail(const NodeInfo& node, std::string* error, const std::string& what) {
  *error = node.describe() + ": " + what;
  return false;
}
// OpKernel::check's refusal: *reason = `text`, and NO.
inline infer_support no(std::string* reason, const std::string& text) {
  *reason = text;
  return INFER_SUPPORT_NO;
}
// `count` workgroups folded into a 2-D grid (at most 65535 per dimension); the shaders
// rebuild the index as gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x.
inline void set_groups(Dispatch* d, uint64_t count) {
  if (count <= 65535) {
    d->groups[0] = static_cast<uint32_t>(count > 1 ? count : 1);
  } else {
    d->groups[0] = 65535;
    d->groups[1] = div_up(count, 65535);
  }
}
// 32-bit words per element for kernels that only move elements (shape ops, nearest
// resize), or 0 for a dtype they do not move: 4- and 8-byte elements only, so the shaders
// need neither 64-bit integers nor 8- or 16-bit storage.
inline uint32_t copy_words(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_FLOAT32:
    case INFER_DTYPE_INT32:
    case INFER_DTYPE_UINT32:
      return 1;
    case INFER_DTYPE_INT64:
    case INFER_DTYPE_UINT64:
    case INFER_DTYPE_FLOAT64:
      return 2;
    default:
      return 0;
  }
}

// ---- Added by the runtime: helpers for kernels (src/ops/op_util.cpp) -----------------
// The largest workgroup count per grid dimension every Vulkan device supports.
constexpr uint32_t kMaxGroupsPerDim = 65535;
// Sets up `d` to run `invocations` threads in workgroups of `local_size` (a 1-D
// workgroup): spec constants 0..2 become {local_size, 1, 1} (entries from 3 on are kept)
// and the workgroups fold into a 2-D grid so no dimension exceeds kMaxGroupsPerDim. The
// shader gets its thread's flat index from infer_flat_index() in
// shaders/include/indexing.glsl and must skip indices >= invocations (the grid rounds up).
void set_grid_1d(Dispatch& d, uint64_t invocations, uint32_t local_size = 256);
// Numpy broadcasting of two shapes; false when they do not broadcast.
bool broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b,
                      std::vector<int64_t>* out);
// Element strides of `dims` as read for an output of shape `out_dims` under numpy
// broadcasting: right-aligned, 0 where the input dim is 1 (or missing) and the output's
// is not. Returns out_dims.size() entries.
std::vector<int64_t> broadcast_strides(std::span<const int64_t> dims,
                                       std::span<const int64_t> out_dims);

}  // namespace infer::vk
