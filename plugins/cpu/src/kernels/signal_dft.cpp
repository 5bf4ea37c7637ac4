// DFT and STFT (opset 17). Signals are read as complex numbers (a trailing dim of 1:
// real, 2: real and imaginary) and transformed in double precision: an iterative radix-2
// FFT when the length is a power of two, else the direct sum over a twiddle table. The
// output always has a trailing dim of 2; onesided keeps the first floor(L / 2) + 1 bins
// (real input only); inverse uses the positive exponent and divides by L.
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

using cd = std::complex<double>;
constexpr uint32_t kDftTypes = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;

// A transform of one length, reusable across the signals of one run.
class Transform {
 public:
  Transform(int64_t n, bool inverse) : n_(n), inverse_(inverse), tw_(static_cast<size_t>(n)) {
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < n; ++k) {
      const double a = sign * 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
      tw_[static_cast<size_t>(k)] = cd(std::cos(a), std::sin(a));
    }
    pow2_ = n > 0 && (n & (n - 1)) == 0;
  }

  // data: n values in, n bins out (in place).
  void run(std::vector<cd>& data, std::vector<cd>& scratch) const {
    if (n_ <= 1) return;
    if (pow2_) {
      fft(data);
    } else {
      scratch.assign(static_cast<size_t>(n_), cd(0, 0));
      for (int64_t k = 0; k < n_; ++k) {
        cd acc(0, 0);
        int64_t idx = 0;  // (k * j) mod n, advanced without overflow
        for (int64_t j = 0; j < n_; ++j) {
          acc += data[static_cast<size_t>(j)] * tw_[static_cast<size_t>(idx)];
          idx += k;
          if (idx >= n_) idx -= n_;
        }
        scratch[static_cast<size_t>(k)] = acc;
      }
      data.swap(scratch);
    }
    if (inverse_)
      for (cd& v : data) v /= static_cast<double>(n_);
  }

 private:
  void fft(std::vector<cd>& a) const {
    const size_t n = static_cast<size_t>(n_);
    for (size_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
      size_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(a[i], a[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
      const size_t step = n / len;
      for (size_t i = 0; i < n; i += len)
        for (size_t k = 0; k < len / 2; ++k) {
          const cd u = a[i + k], v = a[i + k + len / 2] * tw_[k * step];
          a[i + k] = u + v;
          a[i + k + len / 2] = u - v;
        }
    }
  }

  int64_t n_;
  bool inverse_;
  bool pow2_ = false;
  std::vector<cd> tw_;
};

Result<int64_t> read_length(const Tensor* t, const char* what) {
  if (t == nullptr) return int64_t{-1};
  CPU_ASSIGN_OR_RETURN(Dims v, read_int_list(*t, what));
  if (v.size() != 1) return invalid(what, " must hold one value, got shape ", dims_str(t->dims));
  if (v[0] < 1) return invalid(what, " must be >= 1, got ", v[0]);
  return v[0];
}

class DftKernel final : public Kernel {
 public:
  DftKernel(int64_t axis, bool inverse, bool onesided)
      : axis_(axis), inverse_(inverse), onesided_(onesided) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(X.rank());
    if (rank < 2 || (X.dims[rank - 1] != 1 && X.dims[rank - 1] != 2))
      return invalid("input has shape ", dims_str(X.dims),
                     ", expected [..., signal dims ..., 1 or 2] (real or complex)");
    const bool complex_in = X.dims[rank - 1] == 2;
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank - 1)
      return invalid("axis ", axis_, " out of range for input ", dims_str(X.dims),
                     " (the last dim holds real/imaginary parts)");
    if (onesided_ && complex_in) return invalid("onesided=1 needs a real input, got complex ",
                                                dims_str(X.dims));
    if (onesided_ && inverse_) return invalid("onesided=1 is not supported with inverse=1");
    CPU_ASSIGN_OR_RETURN(int64_t L, read_length(ctx.input(1), "dft_length"));
    const int64_t in_len = X.dims[axis];
    if (L < 0) L = in_len;
    if (L == 0) return invalid("the signal along axis ", axis, " is empty");
    const int64_t nbins = onesided_ ? L / 2 + 1 : L;
    Dims out = X.dims;
    out[axis] = nbins;
    out[rank - 1] = 2;
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (Y->numel() == 0) return Status::ok();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= X.dims[d];
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= X.dims[d];
    const int64_t cin = X.dims[rank - 1];
    const Transform tr(L, inverse_);
    return dispatch(X.dtype, kDftTypes, "DFT input", [&]<typename T>(Tag<T>) -> Status {
      if constexpr (in_mask<T>(kDftTypes)) {
        const T* x = X.as<T>();
        T* y = Y->mut<T>();
        ctx.parallel_for(static_cast<size_t>(outer * inner),
                         grain_for(static_cast<size_t>(L * (L < 64 ? L : 64))),
                         [&](size_t s0, size_t s1) {
                           std::vector<cd> buf, scratch;
                           for (size_t s = s0; s < s1; ++s) {
                             const int64_t o = static_cast<int64_t>(s) / inner;
                             const int64_t i = static_cast<int64_t>(s) % inner;
                             buf.assign(static_cast<size_t>(L), cd(0, 0));
                             for (int64_t n = 0; n < std::min(L, in_len); ++n) {
                               const T* e = x + ((o * in_len + n) * inner + i) * cin;
                               buf[static_cast<size_t>(n)] =
                                   cd(to_double(e[0]), cin == 2 ? to_double(e[1]) : 0.0);
                             }
                             tr.run(buf, scratch);
                             for (int64_t k = 0; k < nbins; ++k) {
                               T* e = y + ((o * nbins + k) * inner + i) * 2;
                               e[0] = from_double<T>(buf[static_cast<size_t>(k)].real());
                               e[1] = from_double<T>(buf[static_cast<size_t>(k)].imag());
                             }
                           }
                         });
      }
      return Status::ok();
    });
  }

 private:
  int64_t axis_;
  bool inverse_, onesided_;
};

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    if (X.rank() != 3 || (X.dims[2] != 1 && X.dims[2] != 2))
      return invalid("signal has shape ", dims_str(X.dims),
                     ", expected [batch, length, 1 or 2] (real or complex)");
    const bool complex_in = X.dims[2] == 2;
    if (onesided_ && complex_in)
      return invalid("onesided=1 needs a real signal, got complex ", dims_str(X.dims));
    if (ctx.input(1) == nullptr) return invalid("frame_step is required");
    CPU_ASSIGN_OR_RETURN(int64_t step, read_length(ctx.input(1), "frame_step"));
    CPU_ASSIGN_OR_RETURN(int64_t L, read_length(ctx.input(3), "frame_length"));
    const Tensor* W = ctx.input(2);
    std::vector<double> window;
    if (W != nullptr) {
      if (W->dtype != X.dtype)
        return invalid("window is ", dtype_name(W->dtype), ", expected ", dtype_name(X.dtype),
                       " like the signal");
      CPU_ASSIGN_OR_RETURN(window, read_float_list(*W, "window"));
      if (L >= 0 && static_cast<int64_t>(window.size()) != L)
        return invalid("window has ", window.size(), " values but frame_length is ", L);
      L = static_cast<int64_t>(window.size());
    }
    if (L < 1) return invalid("frame_length or a non-empty window is required");
    const int64_t batch = X.dims[0], len = X.dims[1];
    if (len < L)
      return invalid("signal length ", len, " is shorter than the frame length ", L);
    const int64_t frames = (len - L) / step + 1;
    const int64_t nbins = onesided_ ? L / 2 + 1 : L;
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, {batch, frames, nbins, 2}));
    if (Y->numel() == 0) return Status::ok();
    const int64_t cin = X.dims[2];
    const Transform tr(L, false);
    return dispatch(X.dtype, kDftTypes, "STFT signal", [&]<typename T>(Tag<T>) -> Status {
      if constexpr (in_mask<T>(kDftTypes)) {
        const T* x = X.as<T>();
        T* y = Y->mut<T>();
        ctx.parallel_for(static_cast<size_t>(batch * frames),
                         grain_for(static_cast<size_t>(L * (L < 64 ? L : 64))),
                         [&](size_t s0, size_t s1) {
                           std::vector<cd> buf, scratch;
                           for (size_t s = s0; s < s1; ++s) {
                             const int64_t b = static_cast<int64_t>(s) / frames;
                             const int64_t f = static_cast<int64_t>(s) % frames;
                             buf.resize(static_cast<size_t>(L));
                             for (int64_t n = 0; n < L; ++n) {
                               const T* e = x + (b * len + f * step + n) * cin;
                               const double w = window.empty() ? 1.0 : window[static_cast<size_t>(n)];
                               buf[static_cast<size_t>(n)] =
                                   cd(to_double(e[0]) * w, cin == 2 ? to_double(e[1]) * w : 0.0);
                             }
                             tr.run(buf, scratch);
                             T* e = y + static_cast<int64_t>(s) * nbins * 2;
                             for (int64_t k = 0; k < nbins; ++k) {
                               e[2 * k] = from_double<T>(buf[static_cast<size_t>(k)].real());
                               e[2 * k + 1] = from_double<T>(buf[static_cast<size_t>(k)].imag());
                             }
                           }
                         });
      }
      return Status::ok();
    });
  }

 private:
  bool onesided_;
};

}  // namespace

Status dft_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 2));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), kDftTypes, "input"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kInts, "dft_length"));
  if (attr_i(node, "onesided", 0) != 0 && attr_i(node, "inverse", 0) != 0)
    return unsupported("DFT onesided=1 with inverse=1 is not supported");
  return Status::ok();
}

Result<KernelPtr> dft_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(new DftKernel(attr_i(n, "axis", 1), attr_i(n, "inverse", 0) != 0,
                                 attr_i(n, "onesided", 0) != 0));
}

Status stft_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 4));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), kDftTypes, "signal"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kInts, "frame_step"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), kDftTypes, "window"));
  return check_dtype(node, node_input(node, 3), dtypes::kInts, "frame_length");
}

Result<KernelPtr> stft_create(const KernelInit& init) {
  return KernelPtr(new StftKernel(attr_i(*init.node, "onesided", 1) != 0));
}

}  // namespace infer::cpu::kernels
