// Shape and data-movement operators of the Vulkan plugin: Reshape, Flatten, Squeeze,
// Unsqueeze and Identity (alias outputs: no dispatch, the runtime reuses or copies the
// input's bytes), and Transpose, Concat, Slice, Expand, Tile (one strided-copy shader,
// shape_copy.comp), Gather (gather.comp) and Pad (shape_pad.comp).
//
// Every copy moves whole elements as 32-bit words (one word for float32/int32/uint32, two
// for int64/uint64/float64), so the shaders need neither 64-bit integers nor 8- or
// 16-bit storage; other dtypes are refused at partition time. Shape-like inputs (Reshape's
// shape, Slice's starts/ends/axes/steps, Expand's shape, Tile's repeats, Pad's pads and
// axes, Squeeze/Unsqueeze's axes) must be constants, since the plan is made on the host
// before the device runs; a node whose shape input is computed at run time is left to
// another backend.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {
namespace {

constexpr uint32_t kLanes = 128;  // workgroup size of the 1-D copy kernels
constexpr size_t kMaxCopyRank = 6;
// Offsets in the shaders are 32-bit signed: every tensor's word count stays below this.
constexpr int64_t kMaxWords = std::numeric_limits<int32_t>::max();

using Dims = std::vector<int64_t>;

// 32-bit words per element for pure copies, or 0 for a dtype the copies do not move.
uint32_t copy_words(infer_dtype t) {
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

bool is_const(const infer_value_view* v) { return v != nullptr && v->const_data != nullptr; }

// The values of a constant int64/int32 input at plan time.
bool desc_ints(const TensorDesc& t, Dims* out) {
  if (t.host_data == nullptr) return false;
  const int64_t n = t.elements();
  out->assign(static_cast<size_t>(n), 0);
  if (t.dtype == INFER_DTYPE_INT64) {
    if (n) std::memcpy(out->data(), t.host_data, static_cast<size_t>(n) * sizeof(int64_t));
    return true;
  }
  if (t.dtype == INFER_DTYPE_INT32) {
    const auto* p = static_cast<const int32_t*>(t.host_data);
    for (int64_t i = 0; i < n; ++i) (*out)[static_cast<size_t>(i)] = p[i];
    return true;
  }
  return false;
}

Dims strides_of(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

int64_t count_of(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A workgroup count folded into a 2-D grid (at most 65535 per dimension).
void set_groups(Dispatch* d, uint64_t groups) {
  if (groups <= 65535) {
    d->groups[0] = static_cast<uint32_t>(std::max<uint64_t>(groups, 1));
  } else {
    d->groups[0] = 65535;
    d->groups[1] = div_up(groups, 65535);
  }
}

bool fail(const NodeInfo& node, std::string* error, const std::string& what) {
  *error = node.describe() + ": " + what;
  return false;
}

// Normalizes axis `a` against `rank`; false when out of [-rank, rank).
bool norm_axis(int64_t a, int64_t rank, int64_t* out) {
  if (a < -rank || a >= rank) return false;
  *out = a < 0 ? a + rank : a;
  return true;
}

bool too_big(const TensorDesc& t, uint32_t words) {
  return t.elements() * static_cast<int64_t>(words) > kMaxWords;
}

// ---------------------------------------------------------------------------------
// The strided copy behind Transpose, Slice, Expand, Tile and Concat.

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

// Drops size-1 dims and merges neighbours that walk both tensors contiguously, so most
// copies run with one to three iteration dims whatever the tensors' rank.
StridedCopy simplify(const StridedCopy& c) {
  StridedCopy s;
  s.src_base = c.src_base;
  s.dst_base = c.dst_base;
  for (size_t i = 0; i < c.dims.size(); ++i) {
    if (c.dims[i] == 1) continue;
    if (!s.dims.empty() && s.src_mod.back() == 0 && c.src_mod[i] == 0 &&
        s.src_stride.back() == c.src_stride[i] * c.dims[i] &&
        s.dst_stride.back() == c.dst_stride[i] * c.dims[i]) {
      s.dims.back() *= c.dims[i];
      s.src_stride.back() = c.src_stride[i];
      s.dst_stride.back() = c.dst_stride[i];
      continue;
    }
    s.add(c.dims[i], c.src_stride[i], c.dst_stride[i], c.src_mod[i]);
  }
  return s;
}

bool add_copy(const NodeInfo& node, const StridedCopy& raw, uint32_t words, Operand src,
              Operand dst, OpPlan* out, std::string* error) {
  const StridedCopy c = simplify(raw);
  const int64_t n = count_of(c.dims);
  if (n == 0) return true;
  if (c.dims.size() > kMaxCopyRank)
    return fail(node, error,
                "the copy needs " + std::to_string(c.dims.size()) +
                    " iteration dims after merging, the shader takes at most 6");
  Dispatch d;
  d.shader = find_shader("shape_copy");
  if (d.shader == nullptr) return fail(node, error, "shader shape_copy is missing from the build");
  d.spec = {kLanes, 1, 1, words};
  d.push.assign(4 + 4 * kMaxCopyRank, 0);
  d.push[0] = static_cast<uint32_t>(n);
  d.push[1] = static_cast<uint32_t>(c.dims.size());
  d.push[2] = static_cast<uint32_t>(static_cast<int32_t>(c.src_base));
  d.push[3] = static_cast<uint32_t>(static_cast<int32_t>(c.dst_base));
  for (size_t i = 0; i < c.dims.size(); ++i) {
    d.push[4 + i] = static_cast<uint32_t>(c.dims[i]);
    d.push[4 + kMaxCopyRank + i] = static_cast<uint32_t>(static_cast<int32_t>(c.src_stride[i]));
    d.push[4 + 2 * kMaxCopyRank + i] = static_cast<uint32_t>(static_cast<int32_t>(c.dst_stride[i]));
    d.push[4 + 3 * kMaxCopyRank + i] = static_cast<uint32_t>(c.src_mod[i]);
  }
  d.bindings = {src, dst};
  set_groups(&d, div_up(static_cast<uint64_t>(n), kLanes));
  out->dispatches.push_back(std::move(d));
  return true;
}

// ---------------------------------------------------------------------------------
// Checks shared by the ops.

infer_support no(std::string* reason, const std::string& text) {
  *reason = text;
  return INFER_SUPPORT_NO;
}

// Alias ops move bytes of any dtype.
bool alias_dtype_ok(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = node_input(node, 0);
  if (x == nullptr) {
    *reason = "input 0 is missing";
    return false;
  }
  if (x->dtype == INFER_DTYPE_STRING || x->dtype == INFER_DTYPE_UNDEFINED) {
    *reason = "unsupported dtype " + dtype_name(x->dtype);
    return false;
  }
  return true;
}

// Copy ops move 4- and 8-byte elements.
bool copy_dtype_ok(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = node_input(node, 0);
  if (x == nullptr) {
    *reason = "input 0 is missing";
    return false;
  }
  if (copy_words(x->dtype) == 0) {
    *reason =
        "unsupported dtype " + dtype_name(x->dtype) + " (copies move 4- and 8-byte elements only)";
    return false;
  }
  return true;
}

// Input `i`, when present, must be a constant int64/int32 tensor.
bool const_ints_ok(const infer_node_view& node, size_t i, const char* what, bool required,
                   std::string* reason) {
  const infer_value_view* v = node_input(node, i);
  if (v == nullptr) {
    if (!required) return true;
    *reason = std::string(what) + " input is missing";
    return false;
  }
  if (v->dtype != INFER_DTYPE_INT64 && v->dtype != INFER_DTYPE_INT32) {
    *reason = std::string(what) + " input has dtype " + dtype_name(v->dtype) +
              ", expected int64 or int32";
    return false;
  }
  if (!is_const(v)) {
    *reason = std::string(what) + " input must be a constant";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------
// Reshape, Flatten, Squeeze, Unsqueeze, Identity: alias outputs.

OpPlan alias_plan(infer_dtype dtype, Dims dims) {
  OpPlan p;
  TensorDesc t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  p.outputs.push_back(std::move(t));
  p.alias_of_input = {0};
  return p;
}

infer_support reshape_check(const infer_node_view& node, std::string* reason) {
  if (!alias_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (node.opset < 5) return INFER_SUPPORT_YES;  // the shape is an attribute
  if (!const_ints_ok(node, 1, "shape", true, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool reshape_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                  std::string* error) {
  const TensorDesc& x = in[0];
  Dims shape;
  if (node.opset < 5) {
    shape = node.attr_ints("shape", {});
  } else if (in.size() < 2 || !in[1].present || !desc_ints(in[1], &shape)) {
    return fail(node, error, "shape input must be a constant int64 tensor");
  }
  const bool allowzero = node.opset >= 14 && node.attr_int("allowzero", 0) != 0;
  Dims dims(shape.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (s == 0 && !allowzero) {
      if (i >= x.dims.size())
        return fail(node, error,
                    "shape " + dims_text(shape) + " copies dim " + std::to_string(i) +
                        " of the input " + dims_text(x.dims) + ", which has no such dim");
      dims[i] = x.dims[i];
    } else if (s == -1) {
      if (infer_at >= 0) return fail(node, error, "shape " + dims_text(shape) + " has two -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    } else if (s < 0) {
      return fail(node, error, "shape " + dims_text(shape) + " has a negative value");
    } else {
      dims[i] = s;
    }
    known *= dims[i];
  }
  const int64_t total = x.elements();
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      return fail(node, error, "cannot reshape " + dims_text(x.dims) + " to " + dims_text(shape));
    dims[static_cast<size_t>(infer_at)] = total / known;
  } else if (known != total) {
    return fail(node, error,
                "cannot reshape " + dims_text(x.dims) + " (" + std::to_string(total) +
                    " elements) to " + dims_text(shape));
  }
  *out = alias_plan(x.dtype, std::move(dims));
  return true;
}

infer_support flatten_check(const infer_node_view& node, std::string* reason) {
  return alias_dtype_ok(node, reason) ? INFER_SUPPORT_YES : INFER_SUPPORT_NO;
}

bool flatten_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                  std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -rank || axis > rank)
    return fail(node, error,
                "axis " + std::to_string(axis) + " is out of range for input " + dims_text(x.dims));
  if (axis < 0) axis += rank;
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? a : b) *= x.dims[static_cast<size_t>(d)];
  *out = alias_plan(x.dtype, {a, b});
  return true;
}

bool squeeze_axes_from_input(const infer_node_view& node) { return node.opset >= 13; }

infer_support squeeze_check(const infer_node_view& node, std::string* reason) {
  if (!alias_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (!squeeze_axes_from_input(node)) return INFER_SUPPORT_YES;
  const bool unsqueeze = std::strcmp(node.op_type, "Unsqueeze") == 0;
  if (!const_ints_ok(node, 1, "axes", unsqueeze, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool squeeze_axes(const NodeInfo& node, std::span<const TensorDesc> in, Dims* axes,
                  std::string* error) {
  if (node.opset < 13) {
    *axes = node.attr_ints("axes", {});
    return true;
  }
  axes->clear();
  if (in.size() < 2 || !in[1].present) return true;
  if (!desc_ints(in[1], axes)) return fail(node, error, "axes input must be a constant");
  return true;
}

bool squeeze_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                  std::string* error) {
  const TensorDesc& x = in[0];
  Dims axes;
  if (!squeeze_axes(node, in, &axes, error)) return false;
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<char> drop(x.dims.size(), 0);
  if (axes.empty()) {
    for (size_t d = 0; d < x.dims.size(); ++d) drop[d] = x.dims[d] == 1;
  }
  for (int64_t a : axes) {
    int64_t ax;
    if (!norm_axis(a, rank, &ax))
      return fail(node, error,
                  "axis " + std::to_string(a) + " is out of range for input " + dims_text(x.dims));
    if (x.dims[static_cast<size_t>(ax)] != 1)
      return fail(node, error,
                  "cannot squeeze dim " + std::to_string(ax) + " of " + dims_text(x.dims) +
                      ": its size is not 1");
    drop[static_cast<size_t>(ax)] = 1;
  }
  Dims dims;
  for (size_t d = 0; d < x.dims.size(); ++d)
    if (!drop[d]) dims.push_back(x.dims[d]);
  *out = alias_plan(x.dtype, std::move(dims));
  return true;
}

bool unsqueeze_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                    std::string* error) {
  const TensorDesc& x = in[0];
  Dims axes;
  if (!squeeze_axes(node, in, &axes, error)) return false;
  if (axes.empty()) return fail(node, error, "axes is empty");
  const int64_t out_rank = static_cast<int64_t>(x.dims.size() + axes.size());
  std::vector<char> added(static_cast<size_t>(out_rank), 0);
  for (int64_t a : axes) {
    int64_t ax;
    if (!norm_axis(a, out_rank, &ax))
      return fail(node, error,
                  "axis " + std::to_string(a) + " is out of range for output rank " +
                      std::to_string(out_rank));
    if (added[static_cast<size_t>(ax)])
      return fail(node, error, "axes " + dims_text(axes) + " repeat axis " + std::to_string(ax));
    added[static_cast<size_t>(ax)] = 1;
  }
  Dims dims;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d)
    dims.push_back(added[static_cast<size_t>(d)] ? 1 : x.dims[next++]);
  *out = alias_plan(x.dtype, std::move(dims));
  return true;
}

infer_support identity_check(const infer_node_view& node, std::string* reason) {
  return alias_dtype_ok(node, reason) ? INFER_SUPPORT_YES : INFER_SUPPORT_NO;
}

bool identity_plan(const NodeInfo&, std::span<const TensorDesc> in, OpPlan* out, std::string*) {
  *out = alias_plan(in[0].dtype, in[0].dims);
  return true;
}

// ---------------------------------------------------------------------------------
// Transpose.

infer_support transpose_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  const infer_value_view* x = node_input(node, 0);
  if (x->rank > static_cast<int64_t>(kMaxCopyRank))
    return no(reason, "rank " + std::to_string(x->rank) + " is above 6");
  return INFER_SUPPORT_YES;
}

bool transpose_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                    std::string* error) {
  const TensorDesc& x = in[0];
  const size_t rank = x.dims.size();
  Dims perm = node.attr_ints("perm", {});
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank)
    return fail(node, error,
                "perm " + dims_text(perm) + " does not match input " + dims_text(x.dims));
  std::vector<char> seen(rank, 0);
  for (int64_t& p : perm) {
    int64_t a;
    if (!norm_axis(p, static_cast<int64_t>(rank), &a) || seen[static_cast<size_t>(a)])
      return fail(node, error, "perm " + dims_text(perm) + " is not a permutation");
    seen[static_cast<size_t>(a)] = 1;
    p = a;
  }
  const uint32_t words = copy_words(x.dtype);
  if (too_big(x, words)) return fail(node, error, "input " + dims_text(x.dims) + " is too large");
  Dims dims(rank);
  for (size_t i = 0; i < rank; ++i) dims[i] = x.dims[static_cast<size_t>(perm[i])];
  const Dims in_str = strides_of(x.dims), out_str = strides_of(dims);
  StridedCopy c;
  for (size_t i = 0; i < rank; ++i)
    c.add(dims[i], in_str[static_cast<size_t>(perm[i])], out_str[i]);
  out->outputs.push_back(TensorDesc{x.dtype, dims});
  return add_copy(node, c, words, Operand::input(0), Operand::output(0), out, error);
}

// ---------------------------------------------------------------------------------
// Concat.

infer_support concat_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (node.opset >= 4 && node_attr(node, "axis") == nullptr)
    return no(reason, "attribute axis is required");
  for (size_t i = 0; i < node.num_inputs; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v == nullptr) return no(reason, "input " + std::to_string(i) + " is missing");
    if (v->dtype != node_input(node, 0)->dtype) return no(reason, "inputs have different dtypes");
  }
  return INFER_SUPPORT_YES;
}

bool concat_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const TensorDesc& x0 = in[0];
  const int64_t rank = static_cast<int64_t>(x0.dims.size());
  int64_t axis;
  if (!norm_axis(node.attr_int("axis", 1), rank, &axis))
    return fail(node, error,
                "axis " + std::to_string(node.attr_int("axis", 1)) + " is out of range for input " +
                    dims_text(x0.dims));
  const size_t ax = static_cast<size_t>(axis);
  Dims dims = x0.dims;
  dims[ax] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const TensorDesc& t = in[i];
    bool same = t.dims.size() == x0.dims.size();
    for (size_t d = 0; same && d < t.dims.size(); ++d) same = d == ax || t.dims[d] == x0.dims[d];
    if (!same)
      return fail(node, error,
                  "input " + std::to_string(i) + " " + dims_text(t.dims) +
                      " does not match input 0 " + dims_text(x0.dims) + " outside axis " +
                      std::to_string(axis));
    dims[ax] += t.dims[ax];
  }
  const uint32_t words = copy_words(x0.dtype);
  TensorDesc y{x0.dtype, dims};
  if (too_big(y, words)) return fail(node, error, "output " + dims_text(dims) + " is too large");
  out->outputs.push_back(y);
  const Dims out_str = strides_of(dims);
  int64_t offset = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Dims in_str = strides_of(in[i].dims);
    StridedCopy c;
    c.dst_base = offset * out_str[ax];
    for (size_t d = 0; d < dims.size(); ++d) c.add(in[i].dims[d], in_str[d], out_str[d]);
    if (!add_copy(node, c, words, Operand::input(static_cast<uint32_t>(i)), Operand::output(0), out,
                  error))
      return false;
    offset += in[i].dims[ax];
  }
  return true;
}

