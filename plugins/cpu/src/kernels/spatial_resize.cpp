// Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9): nearest, linear and cubic
// interpolation over any number of dims, following the ONNX reference implementation.
//
// Each output coordinate x of a dim is mapped to an input coordinate by the
// coordinate_transformation_mode, then to taps (input index, weight): one for nearest,
// two for linear, four for cubic, with indices clamped to the edge (cubic's
// exclude_outside drops and renormalizes the outside ones). tf_crop_and_resize gives
// extrapolation_value where the coordinate leaves [0, in - 1].
//
// Nearest is a gather of elements (any dtype). Linear and cubic are separable: they run
// as one pass per resized dim over a double-precision buffer, exactly the reference's
// dim-by-dim recursion, and round to the output type once at the end.
//
// Opset differences: Upsample and Resize-10 use asymmetric coordinates and the
// "simple" nearest rule of ONNX Runtime (truncate when upsampling a dim, ceil when
// downsampling); Resize-11 adds roi, sizes and the modes; 13 makes roi/scales optional
// and drops tf_half_pixel_for_nn; 18 adds axes and keep_aspect_ratio_policy (antialias is
// refused); 19 adds half_pixel_symmetric.
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

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class Inputs { kAttrScales, kScalesInput, kFull };  // Upsample-7, Upsample-9/Resize-10, 11+
enum class Aspect { kStretch, kNotLarger, kNotSmaller };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  Inputs inputs = Inputs::kFull;
  Aspect aspect = Aspect::kStretch;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  std::vector<double> attr_scales;
  Dims axes;  // empty: every dim
};

// Up to four (input index, weight) pairs for one output coordinate of one dim.
struct Taps {
  int64_t idx[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
  int n = 0;
  bool outside = false;  // tf_crop_and_resize: the extrapolation value
};

// `out` is the resized length as the reference sees it: in * scale when scales are
// given (not necessarily a whole number), else the requested size.
double to_input_coord(const ResizeParams& p, double x, double scale, int64_t in, double out,
                      double roi_start, double roi_end) {
  const double fin = static_cast<double>(in), fout = out;
  switch (p.coord) {
    case Coord::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = std::floor(fout) / fout;
      const double center = fin / 2;
      const double offset = center * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return fout > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return fout == 1 ? 0.0 : x * (fin - 1) / (fout - 1);
    case Coord::kAsymmetric:
      return x / scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case Coord::kTfCropAndResize:
      return fout > 1 ? roi_start * (fin - 1) + x * (roi_end - roi_start) * (fin - 1) / (fout - 1)
                     : 0.5 * (roi_start + roi_end) * (fin - 1);
  }
  return 0.0;
}

int64_t nearest_index(Nearest m, double x, double scale) {
  const double fl = std::floor(x);
  switch (m) {
    case Nearest::kRoundPreferFloor:
      return static_cast<int64_t>(x - fl == 0.5 ? fl : std::round(x));
    case Nearest::kRoundPreferCeil:
      return static_cast<int64_t>(x - fl == 0.5 ? fl + 1 : std::round(x));
    case Nearest::kFloor:
      return static_cast<int64_t>(fl);
    case Nearest::kCeil:
      return static_cast<int64_t>(std::ceil(x));
    case Nearest::kSimple:
      return scale < 1 ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(std::trunc(x));
  }
  return 0;
}

// The taps of every output coordinate of one dim.
std::vector<Taps> dim_taps(const ResizeParams& p, double scale, int64_t in, int64_t out,
                           double length_resized, double roi_start, double roi_end) {
  std::vector<Taps> taps(static_cast<size_t>(out));
  auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    Taps& t = taps[static_cast<size_t>(o)];
    double x =
        to_input_coord(p, static_cast<double>(o), scale, in, length_resized, roi_start, roi_end);
    if (p.coord == Coord::kTfCropAndResize && (x < 0 || x > static_cast<double>(in - 1))) {
      t.outside = true;
      continue;
    }
    // Coordinates further out than a few pixels read only edge values anyway; bounding
    // them keeps the integer conversions below defined for extreme scales.
    x = std::clamp(x, -4.0, static_cast<double>(in) + 4.0);
    if (p.mode == ResizeMode::kNearest) {
      t.n = 1;
      t.idx[0] = clamp(nearest_index(p.nearest, x, scale));
      t.w[0] = 1;
      continue;
    }
    const double x0 = std::floor(x);
    const double r = x - x0;
    const int64_t i0 = static_cast<int64_t>(x0);
    if (p.mode == ResizeMode::kLinear) {
      t.n = 2;
      t.idx[0] = clamp(i0);
      t.idx[1] = clamp(i0 + 1);
      t.w[0] = 1 - r;
      t.w[1] = r;
      continue;
    }
    // Cubic convolution (Keys) with coefficient A over taps i0 - 1 .. i0 + 2.
    const double A = p.cubic_a;
    const double c[4] = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                         ((A + 2) * r - (A + 3)) * r * r + 1,
                         ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
                         ((A * (2 - r) - 5 * A) * (2 - r) + 8 * A) * (2 - r) - 4 * A};
    double sum = 0;
    t.n = 4;
    for (int k = 0; k < 4; ++k) {
      const int64_t i = i0 - 1 + k;
      t.idx[k] = clamp(i);
      t.w[k] = (p.exclude_outside && (i < 0 || i >= in)) ? 0.0 : c[k];
      sum += t.w[k];
    }
    if (p.exclude_outside && sum != 0)
      for (double& w : t.w) w /= sum;
  }
  return taps;
}

