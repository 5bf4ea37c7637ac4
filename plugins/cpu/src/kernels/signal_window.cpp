// The opset-17 signal generators: HannWindow, HammingWindow, BlackmanWindow (a scalar
// size in, `size` window values out; periodic windows use N = size, symmetric ones
// N = size - 1) and MelWeightMatrix (triangular mel filters, [dft_length / 2 + 1,
// num_mel_bins]), with output_datatype choosing the output dtype. Values are computed
// in double and rounded once to the output type.
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

constexpr uint32_t kOutTypes = dtypes::kAllNum;

enum class Window { kHann, kHamming, kBlackman };

Status write_values(KernelContext& ctx, infer_dtype dtype, const Dims& dims,
                    const std::vector<double>& v) {
  CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, dtype, dims));
  return dispatch(dtype, kOutTypes, "output_datatype", [&]<typename T>(Tag<T>) -> Status {
    if constexpr (in_mask<T>(kOutTypes)) {
      T* y = Y->mut<T>();
      for (size_t i = 0; i < v.size(); ++i) y[i] = from_double<T>(v[i]);
    }
    return Status::ok();
  });
}

Result<int64_t> read_int_scalar(const Tensor* t, const char* what) {
  if (t == nullptr) return invalid(what, " is required");
  CPU_ASSIGN_OR_RETURN(Dims v, read_int_list(*t, what));
  if (v.size() != 1) return invalid(what, " must hold one value, got shape ", dims_str(t->dims));
  return v[0];
}

class WindowKernel final : public Kernel {
 public:
  WindowKernel(Window w, bool periodic, infer_dtype out)
      : w_(w), periodic_(periodic), out_(out) {}

  Status run(KernelContext& ctx) const override {
    CPU_ASSIGN_OR_RETURN(int64_t size, read_int_scalar(ctx.input(0), "size"));
    if (size < 0) return invalid("size must be >= 0, got ", size);
    const int64_t N = periodic_ ? size : size - 1;
    std::vector<double> v(static_cast<size_t>(size));
    for (int64_t n = 0; n < size; ++n) {
      // A one-point symmetric window has N = 0: its single angle is taken as 0.
      const double a = N == 0 ? 0.0
                              : 2 * std::numbers::pi * static_cast<double>(n) /
                                    static_cast<double>(N);
      switch (w_) {
        case Window::kHann:
          v[static_cast<size_t>(n)] = 0.5 - 0.5 * std::cos(a);
          break;
        case Window::kHamming:
          v[static_cast<size_t>(n)] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(a);
          break;
        case Window::kBlackman:
          v[static_cast<size_t>(n)] = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
          break;
      }
    }
    return write_values(ctx, out_, {size}, v);
  }

 private:
  Window w_;
  bool periodic_;
  infer_dtype out_;
};

double hz_to_mel(double hz) { return 2595 * std::log10(1 + hz / 700); }
double mel_to_hz(double mel) { return 700 * (std::pow(10, mel / 2595) - 1); }

class MelKernel final : public Kernel {
 public:
  explicit MelKernel(infer_dtype out) : out_(out) {}

