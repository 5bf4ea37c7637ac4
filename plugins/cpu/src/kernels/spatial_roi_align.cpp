// RoiAlign (opsets 10, 16): for each region [x1, y1, x2, y2] (scaled by spatial_scale,
// shifted by half a pixel in half_pixel mode, the default from 16) and each output bin,
// bilinear samples on a sampling_ratio grid (adaptive: ceil(roi size / bins)) are
// averaged (mode avg) or max-reduced (mode max). The arithmetic, including how samples
// near the border are clamped and how max mode takes the largest weighted corner, is
// ONNX Runtime's, which the ONNX reference follows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

constexpr uint32_t kRoiAlignTypes = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;

struct RoiParams {
  bool max_mode = false;
  bool half_pixel = true;
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  double spatial_scale = 1.0;
};

// One bilinear sample: four input offsets and their weights (all zero when the sample
// lies more than a pixel outside the input).
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample make_sample(double y, double x, int64_t H, int64_t W) {
  Sample s;
  if (!(y >= -1.0 && y <= static_cast<double>(H) && x >= -1.0 && x <= static_cast<double>(W)))
    return s;  // outside, or NaN
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(x), y_hi, x_hi;
  if (y_lo >= H - 1) {
    y_hi = y_lo = H - 1;
    y = static_cast<double>(y_lo);
  } else {
    y_hi = y_lo + 1;
  }
  if (x_lo >= W - 1) {
    x_hi = x_lo = W - 1;
    x = static_cast<double>(x_lo);
  } else {
    x_hi = x_lo + 1;
  }
  const double ly = y - static_cast<double>(y_lo), lx = x - static_cast<double>(x_lo);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y_lo * W + x_lo;
  s.pos[1] = y_lo * W + x_hi;
  s.pos[2] = y_hi * W + x_lo;
  s.pos[3] = y_hi * W + x_hi;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

// Samples per bin side when sampling_ratio is 0: ceil(extent / bins). A region no
// larger than the input gives at most its size in pixels; the bound only keeps absurd
// (huge or NaN) coordinates from overflowing the integer conversion.
int64_t adaptive_grid(double extent, int64_t bins) {
  const double g = std::ceil(extent / static_cast<double>(bins));
  if (!(g > 0)) return 0;
  return static_cast<int64_t>(std::min(g, 65536.0));
}

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(RoiParams p) : p_(p) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& R = *ctx.input(1);
    const Tensor& I = *ctx.input(2);
    if (X.rank() != 4) return invalid("X must be 4-D (N, C, H, W), got ", dims_str(X.dims));
    if (R.rank() != 2 || R.dims[1] != 4)
      return invalid("rois has shape ", dims_str(R.dims), ", expected [num_rois, 4]");
    if (R.dtype != X.dtype)
      return invalid("rois is ", dtype_name(R.dtype), ", expected ", dtype_name(X.dtype), " like X");
    if (I.rank() != 1 || I.dims[0] != R.dims[0])
      return invalid("batch_indices has shape ", dims_str(I.dims), ", expected [", R.dims[0], "]");
    CPU_ASSIGN_OR_RETURN(Dims batch, read_int_list(I, "batch_indices"));
    const int64_t N = X.dims[0], C = X.dims[1], H = X.dims[2], W = X.dims[3];
    for (size_t r = 0; r < batch.size(); ++r)
      if (batch[r] < 0 || batch[r] >= N)
        return invalid("batch_indices[", r, "] = ", batch[r], " out of range for batch size ", N);
    const int64_t nr = R.dims[0];
    if ((H == 0 || W == 0) && nr > 0 && C > 0)
      return invalid("X ", dims_str(X.dims), " has an empty spatial dim");
    CPU_ASSIGN_OR_RETURN(Tensor * Y,
                         ctx.allocate_output(0, X.dtype, {nr, C, p_.out_h, p_.out_w}));
    if (Y->numel() == 0) return Status::ok();
    return dispatch(X.dtype, kRoiAlignTypes, "RoiAlign input", [&]<typename T>(Tag<T>) -> Status {
      if constexpr (in_mask<T>(kRoiAlignTypes)) {
        const T* x = X.as<T>();
        const T* rois = R.as<T>();
        T* y = Y->mut<T>();
        ctx.parallel_for(static_cast<size_t>(nr), 1, [&](size_t r0, size_t r1) {
          for (size_t r = r0; r < r1; ++r)
            one_roi<T>(x + batch[r] * C * H * W, rois + r * 4, C, H, W,
                       y + static_cast<int64_t>(r) * C * p_.out_h * p_.out_w);
        });
      }
      return Status::ok();
    });
  }

 private:
  template <typename T>
  void one_roi(const T* x, const T* roi, int64_t C, int64_t H, int64_t W, T* y) const {
    const double offset = p_.half_pixel ? 0.5 : 0.0;
    const double x1 = to_double(roi[0]) * p_.spatial_scale - offset;
    const double y1 = to_double(roi[1]) * p_.spatial_scale - offset;
    const double x2 = to_double(roi[2]) * p_.spatial_scale - offset;
    const double y2 = to_double(roi[3]) * p_.spatial_scale - offset;
    double roi_w = x2 - x1, roi_h = y2 - y1;
    if (!p_.half_pixel) {
      // The legacy mode forces malformed regions to 1x1.
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / static_cast<double>(p_.out_h);
    const double bin_w = roi_w / static_cast<double>(p_.out_w);
    const int64_t gh = p_.sampling_ratio > 0 ? p_.sampling_ratio : adaptive_grid(roi_h, p_.out_h);
    const int64_t gw = p_.sampling_ratio > 0 ? p_.sampling_ratio : adaptive_grid(roi_w, p_.out_w);
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    // The samples of a bin are the same for every channel: compute them once per bin
    // (not per region, so memory stays small however large the sampling grid).
    std::vector<Sample> samples(static_cast<size_t>(gh * gw));
    const int64_t plane = p_.out_h * p_.out_w;
    for (int64_t ph = 0; ph < p_.out_h; ++ph) {
      for (int64_t pw = 0; pw < p_.out_w; ++pw) {
        size_t k = 0;
        for (int64_t iy = 0; iy < gh; ++iy) {
          const double yy = y1 + static_cast<double>(ph) * bin_h +
                            (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(gh);
          for (int64_t ix = 0; ix < gw; ++ix) {
            const double xx = x1 + static_cast<double>(pw) * bin_w +
                              (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(gw);
            samples[k++] = make_sample(yy, xx, H, W);
          }
        }
        for (int64_t c = 0; c < C; ++c) {
          const T* xc = x + c * H * W;
          double acc = 0;
          for (size_t j = 0; j < samples.size(); ++j) {
            const Sample& s = samples[j];
            double v[4];
            for (int t = 0; t < 4; ++t) v[t] = s.w[t] * to_double(xc[s.pos[t]]);
            if (p_.max_mode) {
              const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
              acc = j == 0 ? m : std::max(acc, m);
            } else {
              acc += v[0] + v[1] + v[2] + v[3];
            }
          }
          y[c * plane + ph * p_.out_w + pw] = from_double<T>(p_.max_mode ? acc : acc / count);
        }
      }
    }
  }

  RoiParams p_;
};

Status parse(const infer_node_view& n, RoiParams* p) {
  const std::string mode = attr_s(n, "mode", "avg");
  if (mode != "avg" && mode != "max") return unsupported("RoiAlign mode '", mode, "' not supported");
  p->max_mode = mode == "max";
  // Opset 10 has no coordinate_transformation_mode: its behaviour is output_half_pixel.
  const std::string coord =
      attr_s(n, "coordinate_transformation_mode", n.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (coord != "half_pixel" && coord != "output_half_pixel")
    return unsupported("RoiAlign coordinate_transformation_mode '", coord, "' not supported");
  p->half_pixel = coord == "half_pixel";
  p->out_h = attr_i(n, "output_height", 1);
  p->out_w = attr_i(n, "output_width", 1);
  p->sampling_ratio = attr_i(n, "sampling_ratio", 0);
  p->spatial_scale = attr_f(n, "spatial_scale", 1.0);
  if (p->out_h < 1 || p->out_w < 1)
    return unsupported("RoiAlign output_height and output_width must be >= 1, got ", p->out_h, "x",
                       p->out_w);
  if (p->sampling_ratio < 0)
    return unsupported("RoiAlign sampling_ratio must be >= 0, got ", p->sampling_ratio);
  return Status::ok();
}

}  // namespace

Status roi_align_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 3));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), kRoiAlignTypes, "X"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), kRoiAlignTypes, "rois"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), dtypes::kInts, "batch_indices"));
  RoiParams p;
  return parse(node, &p);
}

Result<KernelPtr> roi_align_create(const KernelInit& init) {
  RoiParams p;
  CPU_RETURN_IF_ERROR(parse(*init.node, &p));
  return KernelPtr(new RoiAlignKernel(p));
}

}  // namespace infer::cpu::kernels