// Per dim of the input: the scale the coordinate transform uses, the roi
// (tf_crop_and_resize) and the output size.
struct Geometry {
  std::vector<double> scales, length_resized, roi_start, roi_end;
  Dims out;
  bool from_scales = true;  // false: sizes were given
};

// floor(length) as a dim, refusing lengths no tensor could have (and NaN).
Result<int64_t> output_size(double length, size_t dim) {
  if (!(length >= 0 && length < 9.0e15))
    return invalid("the scales give dim ", dim, " an output length of ", length);
  return static_cast<int64_t>(std::floor(length));
}

bool identity_taps(const std::vector<Taps>& taps, int64_t in) {
  if (static_cast<int64_t>(taps.size()) != in) return false;
  for (size_t o = 0; o < taps.size(); ++o) {
    const Taps& t = taps[o];
    if (t.outside) return false;
    for (int k = 0; k < t.n; ++k)
      if (t.w[k] != 0 && (t.idx[k] != static_cast<int64_t>(o) || t.w[k] != 1)) return false;
  }
  return true;
}

// One interpolation pass along dim `d` of `dims` (double buffers).
void resize_pass(const KernelContext& ctx, const std::vector<double>& src, const Dims& dims,
                 size_t d, const std::vector<Taps>& taps, double extrapolation,
                 std::vector<double>* dst) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= dims[i];
  for (size_t i = d + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t in_d = dims[d], out_d = static_cast<int64_t>(taps.size());
  dst->assign(static_cast<size_t>(outer * out_d * inner), 0.0);
  double* y = dst->data();
  const double* x = src.data();
  ctx.parallel_for(static_cast<size_t>(outer * out_d), grain_for(static_cast<size_t>(inner * 4)),
                   [&](size_t r0, size_t r1) {
                     for (size_t r = r0; r < r1; ++r) {
                       const int64_t ob = static_cast<int64_t>(r) / out_d;
                       const Taps& t = taps[r % static_cast<size_t>(out_d)];
                       double* yr = y + static_cast<int64_t>(r) * inner;
                       if (t.outside) {
                         std::fill(yr, yr + inner, extrapolation);
                         continue;
                       }
                       for (int k = 0; k < t.n; ++k) {
                         if (t.w[k] == 0) continue;
                         const double w = t.w[k];
                         const double* xr = x + (ob * in_d + t.idx[k]) * inner;
                         for (int64_t j = 0; j < inner; ++j) yr[j] += w * xr[j];
                       }
                     }
                   });
}

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(ResizeParams p) : p_(std::move(p)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const size_t rank = X.rank();
    if (rank == 0) return invalid("input X must have at least 1 dim");
    Geometry geo;
    CPU_RETURN_IF_ERROR(output_geometry(ctx, X, &geo));
    for (size_t d = 0; d < rank; ++d)
      geo.length_resized.push_back(geo.from_scales ? static_cast<double>(X.dims[d]) * geo.scales[d]
                                                   : static_cast<double>(geo.out[d]));
    const Dims& out = geo.out;
    if (sdk::element_count(out.data(), out.size()) > 0)
      for (size_t d = 0; d < rank; ++d)
        if (X.dims[d] == 0)
          return invalid("cannot resize the empty dim ", d, " of ", dims_str(X.dims), " to ",
                         out[d]);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (Y->numel() == 0) return Status::ok();

    std::vector<std::vector<Taps>> taps(rank);
    for (size_t d = 0; d < rank; ++d)
      taps[d] = dim_taps(p_, geo.scales[d], X.dims[d], out[d], geo.length_resized[d],
                         geo.roi_start[d], geo.roi_end[d]);
    if (p_.mode == ResizeMode::kNearest) return gather(ctx, X, Y, taps);
    if (X.dtype == INFER_DTYPE_FLOAT32 && p_.mode == ResizeMode::kLinear && bilinear_fits(X, taps))
      return bilinear_f32(ctx, X, Y, taps);
    return dispatch(X.dtype, dtypes::kAllNum, "Resize input", [&]<typename T>(Tag<T>) -> Status {
      if constexpr (in_mask<T>(dtypes::kAllNum)) {
        return interpolate<T>(ctx, X, Y, taps);
      } else {
        return invalid("dtype ", dtype_name(X.dtype), " is not supported");
      }
    });
  }

 private:
  // Scales, output dims and roi from the attributes/inputs the opset defines.
  Status output_geometry(const KernelContext& ctx, const Tensor& X, Geometry* geo) const {
    const size_t rank = X.rank();
    geo->scales.assign(rank, 1.0);
    geo->roi_start.assign(rank, 0.0);
    geo->roi_end.assign(rank, 1.0);
    geo->out = X.dims;
    std::vector<double>* scales = &geo->scales;
    std::vector<double>* roi_start = &geo->roi_start;
    std::vector<double>* roi_end = &geo->roi_end;
    Dims* out = &geo->out;
    if (p_.inputs == Inputs::kAttrScales || p_.inputs == Inputs::kScalesInput) {
      std::vector<double> s = p_.attr_scales;
      if (p_.inputs == Inputs::kScalesInput) {
        if (ctx.input(1) == nullptr) return invalid("the scales input is required");
        CPU_ASSIGN_OR_RETURN(s, read_float_list(*ctx.input(1), "scales"));
      }
      if (s.size() != rank)
        return invalid("scales has ", s.size(), " values, expected ", rank, " for input ",
                       dims_str(X.dims));
      for (size_t d = 0; d < rank; ++d) {
        if (!(s[d] > 0)) return invalid("scales must be > 0, got ", s[d], " for dim ", d);
        (*scales)[d] = s[d];
        CPU_ASSIGN_OR_RETURN((*out)[d], output_size(static_cast<double>(X.dims[d]) * s[d], d));
      }
      return Status::ok();
    }
    // Resize-11 and later: X, roi, scales, sizes; exactly one of scales and sizes.
    const Tensor* roi = ctx.input(1);
    const Tensor* sc = ctx.input(2);
    const Tensor* sz = ctx.input(3);
    const bool has_scales = sc != nullptr && sc->numel() > 0;
    const bool has_sizes = sz != nullptr && sz->numel() > 0;
    if (has_scales == has_sizes)
      return invalid(has_scales ? "both scales and sizes are given"
                                : "neither scales nor sizes is given",
                     ": exactly one of them must be non-empty");
    Dims axes = p_.axes;
    if (axes.empty())
      for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
    std::vector<bool> seen(rank, false);
    for (int64_t& a : axes) {
      CPU_ASSIGN_OR_RETURN(a, normalize_axis(a, static_cast<int64_t>(rank), "axes"));
      if (seen[static_cast<size_t>(a)]) return invalid("axes repeats axis ", a);
      seen[static_cast<size_t>(a)] = true;
    }
    const size_t na = axes.size();
    if (p_.coord == Coord::kTfCropAndResize && roi != nullptr && roi->numel() > 0) {
      CPU_ASSIGN_OR_RETURN(std::vector<double> r, read_float_list(*roi, "roi"));
      if (r.size() != 2 * na)
        return invalid("roi has ", r.size(), " values, expected ", 2 * na, " (starts and ends of ",
                       na, " axes)");
      for (size_t i = 0; i < na; ++i) {
        (*roi_start)[static_cast<size_t>(axes[i])] = r[i];
        (*roi_end)[static_cast<size_t>(axes[i])] = r[i + na];
      }
    }
    if (has_scales) {
      CPU_ASSIGN_OR_RETURN(std::vector<double> s, read_float_list(*sc, "scales"));
      if (s.size() != na)
        return invalid("scales has ", s.size(), " values, expected ", na, " for input ",
                       dims_str(X.dims));
      for (size_t i = 0; i < na; ++i) {
        const size_t d = static_cast<size_t>(axes[i]);
        if (!(s[i] > 0)) return invalid("scales must be > 0, got ", s[i], " for dim ", d);
        (*scales)[d] = s[i];
        CPU_ASSIGN_OR_RETURN((*out)[d], output_size(static_cast<double>(X.dims[d]) * s[i], d));
      }
      return Status::ok();
    }
    geo->from_scales = false;
    CPU_ASSIGN_OR_RETURN(Dims sizes, read_int_list(*sz, "sizes"));
    if (sizes.size() != na)
      return invalid("sizes has ", sizes.size(), " values, expected ", na, " for input ",
                     dims_str(X.dims));
    for (size_t i = 0; i < na; ++i)
      if (sizes[i] < 0) return invalid("sizes ", dims_str(sizes), " has a negative value");
    if (p_.aspect != Aspect::kStretch) {
      // One scale for every resized axis: the largest that fits (not_larger) or the
      // smallest that covers (not_smaller) the requested sizes.
      double s = p_.aspect == Aspect::kNotLarger ? 1e300 : 0.0;
      for (size_t i = 0; i < na; ++i) {
        const double r = static_cast<double>(sizes[i]) /
                         static_cast<double>(X.dims[static_cast<size_t>(axes[i])]);
        s = p_.aspect == Aspect::kNotLarger ? std::min(s, r) : std::max(s, r);
      }
      geo->from_scales = true;  // the coordinate transform sees in * scale, as for scales
      for (size_t i = 0; i < na; ++i) {
        const size_t d = static_cast<size_t>(axes[i]);
        (*scales)[d] = s;
        CPU_ASSIGN_OR_RETURN((*out)[d], output_size(s * static_cast<double>(X.dims[d]) + 0.5, d));
      }
      return Status::ok();
    }
    for (size_t i = 0; i < na; ++i) {
      const size_t d = static_cast<size_t>(axes[i]);
      (*out)[d] = sizes[i];
      (*scales)[d] = X.dims[d] == 0 ? 1.0
                                    : static_cast<double>(sizes[i]) / static_cast<double>(X.dims[d]);
    }
    return Status::ok();
  }

  // Nearest: each output element copies one input element (or the extrapolation value).
  Status gather(KernelContext& ctx, const Tensor& X, Tensor* Y,
                const std::vector<std::vector<Taps>>& taps) const {
    const size_t rank = X.rank();
    const size_t esize = sdk::dtype_size(X.dtype);
    std::vector<uint8_t> extrap(esize, 0);
    bool any_outside = false;
    for (const auto& t : taps)
      for (const Taps& tp : t) any_outside = any_outside || tp.outside;
    if (any_outside) {
      CPU_RETURN_IF_ERROR(dispatch(X.dtype, dtypes::kAny, "Resize input",
                                   [&]<typename T>(Tag<T>) -> Status {
                                     const T v = from_double<T>(p_.extrapolation);
                                     std::memcpy(extrap.data(), &v, esize);
                                     return Status::ok();
                                   }));
    }
    const Dims in_strides = strides_of(X.dims);
    const Dims& out = Y->dims;
    const int64_t last = rank == 0 ? 1 : out[rank - 1];
    const int64_t rows = Y->numel() / last;
    const auto* x = static_cast<const uint8_t*>(X.data);
    auto* y = static_cast<uint8_t*>(Y->data);
    if (rank == 0) {
      std::memcpy(y, x, esize);
      return Status::ok();
    }
    // The last dim's source offsets are computed once (-1: outside, the extrapolation
    // value); each row gathers them, and a row reading the same input row as the one
    // before it (an upsampled height) is a copy of that output row.
    std::vector<int64_t> cols(static_cast<size_t>(last));
    for (int64_t j = 0; j < last; ++j) {
      const Taps& t = taps[rank - 1][static_cast<size_t>(j)];
      cols[static_cast<size_t>(j)] = t.outside ? -1 : t.idx[0] * in_strides[rank - 1];
    }
    auto rows_of = [&]<typename E>(size_t r0, size_t r1) {
      E fill;
      std::memcpy(&fill, extrap.data(), sizeof(E));
      const E* xe = reinterpret_cast<const E*>(x);
      E* ye = reinterpret_cast<E*>(y);
      int64_t previous = -2;  // -1: a row outside the input
      for (size_t r = r0; r < r1; ++r) {
        // Offset of the row's input position over every dim but the last.
        int64_t rem = static_cast<int64_t>(r), base = 0;
        bool outside = false;
        for (size_t d = rank - 1; d-- > 0;) {
          const Taps& t = taps[d][static_cast<size_t>(rem % out[d])];
          rem /= out[d];
          outside = outside || t.outside;
          base += t.idx[0] * in_strides[d];
        }
        const int64_t key = outside ? -1 : base;
        E* yr = ye + static_cast<int64_t>(r) * last;
        if (key == previous) {
          std::memcpy(yr, yr - last, static_cast<size_t>(last) * sizeof(E));
          continue;
        }
        for (int64_t j = 0; j < last; ++j) {
          const int64_t c = cols[static_cast<size_t>(j)];
          yr[j] = outside || c < 0 ? fill : xe[base + c];
        }
        previous = key;
      }
    };
    ctx.parallel_for(static_cast<size_t>(rows), grain_for(static_cast<size_t>(last)),
                     [&](size_t r0, size_t r1) {
                       switch (esize) {
                         case 1:
                           rows_of.template operator()<uint8_t>(r0, r1);
                           break;
                         case 2:
                           rows_of.template operator()<uint16_t>(r0, r1);
                           break;
                         case 4:
                           rows_of.template operator()<uint32_t>(r0, r1);
                           break;
                         default:
                           rows_of.template operator()<uint64_t>(r0, r1);
                           break;  // 8 (kAny: 1, 2, 4, 8)
                       }
                     });
    return Status::ok();
  }

  // Whether bilinear_f32 serves this resize: at least 2 dims, only the last two resized
  // (the others keep their taps' identity), no extrapolated coordinate.
  static bool bilinear_fits(const Tensor& X, const std::vector<std::vector<Taps>>& taps) {
    const size_t rank = X.rank();
    if (rank < 2) return false;
    for (size_t d = 0; d + 2 < rank; ++d)
      if (!identity_taps(taps[d], X.dims[d])) return false;
    for (size_t d = rank - 2; d < rank; ++d)
      for (const Taps& t : taps[d])
        if (t.outside || t.n > 2) return false;
    return true;
  }

  // Linear float32 over the last two dims in one pass, in float like ONNX Runtime (the
  // generic path accumulates in double, pass by pass, over whole-tensor buffers): each
  // output row blends two input rows, each first interpolated along the width into a
  // per-thread row (kept while consecutive output rows read the same input rows).
  Status bilinear_f32(KernelContext& ctx, const Tensor& X, Tensor* Y,
                      const std::vector<std::vector<Taps>>& taps) const {
    const size_t rank = X.rank();
    const int64_t in_h = X.dims[rank - 2], in_w = X.dims[rank - 1];
    const int64_t out_h = Y->dims[rank - 2], out_w = Y->dims[rank - 1];
    const int64_t planes = X.numel() / (in_h * in_w);
    const std::vector<Taps>& tx = taps[rank - 1];
    const std::vector<Taps>& ty = taps[rank - 2];
    std::vector<int32_t> x0(static_cast<size_t>(out_w)), x1(x0.size());
    std::vector<float> w0(x0.size()), w1(x0.size());
    for (size_t j = 0; j < x0.size(); ++j) {
      const Taps& t = tx[j];
      x0[j] = static_cast<int32_t>(t.idx[0]);
      x1[j] = static_cast<int32_t>(t.n > 1 ? t.idx[1] : t.idx[0]);
      w0[j] = static_cast<float>(t.w[0]);
      w1[j] = t.n > 1 ? static_cast<float>(t.w[1]) : 0.0f;
    }
    const float* x = X.as<float>();
    float* y = Y->mut<float>();
    ctx.parallel_for(static_cast<size_t>(planes * out_h), grain_for(static_cast<size_t>(out_w * 8)),
                     [&](size_t r0, size_t r1) {
                       std::vector<float> rows(static_cast<size_t>(2 * out_w));
                       float* h[2] = {rows.data(), rows.data() + out_w};
                       int64_t held[2] = {-1, -1};  // plane * in_h + input row in h[i]
                       auto along_width = [&](int64_t src_row, float* dst) {
                         const float* s = x + src_row * in_w;
                         for (int64_t j = 0; j < out_w; ++j)
                           dst[j] = w0[static_cast<size_t>(j)] * s[x0[static_cast<size_t>(j)]] +
                                    w1[static_cast<size_t>(j)] * s[x1[static_cast<size_t>(j)]];
                       };
                       for (size_t r = r0; r < r1; ++r) {
                         const int64_t plane = static_cast<int64_t>(r) / out_h;
                         const Taps& t = ty[r % static_cast<size_t>(out_h)];
                         const int64_t want[2] = {plane * in_h + t.idx[0],
                                                  plane * in_h + (t.n > 1 ? t.idx[1] : t.idx[0])};
                         // Row i of the pair in h[i]: kept, taken from the other slot
                         // (the pair moved down by one row), or interpolated.
                         auto ensure = [&](int i) {
                           if (held[i] == want[i]) return;
                           if (held[1 - i] == want[i]) {
                             std::swap(h[0], h[1]);
                             std::swap(held[0], held[1]);
                             return;
                           }
                           along_width(want[i], h[i]);
                           held[i] = want[i];
                         };
                         float a = static_cast<float>(t.w[0]);
                         float b = t.n > 1 ? static_cast<float>(t.w[1]) : 0.0f;
                         ensure(0);  // first: ensure(1) then never moves row 0 away
                         const float* lower = h[0];
                         if (want[1] != want[0]) {
                           ensure(1);
                           lower = h[1];
                         } else {
                           a += b;  // both taps on one row (clamped at an edge)
                           b = 0.0f;
                         }
                         const float* upper = h[0];
                         float* yr = y + static_cast<int64_t>(r) * out_w;
                         for (int64_t j = 0; j < out_w; ++j) yr[j] = a * upper[j] + b * lower[j];
                       }
                     });
    return Status::ok();
  }

  template <typename T>
  Status interpolate(KernelContext& ctx, const Tensor& X, Tensor* Y,
                     const std::vector<std::vector<Taps>>& taps) const {
    const size_t rank = X.rank();
    std::vector<double> cur(static_cast<size_t>(X.numel())), next;
    const T* x = X.as<T>();
    for (size_t i = 0; i < cur.size(); ++i) cur[i] = to_double(x[i]);
    Dims dims = X.dims;
    // Innermost dim first, as the reference recursion does.
    for (size_t d = rank; d-- > 0;) {
      if (identity_taps(taps[d], dims[d])) continue;
      resize_pass(ctx, cur, dims, d, taps[d], p_.extrapolation, &next);
      dims[d] = static_cast<int64_t>(taps[d].size());
      cur.swap(next);
    }
    T* y = Y->mut<T>();
    for (size_t i = 0; i < cur.size(); ++i) y[i] = from_double<T>(cur[i]);
    return Status::ok();
  }

  ResizeParams p_;
};

