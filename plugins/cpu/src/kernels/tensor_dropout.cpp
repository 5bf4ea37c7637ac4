// Dropout. In inference (always before opset 12; from 12 when training_mode is absent or
// false, or the ratio is 0) the output is the input and the mask is all true. In training
// mode each element is kept with probability 1 - ratio and scaled by 1 / (1 - ratio).
//
// The random draws are numpy's: a Mersenne Twister seeded with the `seed` attribute
// (MT19937 init_genrand, which is what numpy.random.seed(int) does) and uniform doubles
// built from two 32-bit words (genrand_res53, numpy's random_sample); an element is
// kept when its draw is >= ratio. So a seeded Dropout is reproducible run after run and
// matches numpy.random.seed(seed); mask = numpy.random.uniform(0, 1, shape) >= ratio,
// which is how the ONNX reference outputs are made. Without a seed every run draws a
// fresh one.
#include <cstring>
#include <random>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

class DropoutKernel final : public Kernel {
 public:
  DropoutKernel(int64_t opset, double ratio_attr, bool has_seed, int64_t seed, infer_dtype mask)
      : opset_(opset),
        ratio_attr_(ratio_attr),
        has_seed_(has_seed),
        seed_(seed),
        mask_dtype_(mask) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    double ratio = ratio_attr_;
    bool training = false;
    if (opset_ >= 12) {
      ratio = 0.5;
      if (const Tensor* R = ctx.input(1)) {
        CPU_ASSIGN_OR_RETURN(ratio, read_scalar(*R, "ratio"));
      }
      if (const Tensor* M = ctx.input(2)) {
        if (M->dtype != INFER_DTYPE_BOOL || M->numel() != 1)
          return invalid("training_mode must be a bool scalar, got ", dtype_name(M->dtype), " ",
                         dims_str(M->dims));
        training = *M->as<uint8_t>() != 0;
      }
    }
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, X.dims));
    Tensor* mask = nullptr;
    if (ctx.has_output(1)) {
      CPU_ASSIGN_OR_RETURN(mask, ctx.allocate_output(1, mask_dtype_, X.dims));
    }
    if (!training || ratio == 0) {
      if (X.bytes()) std::memcpy(Y->data, X.data, X.bytes());
      return mask ? fill_ones(*mask) : Status::ok();
    }
    if (!(ratio > 0 && ratio < 1)) return invalid("ratio ", ratio, " must be in [0, 1)");
    if (mask && mask->dtype != INFER_DTYPE_BOOL)
      return invalid("the training mask must be bool, got ", dtype_name(mask->dtype));
    std::mt19937 gen(static_cast<uint32_t>(has_seed_ ? seed_ : std::random_device{}()));
    return dispatch(X.dtype, dtypes::kAllFloat, "Dropout", [&]<typename T>(Tag<T>) -> Status {
      using C = compute_t<T>;
      // As numpy computes it for a float32 ratio: 1 / (1 - ratio) in the data's precision.
      const C scale = C(1) / (C(1) - static_cast<C>(ratio));
      const T* x = X.as<T>();
      T* y = Y->mut<T>();
      auto* m = mask ? mask->mut<uint8_t>() : nullptr;
      const int64_t n = X.numel();
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t a = gen() >> 5, b = gen() >> 6;
        const double u = (a * 67108864.0 + b) / 9007199254740992.0;
        const bool keep = u >= ratio;
        y[i] = from_compute<T>(keep ? to_compute(x[i]) * scale : C(0));
        if (m) m[i] = keep;
      }
      return Status::ok();
    });
  }

 private:
  static Status fill_ones(const Tensor& m) {
    return dispatch(m.dtype, dtypes::kAny, "Dropout mask", [&]<typename T>(Tag<T>) -> Status {
      T one;
      if constexpr (std::is_same_v<T, bool>)
        one = true;
      else
        one = from_compute<T>(compute_t<T>(1));
      T* p = m.mut<T>();
      for (int64_t i = 0, n = m.numel(); i < n; ++i) p[i] = one;
      return Status::ok();
    });
  }

  int64_t opset_;
  double ratio_attr_;
  bool has_seed_;
  int64_t seed_;
  infer_dtype mask_dtype_;
};

}  // namespace

Status dropout_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, node.opset >= 12 ? 3 : 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kAllFloat, "the data"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kAllFloat, "ratio"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), dtypes::kBool, "training_mode"));
  const infer_value_view* mask = node_output(node, 1);
  if (mask != nullptr && mask->dtype != INFER_DTYPE_UNDEFINED &&
      (static_cast<uint32_t>(mask->dtype) >= 32 || (dtype_bit(mask->dtype) & dtypes::kAny) == 0))
    return unsupported("Dropout mask dtype ", dtype_name(mask->dtype), " is not supported");
  return Status::ok();
}

Result<KernelPtr> dropout_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  // The mask is bool from opset 10 and has the data's type before.
  infer_dtype mask = n.opset >= 10 ? INFER_DTYPE_BOOL : node_input(n, 0)->dtype;
  if (const infer_value_view* m = node_output(n, 1);
      m != nullptr && m->dtype != INFER_DTYPE_UNDEFINED)
    mask = m->dtype;
  return KernelPtr(new DropoutKernel(n.opset, attr_f(n, "ratio", 0.5), has_attr(n, "seed"),
                                     attr_i(n, "seed", 0), mask));
}

}  // namespace infer::cpu::kernels