// ---------------------------------------------------------------------------------
// Slice.

infer_support slice_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (node.opset < 10) return INFER_SUPPORT_YES;
  if (!const_ints_ok(node, 1, "starts", true, reason) ||
      !const_ints_ok(node, 2, "ends", true, reason) ||
      !const_ints_ok(node, 3, "axes", false, reason) ||
      !const_ints_ok(node, 4, "steps", false, reason))
    return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool slice_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                std::string* error) {
  const TensorDesc& x = in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  Dims starts, ends, axes, steps;
  if (node.opset < 10) {
    starts = node.attr_ints("starts", {});
    ends = node.attr_ints("ends", {});
    axes = node.attr_ints("axes", {});
  } else {
    auto read = [&](size_t i, Dims* v) {
      return i < in.size() && in[i].present && desc_ints(in[i], v);
    };
    if (!read(1, &starts) || !read(2, &ends))
      return fail(node, error, "starts and ends must be constant int tensors");
    if (in.size() > 3 && in[3].present && !read(3, &axes))
      return fail(node, error, "axes must be a constant int tensor");
    if (in.size() > 4 && in[4].present && !read(4, &steps))
      return fail(node, error, "steps must be a constant int tensor");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return fail(node, error,
                "starts " + dims_text(starts) + ", ends " + dims_text(ends) + ", axes " +
                    dims_text(axes) + " and steps " + dims_text(steps) +
                    " must have the same length");
  const Dims in_str = strides_of(x.dims);
  Dims begin(x.dims.size(), 0), step(x.dims.size(), 1), dims = x.dims;
  std::vector<char> seen(x.dims.size(), 0);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a;
    if (!norm_axis(axes[i], rank, &a) || seen[static_cast<size_t>(a)])
      return fail(node, error,
                  "axes " + dims_text(axes) + " is invalid for input " + dims_text(x.dims));
    seen[static_cast<size_t>(a)] = 1;
    const size_t d = static_cast<size_t>(a);
    const int64_t n = x.dims[d];
    const int64_t st = steps[i];
    if (st == 0) return fail(node, error, "steps " + dims_text(steps) + " has a zero");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += n;
    if (e < 0) e += n;
    int64_t count;
    if (n == 0) {
      count = 0;
      s = 0;
    } else if (st > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      count = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      count = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    begin[d] = s;
    step[d] = st;
    dims[d] = count;
  }
  const uint32_t words = copy_words(x.dtype);
  if (too_big(x, words)) return fail(node, error, "input " + dims_text(x.dims) + " is too large");
  out->outputs.push_back(TensorDesc{x.dtype, dims});
  if (count_of(dims) == 0) return true;
  const Dims out_str = strides_of(dims);
  StridedCopy c;
  for (size_t d = 0; d < dims.size(); ++d) {
    c.src_base += begin[d] * in_str[d];
    c.add(dims[d], in_str[d] * step[d], out_str[d]);
  }
  return add_copy(node, c, words, Operand::input(0), Operand::output(0), out, error);
}

// ---------------------------------------------------------------------------------
// Expand and Tile.

infer_support expand_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (!const_ints_ok(node, 1, "shape", true, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool expand_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const TensorDesc& x = in[0];
  Dims shape;
  if (in.size() < 2 || !desc_ints(in[1], &shape))
    return fail(node, error, "shape input must be a constant int tensor");
  const size_t rank = std::max(shape.size(), x.dims.size());
  Dims dims(rank), src_str(rank, 0);
  const Dims in_str = strides_of(x.dims);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t xi = static_cast<int64_t>(i) - static_cast<int64_t>(rank - x.dims.size());
    const int64_t si = static_cast<int64_t>(i) - static_cast<int64_t>(rank - shape.size());
    const int64_t xd = xi >= 0 ? x.dims[static_cast<size_t>(xi)] : 1;
    const int64_t sd = si >= 0 ? shape[static_cast<size_t>(si)] : 1;
    if (xd != 1 && sd != 1 && xd != sd)
      return fail(
          node, error,
          "input " + dims_text(x.dims) + " does not broadcast to shape " + dims_text(shape));
    dims[i] = xd == 1 ? sd : xd;
    if (xi >= 0 && xd != 1) src_str[i] = in_str[static_cast<size_t>(xi)];
  }
  const uint32_t words = copy_words(x.dtype);
  TensorDesc y{x.dtype, dims};
  if (too_big(y, words)) return fail(node, error, "output " + dims_text(dims) + " is too large");
  out->outputs.push_back(y);
  const Dims out_str = strides_of(dims);
  StridedCopy c;
  for (size_t i = 0; i < rank; ++i) c.add(dims[i], src_str[i], out_str[i]);
  return add_copy(node, c, words, Operand::input(0), Operand::output(0), out, error);
}

infer_support tile_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  if (!const_ints_ok(node, 1, "repeats", true, reason)) return INFER_SUPPORT_NO;
  return INFER_SUPPORT_YES;
}

