// Helpers of the shape operators (declared in shape_util.hpp).
#include "shape_util.hpp"

#include <cstring>
#include <utility>

namespace infer::vk::shape_ops {

// ---- Plan time -------------------------------------------------------------------------

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

bool input_ints(std::span<const TensorDesc> in, size_t i, Dims* out) {
  return i < in.size() && in[i].present && desc_ints(in[i], out);
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

bool norm_axis(int64_t a, int64_t rank, int64_t* out) {
  if (a < -rank || a >= rank) return false;
  *out = a < 0 ? a + rank : a;
  return true;
}

bool axis_attr(const NodeInfo& node, int64_t fallback, const TensorDesc& x, int64_t* axis,
               std::string* error) {
  const int64_t a = node.attr_int("axis", fallback);
  if (norm_axis(a, static_cast<int64_t>(x.dims.size()), axis)) return true;
  return fail(node, error,
              "axis " + std::to_string(a) + " is out of range for input " + dims_text(x.dims));
}

namespace {

bool too_big(const TensorDesc& t, uint32_t words) {
  return t.elements() * static_cast<int64_t>(words) > kMaxWords;
}

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

}  // namespace

bool declare_output(const NodeInfo& node, const TensorDesc& x, const TensorDesc& y, SizeCheck check,
                    OpPlan* out, std::string* error) {
  const uint32_t words = copy_words(x.dtype);
  const bool input_big = check != SizeCheck::kOutput && too_big(x, words);
  const bool output_big = check != SizeCheck::kInput && too_big(y, words);
  if (check == SizeCheck::kBoth && (input_big || output_big))
    return fail(node, error,
                "input " + dims_text(x.dims) + " or output " + dims_text(y.dims) + " is too large");
  if (input_big) return fail(node, error, "input " + dims_text(x.dims) + " is too large");
  if (output_big) return fail(node, error, "output " + dims_text(y.dims) + " is too large");
  out->outputs.push_back(y);
  return true;
}

bool add_dispatch(const NodeInfo& node, const char* name, Dispatch d, int64_t n, OpPlan* out,
                  std::string* error) {
  d.shader = find_shader(name);
  if (d.shader == nullptr)
    return fail(node, error, std::string("shader ") + name + " is missing from the build");
  set_groups(&d, div_up(static_cast<uint64_t>(n), kLanes));
  out->dispatches.push_back(std::move(d));
  return true;
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
  return add_dispatch(node, "shape_copy", std::move(d), n, out, error);
}

// ---- Partition time --------------------------------------------------------------------

bool is_const(const infer_value_view* v) { return v != nullptr && v->const_data != nullptr; }

namespace {

// Input 0 of a shape op: present, else *reason and nullptr.
const infer_value_view* data_input(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = node_input(node, 0);
  if (x == nullptr) *reason = "input 0 is missing";
  return x;
}

}  // namespace

bool alias_dtype_ok(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = data_input(node, reason);
  if (x == nullptr) return false;
  if (x->dtype == INFER_DTYPE_STRING || x->dtype == INFER_DTYPE_UNDEFINED) {
    *reason = "unsupported dtype " + dtype_name(x->dtype);
    return false;
  }
  return true;
}

bool copy_dtype_ok(const infer_node_view& node, std::string* reason) {
  const infer_value_view* x = data_input(node, reason);
  if (x == nullptr) return false;
  if (copy_words(x->dtype) == 0) {
    *reason =
        "unsupported dtype " + dtype_name(x->dtype) + " (copies move 4- and 8-byte elements only)";
    return false;
  }
  return true;
}

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

}  // namespace infer::vk::shape_ops
