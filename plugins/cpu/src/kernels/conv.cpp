// Conv (1-D, 2-D, 3-D and beyond) and the shared body of FusedConv, on the SIMD
// library's convolution (simd/conv.hpp): direct GEMM for 1x1, im2col + GEMM in general,
// a depthwise kernel for group == C == M, Winograd F(4x4, 3x3) for large 3x3 stride-1
// convs. Constant weights are packed once, at creation (or by the prepack hook at load,
// then used in place); weights computed at run time are packed on every run. Bias,
// FusedConv's residual and its activation are applied in the convolution's epilogue.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "../host_threads.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "../precision.hpp"
#include "conv_prepack.hpp"
#include "simd/conv.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<void, AlignedFree>;

AlignedBuffer aligned_buffer(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  return AlignedBuffer(p);
}

// The convolution geometry of concrete shapes, in the library's form.
simd::ConvShape make_shape(const Window& w, int64_t N, int64_t C, int64_t M, int64_t G) {
  simd::ConvShape s;
  s.batch = N;
  s.in_channels = C;
  s.out_channels = M;
  s.groups = G;
  s.rank = static_cast<int>(w.rank());
  for (int d = 0; d < s.rank; ++d) {
    s.in[d] = w.in[d];
    s.kernel[d] = w.kernel[d];
    s.stride[d] = w.stride[d];
    s.dilation[d] = w.dilation[d];
    s.pad_begin[d] = w.pad_begin[d];
    s.out[d] = w.out[d];
  }
  return s;
}

// The shape used to pack a constant weight at load/creation: channels, kernel, strides
// and dilations from W and the attributes; spatial sizes from X when its shape is known
// (they only steer the algorithm choice), else 0. False when W cannot be packed ahead.
// W may be prepacked only (its bytes freed by the host).
bool weight_shape(const infer_node_view& node, const WindowAttrs& attrs, simd::ConvShape& s) {
  const infer_value_view* x = node_input(node, 0);
  const infer_value_view* w = node_input(node, 1);
  if (!(is_const(w) || is_prepacked_only(w)) || w->dtype != INFER_DTYPE_FLOAT32 || w->rank < 3 ||
      w->rank > simd::kMaxConvRank + 2)
    return false;
  for (int64_t d = 0; d < w->rank; ++d)
    if (w->dims[d] < 0) return false;
  const int64_t G = attr_i(node, "group", 1);
  const int64_t M = w->dims[0];
  if (G < 1 || M % G != 0) return false;
  const int64_t count = sdk::element_count(w->dims, static_cast<size_t>(w->rank));
  if (w->const_size != static_cast<size_t>(count) * sizeof(float) || count == 0) return false;
  const size_t r = static_cast<size_t>(w->rank - 2);
  Dims k_sp(w->dims + 2, w->dims + w->rank);
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != k_sp) return false;
  if ((!attrs.strides.empty() && attrs.strides.size() != r) ||
      (!attrs.dilations.empty() && attrs.dilations.size() != r))
    return false;
  s = simd::ConvShape{};
  s.batch = 1;
  s.in_channels = w->dims[1] * G;
  s.out_channels = M;
  s.groups = G;
  s.rank = static_cast<int>(r);
  for (size_t d = 0; d < r; ++d) {
    s.kernel[d] = k_sp[d];
    s.stride[d] = attrs.strides.empty() ? 1 : attrs.strides[d];
    s.dilation[d] = attrs.dilations.empty() ? 1 : attrs.dilations[d];
  }
  // Spatial sizes, when X's are known (the choice of algorithm uses them; the batch may
  // be symbolic).
  if (x != nullptr && x->rank == w->rank) {
    Dims in_sp;
    bool known = true;
    for (int64_t d = 2; d < x->rank; ++d) {
      known = known && x->dims[d] > 0;
      in_sp.push_back(x->dims[d]);
    }
    if (known) {
      Result<Window> win = plan_window(attrs, in_sp, k_sp);
      if (win.is_ok()) {
        s.batch = x->dims[0] > 0 ? x->dims[0] : 1;
        for (size_t d = 0; d < r; ++d) {
          s.in[d] = win.value().in[d];
          s.out[d] = win.value().out[d];
          s.pad_begin[d] = win.value().pad_begin[d];
        }
      }
    }
  }
  return true;
}

WindowAttrs conv_attrs(const infer_node_view& node) {
  WindowAttrs a = read_window_attrs(node);
  a.ceil_mode = false;
  return a;
}