  Status run(KernelContext& ctx) const override {
    CPU_ASSIGN_OR_RETURN(int64_t bins, read_int_scalar(ctx.input(0), "num_mel_bins"));
    CPU_ASSIGN_OR_RETURN(int64_t dft_length, read_int_scalar(ctx.input(1), "dft_length"));
    CPU_ASSIGN_OR_RETURN(int64_t rate, read_int_scalar(ctx.input(2), "sample_rate"));
    if (ctx.input(3) == nullptr || ctx.input(4) == nullptr)
      return invalid("lower_edge_hertz and upper_edge_hertz are required");
    CPU_ASSIGN_OR_RETURN(double lower, read_scalar(*ctx.input(3), "lower_edge_hertz"));
    CPU_ASSIGN_OR_RETURN(double upper, read_scalar(*ctx.input(4), "upper_edge_hertz"));
    if (bins < 1) return invalid("num_mel_bins must be >= 1, got ", bins);
    if (dft_length < 1) return invalid("dft_length must be >= 1, got ", dft_length);
    if (rate < 1) return invalid("sample_rate must be >= 1, got ", rate);
    if (!(lower >= 0 && lower <= upper))
      return invalid("need 0 <= lower_edge_hertz <= upper_edge_hertz, got ", lower, " and ", upper);
    const int64_t spec_bins = dft_length / 2 + 1;
    // num_mel_bins + 2 edges evenly spaced in mel (the step divides by the number of
    // edges, as the ONNX reference does), mapped to spectrogram bins.
    const int64_t nedges = bins + 2;
    const double lo_mel = hz_to_mel(lower), hi_mel = hz_to_mel(upper);
    const double step = (hi_mel - lo_mel) / static_cast<double>(nedges);
    std::vector<int64_t> edge(static_cast<size_t>(nedges));
    for (int64_t i = 0; i < nedges; ++i) {
      const double hz = mel_to_hz(static_cast<double>(i) * step + lo_mel);
      const double b = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate));
      if (!(b >= 0 && b < static_cast<double>(spec_bins)))
        return invalid("upper_edge_hertz ", upper, " maps past the last of the ", spec_bins,
                       " spectrogram bins (sample_rate ", rate, ", dft_length ", dft_length, ")");
      edge[static_cast<size_t>(i)] = static_cast<int64_t>(b);
    }
    std::vector<double> m(static_cast<size_t>(spec_bins * bins), 0.0);
    auto at = [&](int64_t j, int64_t i) -> double& { return m[static_cast<size_t>(j * bins + i)]; };
    for (int64_t i = 0; i < bins; ++i) {
      const int64_t left = edge[static_cast<size_t>(i)], center = edge[static_cast<size_t>(i + 1)],
                    right = edge[static_cast<size_t>(i + 2)];
      const int64_t up = center - left;
      if (up == 0) {
        at(center, i) = 1;
      } else {
        for (int64_t j = left; j <= center; ++j)
          at(j, i) = static_cast<double>(j - left) / static_cast<double>(up);
      }
      const int64_t down = right - center;
      if (down > 0)
        for (int64_t j = center; j < right; ++j)
          at(j, i) = static_cast<double>(right - j) / static_cast<double>(down);
    }
    return write_values(ctx, out_, {spec_bins, bins}, m);
  }

 private:
  infer_dtype out_;
};

Status check_out_type(const infer_node_view& n, infer_dtype* out) {
  const int64_t t = attr_i(n, "output_datatype", INFER_DTYPE_FLOAT32);
  if (t < 0 || t >= 32 || (dtype_bit(static_cast<infer_dtype>(t)) & kOutTypes) == 0)
    return unsupported(n.op_type, " output_datatype ", t, " not supported");
  *out = static_cast<infer_dtype>(t);
  return Status::ok();
}

Window window_of(const char* op) {
  if (std::strcmp(op, "HammingWindow") == 0) return Window::kHamming;
  if (std::strcmp(op, "BlackmanWindow") == 0) return Window::kBlackman;
  return Window::kHann;
}

}  // namespace

Status signal_window_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kInts, "size"));
  infer_dtype out;
  return check_out_type(node, &out);
}

Result<KernelPtr> signal_window_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  infer_dtype out = INFER_DTYPE_FLOAT32;
  CPU_RETURN_IF_ERROR(check_out_type(n, &out));
  return KernelPtr(new WindowKernel(window_of(n.op_type), attr_i(n, "periodic", 1) != 0, out));
}

Status mel_weight_matrix_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 5, 5));
  for (size_t i = 0; i < 3; ++i)
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, i), dtypes::kInts, "the integer inputs"));
  const uint32_t floats = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), floats, "lower_edge_hertz"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 4), floats, "upper_edge_hertz"));
  infer_dtype out;
  return check_out_type(node, &out);
}

Result<KernelPtr> mel_weight_matrix_create(const KernelInit& init) {
  infer_dtype out = INFER_DTYPE_FLOAT32;
  CPU_RETURN_IF_ERROR(check_out_type(*init.node, &out));
  return KernelPtr(new MelKernel(out));
}

}  // namespace infer::cpu::kernels
