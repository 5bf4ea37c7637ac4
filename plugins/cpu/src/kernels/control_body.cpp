#include "control_body.hpp"

#include <algorithm>
#include <cstring>

#include "../kernel_registry.hpp"

namespace infer::cpu::kernels {
namespace {

DeclaredValue declare(const infer_value_view* v) {
  DeclaredValue d;
  if (v == nullptr) return d;
  d.name = v->name ? v->name : "";
  d.dtype = v->dtype;
  d.rank = v->rank;
  if (v->rank > 0 && v->dims != nullptr) d.dims.assign(v->dims, v->dims + v->rank);
  return d;
}

// select_kernel's messages start with "cpu: "; a nested one is quoted without it.
std::string strip_cpu_prefix(const std::string& m) {
  return m.rfind("cpu: ", 0) == 0 ? m.substr(5) : m;
}

}  // namespace

size_t CaptureList::add(const infer_value_view* v) {
  auto it = std::find(views_.begin(), views_.end(), v);
  if (it != views_.end()) return static_cast<size_t>(it - views_.begin());
  views_.push_back(v);
  return views_.size() - 1;
}

const infer_graph_view* graph_attr(const infer_node_view& node, const char* attr) {
  const infer_attr_view* a = sdk::find_attr(&node, attr);
  if (a == nullptr || a->type != INFER_ATTR_GRAPH || a->count < 1 || a->graphs == nullptr)
    return nullptr;
  return a->graphs[0];
}

Status check_body_supported(const infer_node_view& node, const char* attr) {
  const infer_graph_view* g = graph_attr(node, attr);
  if (g == nullptr) return Status::ok();
  for (size_t n = 0; n < g->num_nodes; ++n) {
    const infer_node_view* inner = g->nodes[n];
    if (inner == nullptr) continue;  // compile reports it
    auto selected = select_kernel(*inner);
    if (!selected.is_ok()) {
      const std::string name = inner->name && inner->name[0] ? inner->name : cat("#", n);
      return unsupported(attr, ": node '", name, "' (", inner->op_type ? inner->op_type : "",
                         "): ", strip_cpu_prefix(selected.status().message()));
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<CompiledBody>> CompiledBody::compile(const KernelInit& init,
                                                            const char* attr,
                                                            CaptureList& captures) {
  const infer_graph_view* g = graph_attr(*init.node, attr);
  if (g == nullptr) return invalid("missing graph attribute '", attr, "'");
  std::unique_ptr<CompiledBody> body(new CompiledBody());
  body->attr_ = attr;
  auto exe = Executable::compile_subgraph(*init.host, *g);
  if (!exe.is_ok()) return exe.status().with_prefix(cat(attr, ": "));
  body->exe_ = std::move(exe).value();
  for (const infer_value_view* v : body->exe_->captures()) {
    body->capture_index_.push_back(captures.add(v));
    body->capture_names_.push_back(v->name ? v->name : "");
  }
  for (size_t i = 0; i < g->num_inputs; ++i) body->inputs_.push_back(declare(g->inputs[i]));
  for (size_t i = 0; i < g->num_outputs; ++i) body->outputs_.push_back(declare(g->outputs[i]));
  return body;
}

Status CompiledBody::run(const KernelContext& ctx, std::span<const Tensor* const> inputs,
                         std::vector<OwnedTensor>* outputs, const std::string& where) const {
  std::vector<const Tensor*> caps(capture_index_.size());
  for (size_t j = 0; j < caps.size(); ++j) {
    caps[j] = ctx.capture(capture_index_[j]);
    if (caps[j] == nullptr)
      return internal(where, "captured value '", capture_names_[j], "' was not bound");
  }
  Status st = exe_->run_body(inputs, caps, ctx.run(), outputs);
  if (!st.is_ok()) return st.with_prefix(where);
  if (outputs->size() != outputs_.size())
    return internal(where, "body returned ", outputs->size(), " outputs, expected ",
                    outputs_.size());
  return Status::ok();
}

Result<bool> read_bool_scalar(const Tensor& t, const char* what) {
  if (t.dtype != INFER_DTYPE_BOOL) return invalid(what, " must be bool, got ", dtype_name(t.dtype));
  if (t.numel() != 1)
    return invalid(what, " must hold exactly one element, got shape ", dims_str(t.dims));
  return *t.as<uint8_t>() != 0;
}

Result<int64_t> read_int_scalar(const Tensor& t, const char* what) {
  if (t.numel() != 1)
    return invalid(what, " must hold exactly one element, got shape ", dims_str(t.dims));
  if (t.dtype == INFER_DTYPE_INT64) return *t.as<int64_t>();
  if (t.dtype == INFER_DTYPE_INT32) return static_cast<int64_t>(*t.as<int32_t>());
  return invalid(what, " must be int64, got ", dtype_name(t.dtype));
}

namespace {
// Splits `dims` around `axis`: elements before it, its length, bytes of one slice row.
void split_at(const Tensor& t, int64_t axis, int64_t* outer, int64_t* len, size_t* inner_bytes) {
  *outer = 1;
  for (int64_t d = 0; d < axis; ++d) *outer *= t.dims[d];
  *len = t.dims[axis];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < t.dims.size(); ++d) inner *= t.dims[d];
  *inner_bytes = static_cast<size_t>(inner) * sdk::dtype_size(t.dtype);
}
}  // namespace

Result<OwnedTensor> take_slice(const sdk::Host& host, const Tensor& src, int64_t axis,
                               int64_t index) {
  Dims dims = src.dims;
  dims.erase(dims.begin() + axis);
  CPU_ASSIGN_OR_RETURN(OwnedTensor out, OwnedTensor::allocate(host, src.dtype, dims));
  int64_t outer, len;
  size_t row;
  split_at(src, axis, &outer, &len, &row);
  if (row == 0 || outer == 0) return out;
  const auto* s = static_cast<const uint8_t*>(src.data);
  auto* d = static_cast<uint8_t*>(out.tensor().data);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(d + static_cast<size_t>(o) * row, s + static_cast<size_t>(o * len + index) * row,
                row);
  return out;
}

void put_slice(const Tensor& dst, int64_t axis, int64_t index, const Tensor& src) {
  int64_t outer, len;
  size_t row;
  split_at(dst, axis, &outer, &len, &row);
  if (row == 0 || outer == 0) return;
  const auto* s = static_cast<const uint8_t*>(src.data);
  auto* d = static_cast<uint8_t*>(dst.data);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(d + static_cast<size_t>(o * len + index) * row, s + static_cast<size_t>(o) * row,
                row);
}

Status copy_to_output(KernelContext& ctx, size_t i, const Tensor& src) {
  if (!ctx.has_output(i)) return Status::ok();
  CPU_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(i, src.dtype, src.dims));
  if (src.bytes() > 0) std::memcpy(out->data, src.data, src.bytes());
  return Status::ok();
}

Dims empty_stack_dims(const DeclaredValue& v, int64_t axis, int64_t extra_dim) {
  Dims dims;
  if (v.rank > 0)
    for (int64_t d : v.dims) dims.push_back(d < 0 ? 0 : d);
  axis = std::clamp<int64_t>(axis, 0, static_cast<int64_t>(dims.size()));
  dims.insert(dims.begin() + axis, extra_dim);
  return dims;
}

}  // namespace infer::cpu::kernels