bool tile_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
               std::string* error) {
  const TensorDesc& x = in[0];
  Dims reps;
  if (in.size() < 2 || !desc_ints(in[1], &reps))
    return fail(node, error, "repeats input must be a constant int tensor");
  if (reps.size() != x.dims.size())
    return fail(node, error,
                "repeats " + dims_text(reps) + " does not match input " + dims_text(x.dims));
  Dims dims(x.dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (reps[d] < 0)
      return fail(node, error, "repeats " + dims_text(reps) + " has a negative value");
    dims[d] = x.dims[d] * reps[d];
  }
  const uint32_t words = copy_words(x.dtype);
  TensorDesc y{x.dtype, dims};
  if (too_big(y, words)) return fail(node, error, "output " + dims_text(dims) + " is too large");
  out->outputs.push_back(y);
  const Dims in_str = strides_of(x.dims), out_str = strides_of(dims);
  StridedCopy c;
  for (size_t d = 0; d < dims.size(); ++d)
    c.add(dims[d], in_str[d], out_str[d], reps[d] > 1 ? x.dims[d] : 0);
  return add_copy(node, c, words, Operand::input(0), Operand::output(0), out, error);
}

// ---------------------------------------------------------------------------------
// Gather.

infer_support gather_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  const infer_value_view* idx = node_input(node, 1);
  if (idx == nullptr) return no(reason, "indices input is missing");
  if (idx->dtype != INFER_DTYPE_INT64 && idx->dtype != INFER_DTYPE_INT32)
    return no(reason, "indices dtype " + dtype_name(idx->dtype) + " is not int64 or int32");
  return INFER_SUPPORT_YES;
}