bool parse_coord(const std::string& s, int64_t opset, Coord* c) {
  if (s == "half_pixel") *c = Coord::kHalfPixel;
  else if (s == "half_pixel_symmetric" && opset >= 19) *c = Coord::kHalfPixelSymmetric;
  else if (s == "pytorch_half_pixel") *c = Coord::kPytorchHalfPixel;
  else if (s == "align_corners") *c = Coord::kAlignCorners;
  else if (s == "asymmetric") *c = Coord::kAsymmetric;
  else if (s == "tf_half_pixel_for_nn" && opset < 13) *c = Coord::kTfHalfPixelForNn;
  else if (s == "tf_crop_and_resize") *c = Coord::kTfCropAndResize;
  else return false;
  return true;
}

// Parses the attributes; the error says which one is wrong.
Status parse_params(const infer_node_view& n, ResizeParams* p) {
  const bool upsample = std::strcmp(n.op_type, "Upsample") == 0;
  const std::string mode = attr_s(n, "mode", "nearest");
  if (mode == "nearest")
    p->mode = ResizeMode::kNearest;
  else if (mode == "linear" || (upsample && mode == "bilinear"))
    p->mode = ResizeMode::kLinear;
  else if (mode == "cubic" && !upsample && n.opset >= 11)
    p->mode = ResizeMode::kCubic;
  else return unsupported(n.op_type, " mode '", mode, "' not supported");
  if (upsample || n.opset < 11) {
    p->coord = Coord::kAsymmetric;
    p->nearest = Nearest::kSimple;
    p->inputs = upsample && n.opset < 9 ? Inputs::kAttrScales : Inputs::kScalesInput;
    if (p->inputs == Inputs::kAttrScales) {
      p->attr_scales = attr_floats(n, "scales");
      if (p->attr_scales.empty()) return unsupported("Upsample-7 requires the scales attribute");
    }
    return Status::ok();
  }
  p->inputs = Inputs::kFull;
  const std::string coord = attr_s(n, "coordinate_transformation_mode", "half_pixel");
  if (!parse_coord(coord, n.opset, &p->coord))
    return unsupported("Resize coordinate_transformation_mode '", coord, "' not supported at opset ",
                       n.opset);
  const std::string nm = attr_s(n, "nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor") p->nearest = Nearest::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil") p->nearest = Nearest::kRoundPreferCeil;
  else if (nm == "floor") p->nearest = Nearest::kFloor;
  else if (nm == "ceil") p->nearest = Nearest::kCeil;
  else return unsupported("Resize nearest_mode '", nm, "' not supported");
  p->cubic_a = attr_f(n, "cubic_coeff_a", -0.75);
  p->exclude_outside = attr_i(n, "exclude_outside", 0) != 0;
  p->extrapolation = attr_f(n, "extrapolation_value", 0.0);
  if (n.opset >= 18) {
    if (attr_i(n, "antialias", 0) != 0) return unsupported("Resize antialias=1 not supported");
    p->axes = attr_ints(n, "axes");
    const std::string ka = attr_s(n, "keep_aspect_ratio_policy", "stretch");
    if (ka == "stretch") p->aspect = Aspect::kStretch;
    else if (ka == "not_larger") p->aspect = Aspect::kNotLarger;
    else if (ka == "not_smaller") p->aspect = Aspect::kNotSmaller;
    else return unsupported("Resize keep_aspect_ratio_policy '", ka, "' not supported");
  }
  return Status::ok();
}

}  // namespace

