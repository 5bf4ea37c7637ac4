// GridSample (opset 16; 20's mode names linear/cubic accepted) over 4-D inputs: each
// output pixel samples X at the normalized location grid[n, h, w] = (x, y) in [-1, 1].
// The arithmetic follows PyTorch's grid_sampler_2d (the ONNX test data comes from it):
// unnormalize (align_corners or not), then per padding_mode clip (border) or reflect
// (reflection) the source coordinate; bilinear/nearest read zero outside the input;
// bicubic takes the 4x4 taps around floor(x), floor(y) with A = -0.75 and applies the
// padding to each tap coordinate.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

enum class Interp { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

constexpr uint32_t kGridSampleTypes = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;

struct GridParams {
  Interp mode = Interp::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

double unnormalize(double c, int64_t size, bool align_corners) {
  const double s = static_cast<double>(size);
  return align_corners ? (c + 1) / 2 * (s - 1) : ((c + 1) * s - 1) / 2;
}

// Reflects c into [twice_low / 2, twice_high / 2] (bounds given doubled, so that the
// half-pixel bounds -0.5 and size - 0.5 stay integers).
double reflect(double c, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0;
  const double lo = static_cast<double>(twice_low) / 2;
  const double span = static_cast<double>(twice_high - twice_low) / 2;
  c = std::fabs(c - lo);
  const double extra = std::fmod(c, span);
  const double flips = std::floor(c / span);
  return std::fmod(flips, 2.0) == 0 ? extra + lo : span - extra + lo;
}

double clip(double c, int64_t size) {
  return std::min(static_cast<double>(size - 1), std::max(c, 0.0));
}

// The padding rule applied to a source coordinate (PyTorch's compute_coordinates).
double pad_coord(const GridParams& p, double c, int64_t size) {
  if (p.padding == Padding::kBorder) return clip(c, size);
  if (p.padding == Padding::kReflection) {
    c = p.align_corners ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
    return clip(c, size);
  }
  return c;
}

double cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
double cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

template <typename T>
double sample(const GridParams& p, const T* plane, int64_t H, int64_t W, double gx, double gy) {
  // Coordinates arrive as whole numbers in double; the range test comes before the
  // integer conversion so that huge or NaN grid values read zero instead of overflowing.
  auto at = [&](double yy, double xx) -> double {
    if (!(yy >= 0 && yy < static_cast<double>(H) && xx >= 0 && xx < static_cast<double>(W)))
      return 0.0;
    return to_double(plane[static_cast<int64_t>(yy) * W + static_cast<int64_t>(xx)]);
  };
  double ix = unnormalize(gx, W, p.align_corners);
  double iy = unnormalize(gy, H, p.align_corners);
  if (p.mode == Interp::kBicubic) {
    const double x0 = std::floor(ix), y0 = std::floor(iy);
    const double tx = ix - x0, ty = iy - y0;
    const double A = -0.75;
    const double cx[4] = {cubic2(tx + 1, A), cubic1(tx, A), cubic1(1 - tx, A), cubic2(2 - tx, A)};
    const double cy[4] = {cubic2(ty + 1, A), cubic1(ty, A), cubic1(1 - ty, A), cubic2(2 - ty, A)};
    double acc = 0;
    for (int i = 0; i < 4; ++i) {
      double row = 0;
      for (int j = 0; j < 4; ++j) {
        // PyTorch pads each tap's coordinate, then truncates it to an index.
        const double px = pad_coord(p, x0 - 1 + j, W), py = pad_coord(p, y0 - 1 + i, H);
        row += cx[j] * at(std::trunc(py), std::trunc(px));
      }
      acc += cy[i] * row;
    }
    return acc;
  }
  ix = pad_coord(p, ix, W);
  iy = pad_coord(p, iy, H);
  if (p.mode == Interp::kNearest)
    return at(std::nearbyint(iy), std::nearbyint(ix));
  const double x0 = std::floor(ix), y0 = std::floor(iy);
  const double tx = ix - x0, ty = iy - y0;
  return at(y0, x0) * (1 - tx) * (1 - ty) + at(y0, x0 + 1) * tx * (1 - ty) +
         at(y0 + 1, x0) * (1 - tx) * ty + at(y0 + 1, x0 + 1) * tx * ty;
}

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(GridParams p) : p_(p) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const Tensor& G = *ctx.input(1);
    if (X.rank() != 4) return invalid("X must be 4-D (N, C, H, W), got ", dims_str(X.dims));
    if (G.rank() != 4 || G.dims[0] != X.dims[0] || G.dims[3] != 2)
      return invalid("grid has shape ", dims_str(G.dims), ", expected [", X.dims[0],
                     ", H_out, W_out, 2] for X ", dims_str(X.dims));
    if (G.dtype != X.dtype)
      return invalid("grid is ", dtype_name(G.dtype), ", expected ", dtype_name(X.dtype), " like X");
    const int64_t N = X.dims[0], C = X.dims[1], H = X.dims[2], W = X.dims[3];
    const int64_t Ho = G.dims[1], Wo = G.dims[2];
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, {N, C, Ho, Wo}));
    if (Y->numel() == 0) return Status::ok();
    return dispatch(
        X.dtype, kGridSampleTypes, "GridSample input", [&]<typename T>(Tag<T>) -> Status {
          if constexpr (in_mask<T>(kGridSampleTypes)) {
            const T* x = X.as<T>();
            const T* g = G.as<T>();
            T* y = Y->mut<T>();
            const GridParams& p = p_;
            ctx.parallel_for(
                static_cast<size_t>(N * C), grain_for(static_cast<size_t>(Ho * Wo * 16)),
                [&](size_t r0, size_t r1) {
                  for (size_t r = r0; r < r1; ++r) {
                    const int64_t n = static_cast<int64_t>(r) / C;
                    const T* plane = x + static_cast<int64_t>(r) * H * W;
                    const T* gn = g + n * Ho * Wo * 2;
                    T* yp = y + static_cast<int64_t>(r) * Ho * Wo;
                    for (int64_t i = 0; i < Ho * Wo; ++i)
                      yp[i] = from_double<T>(
                          sample(p, plane, H, W, to_double(gn[2 * i]), to_double(gn[2 * i + 1])));
                  }
                });
          }
          return Status::ok();
        });
  }

 private:
  GridParams p_;
};