bool gather_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const TensorDesc& x = in[0];
  const TensorDesc& idx = in[1];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  int64_t axis;
  if (!norm_axis(node.attr_int("axis", 0), rank, &axis))
    return fail(node, error,
                "axis " + std::to_string(node.attr_int("axis", 0)) + " is out of range for input " +
                    dims_text(x.dims));
  const size_t ax = static_cast<size_t>(axis);
  int64_t inner = 1;
  for (size_t d = ax + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
  const int64_t axis_n = x.dims[ax];
  Dims dims(x.dims.begin(), x.dims.begin() + axis);
  dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
  dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
  const int64_t n_idx = idx.elements();
  if (idx.host_data != nullptr) {
    Dims values;
    desc_ints(idx, &values);
    for (int64_t v : values)
      if (v < -axis_n || v >= axis_n)
        return fail(node, error,
                    "index " + std::to_string(v) + " is out of range for axis " +
                        std::to_string(axis) + " of " + dims_text(x.dims));
  }
  const uint32_t words = copy_words(x.dtype);
  TensorDesc y{x.dtype, dims};
  if (too_big(y, words) || too_big(x, words))
    return fail(node, error,
                "input " + dims_text(x.dims) + " or output " + dims_text(dims) + " is too large");
  out->outputs.push_back(y);
  const int64_t n = y.elements();
  if (n == 0) return true;
  if (axis_n == 0)
    return fail(node, error, "cannot gather from the empty axis of " + dims_text(x.dims));
  Dispatch d;
  d.shader = find_shader("gather");
  if (d.shader == nullptr) return fail(node, error, "shader gather is missing from the build");
  d.spec = {kLanes, 1, 1, words, idx.dtype == INFER_DTYPE_INT64 ? 2u : 1u};
  d.push = {static_cast<uint32_t>(n), static_cast<uint32_t>(inner), static_cast<uint32_t>(n_idx),
            static_cast<uint32_t>(axis_n)};
  d.bindings = {Operand::input(0), Operand::input(1), Operand::output(0)};
  set_groups(&d, div_up(static_cast<uint64_t>(n), kLanes));
  out->dispatches.push_back(std::move(d));
  return true;
}