Status resize_check(const infer_node_view& node) {
  const bool upsample = std::strcmp(node.op_type, "Upsample") == 0;
  if (upsample)
    CPU_RETURN_IF_ERROR(check_input_count(node, node.opset < 9 ? 1 : 2, node.opset < 9 ? 1 : 2));
  else if (node.opset < 11)
    CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  else
    CPU_RETURN_IF_ERROR(check_input_count(node, 1, 4));
  ResizeParams p;
  CPU_RETURN_IF_ERROR(parse_params(node, &p));
  const infer_value_view* x = node_input(node, 0);
  CPU_RETURN_IF_ERROR(check_dtype(
      node, x, p.mode == ResizeMode::kNearest ? dtypes::kAny : dtypes::kAllNum, "input 0"));
  const uint32_t floats = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;
  if (p.inputs == Inputs::kScalesInput)
    return check_dtype(node, node_input(node, 1), floats, "scales");
  if (p.inputs == Inputs::kFull) {
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), floats, "roi"));
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 2), floats, "scales"));
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), dtypes::kInts, "sizes"));
  }
  return Status::ok();
}

Result<KernelPtr> resize_create(const KernelInit& init) {
  ResizeParams p;
  CPU_RETURN_IF_ERROR(parse_params(*init.node, &p));
  return KernelPtr(new ResizeKernel(std::move(p)));
}

}  // namespace infer::cpu::kernels
