#include "fused_common.hpp"

#include <algorithm>
#include <cstring>

#include "../host_threads.hpp"
#include "../node_util.hpp"
#include "nn_util.hpp"
#include "simd/vec.hpp"

namespace infer::cpu::kernels {
namespace {

struct ActivationName {
  const char* name;
  Activation::Kind kind;
  size_t num_params;
  const char* params;  // what activation_params holds, for messages
};

constexpr ActivationName kActivations[] = {
    {"", Activation::Kind::kNone, 0, "[]"},
    {"Relu", Activation::Kind::kRelu, 0, "[]"},
    {"Tanh", Activation::Kind::kTanh, 0, "[]"},
    {"Sigmoid", Activation::Kind::kSigmoid, 0, "[]"},
    {"LeakyRelu", Activation::Kind::kLeakyRelu, 1, "[alpha]"},
    {"Clip", Activation::Kind::kClip, 2, "[min, max]"},
    {"HardSigmoid", Activation::Kind::kHardSigmoid, 2, "[alpha, beta]"},
    {"HardSwish", Activation::Kind::kHardSwish, 0, "[]"},
    {"Gelu", Activation::Kind::kGelu, 0, "[]"},
    {"GeluTanh", Activation::Kind::kGeluTanh, 0, "[]"},
};

const ActivationName* find_activation(const std::string& name) {
  for (const ActivationName& a : kActivations)
    if (name == a.name) return &a;
  return nullptr;
}

std::string activation_list() {
  std::string s = "\"\" (none)";
  for (const ActivationName& a : kActivations)
    if (a.name[0] != '\0') s += cat(", ", a.name);
  return s;
}

// The activation functions, as the standalone ONNX kernels (elementwise_unary.cpp,
// clip.cpp) compute them on the compute type C, so a fused node gives the values of its
// decomposition.
template <typename C>
C activate(C x, const Activation& a) {
  switch (a.kind) {
    case Activation::Kind::kNone:
      return x;
    case Activation::Kind::kRelu:
      return x > C(0) ? x : C(0);
    case Activation::Kind::kTanh:
      return std::tanh(x);
    case Activation::Kind::kSigmoid:
      return C(1) / (C(1) + std::exp(-x));
    case Activation::Kind::kLeakyRelu:
      return x >= C(0) ? x : static_cast<C>(C(static_cast<float>(a.p0)) * x);
    case Activation::Kind::kClip: {
      // As Clip: NaN passes through, and min > max gives max everywhere.
      const C v = x < C(a.p0) ? C(a.p0) : x;
      return v > C(a.p1) ? C(a.p1) : v;
    }
    case Activation::Kind::kHardSigmoid:
      return std::fmax(
          C(0), std::fmin(C(1), C(static_cast<float>(a.p0)) * x + C(static_cast<float>(a.p1))));
    case Activation::Kind::kHardSwish:
      return x * std::fmax(C(0), std::fmin(C(1), x / C(6) + C(0.5)));
    case Activation::Kind::kGelu:
      return gelu_erf(x);
    case Activation::Kind::kGeluTanh:
      return gelu_tanh(x);
  }
  return x;
}

}  // namespace

std::string node_label(const infer_node_view& node) {
  return cat(node.op_type ? node.op_type : "", " node '", node.name ? node.name : "", "'");
}

Status check_activation(const infer_node_view& node) {
  const infer_attr_view* act = sdk::find_attr(&node, "activation");
  if (act != nullptr && act->type != INFER_ATTR_STRING)
    return unsupported(node_label(node), ": attribute 'activation' must be a string");
  const std::string name = attr_s(node, "activation", "");
  const ActivationName* a = find_activation(name);
  if (a == nullptr)
    return unsupported(node_label(node), ": attribute 'activation' is '", name,
                       "', expected one of ", activation_list());
  const infer_attr_view* params = sdk::find_attr(&node, "activation_params");
  if (params != nullptr && params->type != INFER_ATTR_FLOATS)
    return unsupported(node_label(node),
                       ": attribute 'activation_params' must be a list of floats");
  const size_t count = params != nullptr ? params->count : 0;
  if (count != a->num_params)
    return unsupported(node_label(node), ": attribute 'activation_params' has ", count,
                       count == 1 ? " value" : " values", ", activation '", name, "' takes ",
                       a->num_params, " (", a->params, ")");
  return Status::ok();
}

Activation read_activation(const infer_node_view& node) {
  Activation out;
  const ActivationName* a = find_activation(attr_s(node, "activation", ""));
  if (a == nullptr) return out;
  out.kind = a->kind;
  const std::vector<double> p = attr_floats(node, "activation_params");
  if (p.size() > 0) out.p0 = p[0];
  if (p.size() > 1) out.p1 = p[1];
  return out;
}

simd::Act to_simd_act(const Activation& act) {
  using K = Activation::Kind;
  simd::Act out;
  out.p0 = static_cast<float>(act.p0);
  out.p1 = static_cast<float>(act.p1);
  switch (act.kind) {
    case K::kNone: out.kind = simd::ActKind::kNone; break;
    case K::kRelu: out.kind = simd::ActKind::kRelu; break;
    case K::kTanh: out.kind = simd::ActKind::kTanh; break;
    case K::kSigmoid: out.kind = simd::ActKind::kSigmoid; break;
    case K::kLeakyRelu: out.kind = simd::ActKind::kLeakyRelu; break;
    case K::kClip: out.kind = simd::ActKind::kClip; break;
    case K::kHardSigmoid: out.kind = simd::ActKind::kHardSigmoid; break;
    case K::kHardSwish: out.kind = simd::ActKind::kHardSwish; break;
    case K::kGelu: out.kind = simd::ActKind::kGelu; break;
    case K::kGeluTanh: out.kind = simd::ActKind::kGeluTanh; break;
  }
  return out;
}

Status apply_epilogue(KernelContext& ctx, Tensor& Y, const Tensor* residual, const Tensor* row_bias,
                      const Activation& act) {
  if (residual == nullptr && row_bias == nullptr && act.kind == Activation::Kind::kNone)
    return Status::ok();
  const int64_t total = Y.numel();
  if (total == 0) return Status::ok();
  const int64_t row = row_bias != nullptr ? row_bias->numel() : 1;
  if (row <= 0 || total % row != 0)
    return internal("row bias of ", row, " values does not tile an output of ", total);
  if (Y.dtype == INFER_DTYPE_FLOAT32) {
    // float32: vector adds per contiguous run, then the vectorized activation on the
    // same run while it is in cache.
    float* y = Y.mut<float>();
    const float* z = residual != nullptr ? residual->as<float>() : nullptr;
    const float* b = row_bias != nullptr ? row_bias->as<float>() : nullptr;
    const simd::Act sact = to_simd_act(act);
    const simd::Isa isa = kernel_isa();
    const size_t r = static_cast<size_t>(row);
    ctx.parallel_for(static_cast<size_t>(total), 16384, [&](size_t i0, size_t i1) {
      if (z != nullptr) simd::vec_binary(isa, simd::BinaryOp::kAdd, y + i0, z + i0, y + i0, i1 - i0);
      if (b != nullptr) {
        for (size_t i = i0; i < i1;) {
          const size_t col = i % r, len = std::min(r - col, i1 - i);
          simd::vec_binary(isa, simd::BinaryOp::kAdd, y + i, b + col, y + i, len);
          i += len;
        }
      }
      simd::apply_activation(isa, sact, y + i0, i1 - i0);
    });
    return Status::ok();
  }
  return dispatch_float(Y.dtype, "output", [&]<typename T>(Tag<T>) -> Status {
    using C = compute_t<T>;
    T* y = Y.mut<T>();
    const T* z = residual != nullptr ? residual->as<T>() : nullptr;
    const T* b = row_bias != nullptr ? row_bias->as<T>() : nullptr;
    ctx.parallel_for(static_cast<size_t>(total), 16384, [&](size_t i0, size_t i1) {
      for (size_t i = i0; i < i1; ++i) {
        // Each addition rounds to T, as the decomposition's Add nodes do.
        T v = y[i];
        if (z != nullptr) v = from_compute<T>(to_compute(v) + to_compute(z[i]));
        if (b != nullptr)
          v = from_compute<T>(to_compute(v) + to_compute(b[i % static_cast<size_t>(row)]));
        y[i] = from_compute<T>(activate<C>(to_compute(v), act));
      }
    });
    return Status::ok();
  });
}

namespace {
std::vector<const Tensor*> first_inputs(const KernelContext& outer, size_t n) {
  std::vector<const Tensor*> v;
  for (size_t i = 0; i < n; ++i) v.push_back(outer.input(i));
  return v;
}
}  // namespace

InnerContext::InnerContext(KernelContext& outer, size_t num_inputs)
    : KernelContext(&outer.host(), first_inputs(outer, num_inputs), 1), outer_(outer) {
  set_run(outer.run());
}

Result<Tensor*> InnerContext::allocate_output(size_t i, infer_dtype dtype, const Dims& dims) {
  if (i != 0) return internal("the plain kernel of a fused node allocated output ", i);
  Result<Tensor*> r = outer_.allocate_output(0, dtype, dims);
  if (r.is_ok()) output_ = r.value();
  return r;
}

infer_node_view inner_view(const infer_node_view& node, size_t num_inputs, int64_t opset) {
  infer_node_view v = node;
  if (v.num_inputs > num_inputs) v.num_inputs = num_inputs;
  v.opset = opset;
  v.domain = "";
  return v;
}

}  // namespace infer::cpu::kernels