// ---------------------------------------------------------------------------------
// Pad.

int pad_mode(const std::string& mode, int64_t opset) {
  if (mode == "constant") return 0;
  if (mode == "reflect") return 1;
  if (mode == "edge") return 2;
  if (mode == "wrap" && opset >= 19) return 3;
  return -1;
}

infer_support pad_check(const infer_node_view& node, std::string* reason) {
  if (!copy_dtype_ok(node, reason)) return INFER_SUPPORT_NO;
  const std::string mode = sdk::attr_string(&node, "mode", "constant");
  if (pad_mode(mode, node.opset) < 0) return no(reason, "unsupported attribute mode=" + mode);
  const infer_value_view* x = node_input(node, 0);
  if (x->rank > static_cast<int64_t>(kMaxCopyRank))
    return no(reason, "rank " + std::to_string(x->rank) + " is above 6");
  if (node.opset < 11) return INFER_SUPPORT_YES;
  if (!const_ints_ok(node, 1, "pads", true, reason) ||
      !const_ints_ok(node, 3, "axes", false, reason))
    return INFER_SUPPORT_NO;
  const infer_value_view* value = node_input(node, 2);
  if (value != nullptr && value->dtype != x->dtype)
    return no(reason,
              "constant_value dtype " + dtype_name(value->dtype) + " differs from the data's");
  return INFER_SUPPORT_YES;
}