// The precision one convolution computes in under the session's weight precision: a
// layer float32 runs with Winograd keeps float32 Winograd under bf16, since that is both
// faster (ResNet-50's 3x3 layers at 56x56..14x14 on Zen 5: 1.07 / 1.06 / 0.94 ms fp32
// Winograd against 1.39 / 1.22 / 1.16 ms bf16 im2col, 1 thread) and more accurate than
// the bf16 alternatives (bf16 Winograd misses 1e-2 relative error, simd/conv.cpp).
simd::GemmPrecision conv_precision(const simd::ConvShape& s, simd::GemmPrecision session) {
  if (session != simd::GemmPrecision::kFloat32 &&
      simd::choose_conv_algo(kernel_isa(), s, simd::GemmPrecision::kFloat32) ==
          simd::ConvAlgo::kWinograd)
    return simd::GemmPrecision::kFloat32;
  return session;
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(WindowAttrs attrs, int64_t group, simd::Act act, bool residual_input,
             simd::GemmPrecision precision)
      : attrs_(std::move(attrs)),
        group_(group),
        act_(act),
        residual_input_(residual_input),
        precision_(precision) {}

  // The packed constant weight: `owned`, or the host's prepacked copy (owned null).
  void set_packed(const void* packed, AlignedBuffer owned) {
    packed_ = packed;
    owned_ = std::move(owned);
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& W = *ctx.input(1);
    const Tensor* B = ctx.input(2);
    const Tensor* Z = residual_input_ ? ctx.input(3) : nullptr;
    if (X.dtype != INFER_DTYPE_FLOAT32 || W.dtype != INFER_DTYPE_FLOAT32)
      return invalid("only float32 is supported");
    if (X.rank() < 3)
      return invalid("input X must have at least 3 dims (N, C, spatial...), got ",
                     dims_str(X.dims));
    if (W.rank() != X.rank())
      return invalid("weights W have shape ", dims_str(W.dims), ", expected rank ", X.rank(),
                     " like X ", dims_str(X.dims));
    if (X.rank() > simd::kMaxConvRank + 2)
      return invalid("more than ", simd::kMaxConvRank, " spatial dims");
    const int64_t N = X.dims[0], C = X.dims[1], M = W.dims[0];
    const int64_t G = group_;
    if (C % G != 0 || M % G != 0)
      return invalid("group ", G, " does not divide input channels ", C, " and output channels ",
                     M);
    const int64_t Cg = C / G;
    if (W.dims[1] != Cg)
      return invalid("W has shape ", dims_str(W.dims), ": dim 1 must be C/group = ", Cg, " for X ",
                     dims_str(X.dims));
    Dims in_sp(X.dims.begin() + 2, X.dims.end());
    Dims k_sp(W.dims.begin() + 2, W.dims.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != k_sp)
      return invalid("kernel_shape ", dims_str(attrs_.kernel_shape), " does not match W ",
                     dims_str(W.dims));
    if (B != nullptr && (B->dtype != INFER_DTYPE_FLOAT32 || B->numel() != M))
      return invalid("bias B has shape ", dims_str(B->dims), ", expected [", M, "]");
    CPU_ASSIGN_OR_RETURN(Window w, plan_window(attrs_, in_sp, k_sp));

    Dims y_dims = {N, M};
    y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
    if (Z != nullptr) {
      if (Z->dtype != INFER_DTYPE_FLOAT32)
        return invalid("residual Z is ", dtype_name(Z->dtype), ", expected float32 like X");
      if (Z->dims != y_dims)
        return invalid("residual Z has shape ", dims_str(Z->dims),
                       ", expected the convolution's output shape ", dims_str(y_dims));
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_FLOAT32, y_dims));
    if (Y->numel() == 0) return Status::ok();

    const simd::ConvShape shape = make_shape(w, N, C, M, G);
    const simd::Isa isa = kernel_isa();
    const void* packed = packed_;
    AlignedBuffer per_run;
    if (packed == nullptr) {
      // W's bytes freed by the host for a packed form that does not fit:
      if (W.data == nullptr && W.numel() > 0)
        return internal("W ", dims_str(W.dims), " has no data and no usable packed form");
      // Weights computed at run time: pack them for this run's shape.
      const simd::GemmPrecision p = conv_precision(shape, precision_);
      const simd::ConvAlgo algo = simd::choose_conv_algo(isa, shape, p);
      per_run = aligned_buffer(simd::conv_packed_bytes(isa, shape, algo, p));
      simd::conv_pack_weights(isa, shape, algo, W.as<float>(), per_run.get(), p);
      packed = per_run.get();
    }
    HostThreads threads(ctx.host());
    simd::conv_forward(isa, threads, shape, packed, X.as<float>(),
                       B != nullptr ? B->as<float>() : nullptr,
                       Z != nullptr ? Z->as<float>() : nullptr, act_, Y->mut<float>());
    return Status::ok();
  }


 private:
  WindowAttrs attrs_;
  int64_t group_;
  simd::Act act_;
  bool residual_input_;
  simd::GemmPrecision precision_;
  const void* packed_ = nullptr;
  AlignedBuffer owned_;
};