Status parse(const infer_node_view& n, GridParams* p) {
  const bool new_names = n.opset >= 20;
  const std::string mode = attr_s(n, "mode", new_names ? "linear" : "bilinear");
  if (mode == (new_names ? "linear" : "bilinear")) p->mode = Interp::kBilinear;
  else if (mode == "nearest") p->mode = Interp::kNearest;
  else if (mode == (new_names ? "cubic" : "bicubic")) p->mode = Interp::kBicubic;
  else return unsupported("GridSample mode '", mode, "' not supported at opset ", n.opset);
  const std::string pad = attr_s(n, "padding_mode", "zeros");
  if (pad == "zeros") p->padding = Padding::kZeros;
  else if (pad == "border") p->padding = Padding::kBorder;
  else if (pad == "reflection") p->padding = Padding::kReflection;
  else return unsupported("GridSample padding_mode '", pad, "' not supported");
  p->align_corners = attr_i(n, "align_corners", 0) != 0;
  return Status::ok();
}

}  // namespace

Status grid_sample_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), kGridSampleTypes, "X"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), kGridSampleTypes, "grid"));
  const infer_value_view* x = node_input(node, 0);
  if (x->rank >= 0 && x->rank != 4)
    return unsupported("GridSample supports 4-D inputs only, got rank ", x->rank);
  GridParams p;
  return parse(node, &p);
}

Result<KernelPtr> grid_sample_create(const KernelInit& init) {
  GridParams p;
  CPU_RETURN_IF_ERROR(parse(*init.node, &p));
  return KernelPtr(new GridSampleKernel(p));
}

}  // namespace infer::cpu::kernels