bool pad_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
              std::string* error) {
  const TensorDesc& x = in[0];
  const size_t rank = x.dims.size();
  const uint32_t words = copy_words(x.dtype);
  const int mode = pad_mode(node.attr_string("mode", "constant"), node.opset);
  if (mode < 0) return fail(node, error, "unsupported mode " + node.attr_string("mode", ""));
  Dims pads, axes;
  uint32_t value[2] = {0, 0};
  bool value_from_buffer = false;
  if (node.opset < 11) {
    pads = node.attr_ints(node.opset < 2 ? "paddings" : "pads", {});
    const double v = node.attr_float("value", 0.0);
    if (x.dtype == INFER_DTYPE_FLOAT32) {
      value[0] = spec_float(static_cast<float>(v));
    } else if (x.dtype == INFER_DTYPE_FLOAT64) {
      std::memcpy(value, &v, sizeof v);
    } else {
      const int64_t iv = static_cast<int64_t>(v);
      std::memcpy(value, &iv, words * 4);
    }
  } else {
    if (in.size() < 2 || !desc_ints(in[1], &pads))
      return fail(node, error, "pads input must be a constant int tensor");
    if (in.size() > 3 && in[3].present && !desc_ints(in[3], &axes))
      return fail(node, error, "axes input must be a constant int tensor");
    if (in.size() > 2 && in[2].present) {
      if (in[2].elements() != 1)
        return fail(node, error,
                    "constant_value must hold one element, got " + dims_text(in[2].dims));
      if (in[2].host_data != nullptr)
        std::memcpy(value, in[2].host_data, words * 4);
      else
        value_from_buffer = true;
    }
  }
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  if (pads.size() != 2 * axes.size())
    return fail(node, error,
                "pads " + dims_text(pads) + " must have 2 values per padded axis (" +
                    std::to_string(axes.size()) + " axes)");
  Dims begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a;
    if (!norm_axis(axes[i], static_cast<int64_t>(rank), &a))
      return fail(node, error,
                  "axes " + dims_text(axes) + " is invalid for input " + dims_text(x.dims));
    begin[static_cast<size_t>(a)] = pads[i];
    end[static_cast<size_t>(a)] = pads[i + axes.size()];
  }
  Dims dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    dims[d] = x.dims[d] + begin[d] + end[d];
    if (dims[d] < 0)
      return fail(node, error,
                  "pads " + dims_text(pads) + " remove more than dim " + std::to_string(d) +
                      " of " + dims_text(x.dims) + " holds");
  }
  if (rank > kMaxCopyRank) return fail(node, error, "rank above 6 is not supported");
  TensorDesc y{x.dtype, dims};
  if (too_big(y, words) || too_big(x, words))
    return fail(node, error,
                "input " + dims_text(x.dims) + " or output " + dims_text(dims) + " is too large");
  out->outputs.push_back(y);
  const int64_t n = y.elements();
  if (n == 0) return true;
  if (x.elements() == 0 && mode != 0)
    return fail(node, error,
                "mode " + node.attr_string("mode", "") + " cannot pad the empty input " +
                    dims_text(x.dims));
  Dispatch d;
  d.shader = find_shader("shape_pad");
  if (d.shader == nullptr) return fail(node, error, "shader shape_pad is missing from the build");
  d.spec = {kLanes, 1, 1, words, static_cast<uint32_t>(mode), value_from_buffer ? 1u : 0u};
  d.push.assign(4 + 3 * kMaxCopyRank, 0);
  d.push[0] = static_cast<uint32_t>(n);
  d.push[1] = static_cast<uint32_t>(rank);
  d.push[2] = value[0];
  d.push[3] = value[1];
  for (size_t i = 0; i < rank; ++i) {
    d.push[4 + i] = static_cast<uint32_t>(dims[i]);
    d.push[4 + kMaxCopyRank + i] = static_cast<uint32_t>(x.dims[i]);
    d.push[4 + 2 * kMaxCopyRank + i] = static_cast<uint32_t>(static_cast<int32_t>(begin[i]));
  }
  // An empty input cannot be bound as a buffer of its own: the constant mode never reads
  // it, so the output stands in for it.
  const Operand src = x.elements() == 0 ? Operand::output(0) : Operand::input(0);
  d.bindings = {src, Operand::output(0), value_from_buffer ? Operand::input(2) : src};
  set_groups(&d, div_up(static_cast<uint64_t>(n), kLanes));
  out->dispatches.push_back(std::move(d));
  return true;
}

}  // namespace

void add_shape_ops(std::vector<OpKernel>& table) {
  table.push_back({"", "Reshape", reshape_check, reshape_plan, nullptr});
  table.push_back({"", "Flatten", flatten_check, flatten_plan, nullptr});
  table.push_back({"", "Squeeze", squeeze_check, squeeze_plan, nullptr});
  table.push_back({"", "Unsqueeze", squeeze_check, unsqueeze_plan, nullptr});
  table.push_back({"", "Identity", identity_check, identity_plan, nullptr});
  table.push_back({"", "Transpose", transpose_check, transpose_plan, nullptr});
  table.push_back({"", "Concat", concat_check, concat_plan, nullptr});
  table.push_back({"", "Slice", slice_check, slice_plan, nullptr});
  table.push_back({"", "Expand", expand_check, expand_plan, nullptr});
  table.push_back({"", "Tile", tile_check, tile_plan, nullptr});
  table.push_back({"", "Gather", gather_check, gather_plan, nullptr});
  table.push_back({"", "Pad", pad_check, pad_plan, nullptr});
}

}  // namespace infer::vk
