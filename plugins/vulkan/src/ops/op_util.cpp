// Helpers every op family uses (declared in op_kernel.hpp).
#include <cmath>
#include <limits>
#include <string>

#include "op_kernel.hpp"

namespace infer::vk {

// ---- Activations -------------------------------------------------------------------------

namespace {

struct ActivationInfo {
  const char* name;
  Activation kind;
  size_t params;  // the number activation_params must have (0 also accepted: defaults)
  float d0, d1;   // defaults
};

constexpr float kInf = std::numeric_limits<float>::infinity();
const ActivationInfo kActivations[] = {
    {"", Activation::kNone, 0, 0, 0},
    {"Relu", Activation::kRelu, 0, 0, 0},
    {"Tanh", Activation::kTanh, 0, 0, 0},
    {"Sigmoid", Activation::kSigmoid, 0, 0, 0},
    {"LeakyRelu", Activation::kLeakyRelu, 1, 0.01f, 0},
    {"Clip", Activation::kClip, 2, -kInf, kInf},
    {"HardSigmoid", Activation::kHardSigmoid, 2, 0.2f, 0.5f},
    {"HardSwish", Activation::kHardSwish, 0, 0, 0},
    {"Gelu", Activation::kGelu, 0, 0, 0},
    {"GeluTanh", Activation::kGeluTanh, 0, 0, 0},
};

const ActivationInfo* find_activation(const std::string& name) {
  for (const ActivationInfo& a : kActivations)
    if (name == a.name) return &a;
  return nullptr;
}

bool check_activation(const std::string& name, size_t num_params, const ActivationInfo** out,
                      std::string* error) {
  const ActivationInfo* a = find_activation(name);
  if (a == nullptr) {
    *error = "unsupported activation '" + name + "'";
    return false;
  }
  if (num_params != 0 && num_params != a->params) {
    *error = "activation '" + name + "' takes " + std::to_string(a->params) +
             " activation_params, got " + std::to_string(num_params);
    return false;
  }
  *out = a;
  return true;
}

}  // namespace

bool parse_activation(const NodeInfo& node, ActivationSpec* out, std::string* error) {
  const std::string name = node.attr_string("activation", "");
  const std::vector<double> params = node.attr_floats("activation_params", {});
  const ActivationInfo* a = nullptr;
  std::string why;
  if (!check_activation(name, params.size(), &a, &why)) {
    *error = node.describe() + ": " + why;
    return false;
  }
  out->kind = a->kind;
  out->p0 = params.size() > 0 ? static_cast<float>(params[0]) : a->d0;
  out->p1 = params.size() > 1 ? static_cast<float>(params[1]) : a->d1;
  return true;
}

bool activation_supported(const infer_node_view& node, std::string* reason) {
  const infer_attr_view* act = node_attr(node, "activation");
  const infer_attr_view* params = node_attr(node, "activation_params");
  std::string name;
  if (act != nullptr) {
    if (act->type != INFER_ATTR_STRING) {
      *reason = "attribute activation must be a string";
      return false;
    }
    name.assign(act->s ? act->s : "", act->s ? act->s_len : 0);
  }
  size_t count = 0;
  if (params != nullptr) {
    if (params->type != INFER_ATTR_FLOATS) {
      *reason = "attribute activation_params must be floats";
      return false;
    }
    count = params->count;
  }
  const ActivationInfo* a = nullptr;
  return check_activation(name, count, &a, reason);
}

// ---- Names and views ---------------------------------------------------------------------

const infer_value_view* node_input(const infer_node_view& node, size_t i) {
  return i < node.num_inputs ? node.inputs[i] : nullptr;
}

const infer_attr_view* node_attr(const infer_node_view& node, const char* key) {
  for (size_t i = 0; i < node.num_attrs; ++i)
    if (node.attrs[i].name != nullptr && std::string_view(key) == node.attrs[i].name)
      return &node.attrs[i];
  return nullptr;
}

// ---- Grids and broadcasting --------------------------------------------------------------

void set_grid_1d(Dispatch& d, uint64_t invocations, uint32_t local_size) {
  if (d.spec.size() < 3) d.spec.resize(3);
  d.spec[0] = local_size;
  d.spec[1] = 1;
  d.spec[2] = 1;
  const uint64_t groups = (invocations + local_size - 1) / local_size;
  if (groups <= kMaxGroupsPerDim) {
    d.groups[0] = static_cast<uint32_t>(groups);
    d.groups[1] = 1;
  } else {
    d.groups[0] = kMaxGroupsPerDim;
    d.groups[1] = static_cast<uint32_t>((groups + kMaxGroupsPerDim - 1) / kMaxGroupsPerDim);
  }
  d.groups[2] = 1;
}

bool broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b,
                      std::vector<int64_t>* out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

std::vector<int64_t> broadcast_strides(std::span<const int64_t> dims,
                                       std::span<const int64_t> out_dims) {
  std::vector<int64_t> strides(out_dims.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < dims.size() && k < out_dims.size(); ++k) {
    const size_t di = dims.size() - 1 - k;
    const size_t oi = out_dims.size() - 1 - k;
    strides[oi] = (dims[di] == 1 && out_dims[oi] != 1) ? 0 : stride;
    stride *= dims[di];
  }
  return strides;
}

}  // namespace infer::vk