// Whether the host's prepacked copy of W is usable in place (right size, our header, the
// session's precision where the algorithm has one).
bool prepacked_usable(const infer_value_view* w, const simd::ConvShape& s,
                      simd::GemmPrecision precision) {
  if (w->struct_size < offsetof(infer_value_view, prepacked_size) + sizeof(size_t)) return false;
  if (w->prepacked_data == nullptr) return false;
  simd::ConvAlgo algo;
  simd::GemmPrecision packed_precision;
  if (!simd::conv_packed_matches(kernel_isa(), s, w->prepacked_data, w->prepacked_size, &algo,
                                 &packed_precision))
    return false;
  return algo == simd::ConvAlgo::kDepthwise || packed_precision == precision;
}

}  // namespace

bool conv_packs_gemm_weight(const infer_node_view& node, simd::GemmPrecision precision) {
  if (!is_const(node_input(node, 1)) || node_input(node, 1)->dtype != INFER_DTYPE_FLOAT32 ||
      !(is_op(node, "", "Conv") || is_op(node, "ai.infer", "FusedConv")))
    return false;
  simd::ConvShape s;
  if (!weight_shape(node, conv_attrs(node), s)) return false;
  const simd::GemmPrecision p = conv_precision(s, precision);
  return p == precision &&
         simd::choose_conv_algo(kernel_isa(), s, p) != simd::ConvAlgo::kDepthwise;
}

void* prepack_conv_weight(const infer_node_view& node, size_t input_index,
                          const PackAlloc& alloc, size_t* size, simd::GemmPrecision precision) {
  // Only for the kernels that use the packed form: Conv and FusedConv.
  if (input_index != 1 || !is_const(node_input(node, 1)) ||
      !(is_op(node, "", "Conv") || is_op(node, "ai.infer", "FusedConv")))
    return nullptr;
  simd::ConvShape s;
  if (!weight_shape(node, conv_attrs(node), s)) return nullptr;
  const simd::Isa isa = kernel_isa();
  precision = conv_precision(s, precision);
  const simd::ConvAlgo algo = simd::choose_conv_algo(isa, s, precision);
  const size_t bytes = simd::conv_packed_bytes(isa, s, algo, precision);
  void* dst = alloc(bytes);  // 64-byte aligned, as the packers expect
  if (dst == nullptr) throw std::bad_alloc();
  simd::conv_pack_weights(isa, s, algo, static_cast<const float*>(node_input(node, 1)->const_data),
                          dst, precision);
  *size = bytes;
  return dst;
}

Result<KernelPtr> conv_create_fused(const KernelInit& init, const simd::Act& act, bool residual_input) {
  const infer_node_view& node = *init.node;
  WindowAttrs a = conv_attrs(node);
  const simd::GemmPrecision precision = weight_precision(*init.host);
  auto kernel =
      std::make_unique<ConvKernel>(a, attr_i(node, "group", 1), act, residual_input, precision);
  simd::ConvShape s;
  if (weight_shape(node, a, s)) {
    const infer_value_view* w = node_input(node, 1);
    const simd::GemmPrecision p = conv_precision(s, precision);
    if (prepacked_usable(w, s, p)) {
      kernel->set_packed(w->prepacked_data, nullptr);
    } else if (w->const_data == nullptr) {
      return internal("the host freed weight '", w->name ? w->name : "",
                      "' for its prepacked form (", w->prepacked_size,
                      " bytes), which does not fit this node");
    } else {
      const simd::Isa isa = kernel_isa();
      const simd::ConvAlgo algo = simd::choose_conv_algo(isa, s, p);
      AlignedBuffer buf = aligned_buffer(simd::conv_packed_bytes(isa, s, algo, p));
      simd::conv_pack_weights(isa, s, algo, static_cast<const float*>(w->const_data), buf.get(),
                              p);
      const void* p = buf.get();
      kernel->set_packed(p, std::move(buf));
    }
  }
  return KernelPtr(kernel.release());
}

Status conv_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kF32, "W"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), dtypes::kF32, "B"));
  const infer_value_view* x = node_input(node, 0);
  int64_t spatial = x->rank >= 0 ? x->rank - 2 : -1;
  if (x->rank >= 0 && (x->rank < 3 || x->rank > 10))
    return unsupported("Conv input rank ", x->rank, " not supported (3 to 10)");
  if (attr_i(node, "group", 1) < 1) return unsupported("Conv group must be >= 1");
  return check_window_attrs(node, read_window_attrs(node), spatial);
}

Result<KernelPtr> conv_create(const KernelInit& init) {
  return conv_create_fused(init, simd::Act{}, false);
}

}  // namespace infer::cpu::kernels
