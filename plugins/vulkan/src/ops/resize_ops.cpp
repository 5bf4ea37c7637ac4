// Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9) on the Vulkan plugin, one
// dispatch of resize.comp. The geometry (output sizes, scales, the coordinate transform
// of every dim) is worked out here in double exactly as the CPU plugin does
// (plugins/cpu/src/kernels/spatial_resize.cpp, after the ONNX reference), and handed to
// the shader as a few numbers per dim.
//
// Supported: modes nearest (nearest_mode round_prefer_floor, round_prefer_ceil, floor,
// ceil; any 4- or 8-byte dtype) and linear (float32; every resized dim interpolated);
// every coordinate_transformation_mode (half_pixel, half_pixel_symmetric,
// pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn,
// tf_crop_and_resize with a constant roi and float32 data); scales or sizes as
// constants; axes and keep_aspect_ratio_policy (18+). Refused: mode cubic, antialias=1,
// scales/sizes computed at run time, and tensors that keep more than 4 dims after the
// dims that are not resized are merged.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "op_kernel.hpp"

namespace infer::vk {
namespace {

using Dims = std::vector<int64_t>;

constexpr uint32_t kLanes = 128;
constexpr size_t kMaxRank = 4;  // dims the shader takes after merging
constexpr int64_t kMaxWords = (int64_t{1} << 31) - 1;

enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class Aspect { kStretch, kNotLarger, kNotSmaller };
// How the scales and sizes arrive: Upsample-7 (attribute), Upsample-9 / Resize-10
// (input 1), Resize-11+ (roi, scales, sizes inputs).
enum class Inputs { kAttrScales, kScalesInput, kFull };

struct Params {
  bool linear = false;
  Coord coord = Coord::kHalfPixel;
  uint32_t nearest = 0;  // the shader's NEAREST numbering
  Inputs inputs = Inputs::kFull;
  Aspect aspect = Aspect::kStretch;
  double extrapolation = 0.0;
  Dims axes;
};

// Attribute access that works on a node view (check) and a NodeInfo (plan).
struct AttrReader {
  const infer_node_view* view = nullptr;
  const NodeInfo* info = nullptr;
  std::string str(const char* key, const char* fallback) const {
    return view ? sdk::attr_string(view, key, fallback) : info->attr_string(key, fallback);
  }
  int64_t i(const char* key, int64_t fallback) const {
    return view ? sdk::attr_int(view, key, fallback) : info->attr_int(key, fallback);
  }
  double f(const char* key, double fallback) const {
    return view ? sdk::attr_float(view, key, fallback) : info->attr_float(key, fallback);
  }
  Dims ints(const char* key) const {
    if (view) {
      const std::span<const int64_t> s = sdk::attr_ints(view, key);
      return Dims(s.begin(), s.end());
    }
    return info->attr_ints(key, {});
  }
  std::vector<double> floats(const char* key) const {
    if (view) {
      const std::span<const double> s = sdk::attr_floats(view, key);
      return std::vector<double>(s.begin(), s.end());
    }
    return info->attr_floats(key, {});
  }
};

// Parses the attributes; false with *why naming the one that is not supported.
bool parse(const AttrReader& a, bool upsample, int64_t opset, Params* p, std::string* why,
           std::vector<double>* attr_scales) {
  const std::string mode = a.str("mode", "nearest");
  if (mode == "nearest") {
    p->linear = false;
  } else if (mode == "linear" || (upsample && mode == "bilinear")) {
    p->linear = true;
  } else {
    *why = "unsupported attribute mode=" + mode;
    return false;
  }
  if (upsample || opset < 11) {
    p->coord = Coord::kAsymmetric;
    p->nearest = 4;  // truncate when enlarging a dim, ceil when shrinking it
    p->inputs = upsample && opset < 9 ? Inputs::kAttrScales : Inputs::kScalesInput;
    if (p->inputs == Inputs::kAttrScales) {
      *attr_scales = a.floats("scales");
      if (attr_scales->empty()) {
        *why = "attribute scales is required";
        return false;
      }
    }
    return true;
  }
  p->inputs = Inputs::kFull;
  const std::string coord = a.str("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel")
    p->coord = Coord::kHalfPixel;
  else if (coord == "half_pixel_symmetric" && opset >= 19)
    p->coord = Coord::kHalfPixelSymmetric;
  else if (coord == "pytorch_half_pixel")
    p->coord = Coord::kPytorchHalfPixel;
  else if (coord == "align_corners")
    p->coord = Coord::kAlignCorners;
  else if (coord == "asymmetric")
    p->coord = Coord::kAsymmetric;
  else if (coord == "tf_half_pixel_for_nn" && opset < 13)
    p->coord = Coord::kTfHalfPixelForNn;
  else if (coord == "tf_crop_and_resize")
    p->coord = Coord::kTfCropAndResize;
  else {
    *why = "unsupported attribute coordinate_transformation_mode=" + coord;
    return false;
  }
  const std::string nm = a.str("nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor")
    p->nearest = 0;
  else if (nm == "round_prefer_ceil")
    p->nearest = 1;
  else if (nm == "floor")
    p->nearest = 2;
  else if (nm == "ceil")
    p->nearest = 3;
  else {
    *why = "unsupported attribute nearest_mode=" + nm;
    return false;
  }
  p->extrapolation = a.f("extrapolation_value", 0.0);
  if (opset >= 18) {
    if (a.i("antialias", 0) != 0) {
      *why = "unsupported attribute antialias=1";
      return false;
    }
    p->axes = a.ints("axes");
    const std::string ka = a.str("keep_aspect_ratio_policy", "stretch");
    if (ka == "stretch")
      p->aspect = Aspect::kStretch;
    else if (ka == "not_larger")
      p->aspect = Aspect::kNotLarger;
    else if (ka == "not_smaller")
      p->aspect = Aspect::kNotSmaller;
    else {
      *why = "unsupported attribute keep_aspect_ratio_policy=" + ka;
      return false;
    }
  }
  return true;
}

// The values of a constant float32/float64 tensor.
bool read_floats(const void* data, infer_dtype dtype, size_t count, std::vector<double>* out) {
  out->assign(count, 0.0);
  if (dtype == INFER_DTYPE_FLOAT32) {
    const auto* f = static_cast<const float*>(data);
    for (size_t i = 0; i < count; ++i) (*out)[i] = f[i];
    return true;
  }
  if (dtype == INFER_DTYPE_FLOAT64) {
    if (count) std::memcpy(out->data(), data, count * sizeof(double));
    return true;
  }
  return false;
}

bool read_ints(const void* data, infer_dtype dtype, size_t count, Dims* out) {
  out->assign(count, 0);
  if (dtype == INFER_DTYPE_INT64) {
    if (count) std::memcpy(out->data(), data, count * sizeof(int64_t));
    return true;
  }
  if (dtype == INFER_DTYPE_INT32) {
    const auto* v = static_cast<const int32_t*>(data);
    for (size_t i = 0; i < count; ++i) (*out)[i] = v[i];
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------
// check

bool view_empty(const infer_value_view* v) {
  if (v == nullptr) return true;
  if (v->rank < 0) return false;
  for (int64_t i = 0; i < v->rank; ++i)
    if (v->dims[i] == 0) return true;
  return false;
}

infer_support resize_check(const infer_node_view& node, std::string* reason) {
  const bool upsample = std::strcmp(node.op_type, "Upsample") == 0;
  Params p;
  std::vector<double> attr_scales;
  AttrReader a;
  a.view = &node;
  if (!parse(a, upsample, node.opset, &p, reason, &attr_scales)) return INFER_SUPPORT_NO;
  const infer_value_view* x = node_input(node, 0);
  if (x == nullptr) {
    *reason = "input X is missing";
    return INFER_SUPPORT_NO;
  }
  if (p.linear || p.coord == Coord::kTfCropAndResize) {
    if (x->dtype != INFER_DTYPE_FLOAT32) {
      *reason = "unsupported dtype " + dtype_name(x->dtype) + " (float32 only for this mode)";
      return INFER_SUPPORT_NO;
    }
  } else if (copy_words(x->dtype) == 0) {
    *reason = "unsupported dtype " + dtype_name(x->dtype) + " (4- and 8-byte elements only)";
    return INFER_SUPPORT_NO;
  }
  auto need_const = [&](size_t i, const char* what, bool float_type) {
    const infer_value_view* v = node_input(node, i);
    if (v == nullptr || view_empty(v)) return true;
    if (v->const_data == nullptr) {
      *reason = std::string(what) + " input must be a constant";
      return false;
    }
    const bool ok = float_type
                        ? (v->dtype == INFER_DTYPE_FLOAT32 || v->dtype == INFER_DTYPE_FLOAT64)
                        : (v->dtype == INFER_DTYPE_INT64 || v->dtype == INFER_DTYPE_INT32);
    if (!ok)
      *reason = std::string(what) + " input has the unsupported dtype " + dtype_name(v->dtype);
    return ok;
  };
  if (p.inputs == Inputs::kScalesInput && !need_const(1, "scales", true)) return INFER_SUPPORT_NO;
  if (p.inputs == Inputs::kFull) {
    if (!need_const(2, "scales", true) || !need_const(3, "sizes", false)) return INFER_SUPPORT_NO;
    if (p.coord == Coord::kTfCropAndResize && !need_const(1, "roi", true)) return INFER_SUPPORT_NO;
  }
  return INFER_SUPPORT_YES;
}

// ---------------------------------------------------------------------------------
// plan

struct Geometry {
  std::vector<double> scales, length, roi_start, roi_end;
  Dims out;
};

bool output_size(double length, int64_t* out) {
  if (!(length >= 0 && length < 9.0e15)) return false;
  *out = static_cast<int64_t>(std::floor(length));
  return true;
}

bool geometry(const NodeInfo& node, const Params& p, const std::vector<double>& attr_scales,
              std::span<const TensorDesc> in, Geometry* g, std::string* error) {
  const TensorDesc& x = in[0];
  const size_t rank = x.dims.size();
  g->scales.assign(rank, 1.0);
  g->roi_start.assign(rank, 0.0);
  g->roi_end.assign(rank, 1.0);
  g->out = x.dims;
  bool from_scales = true;
  auto input_floats = [&](size_t i, std::vector<double>* v) {
    return i < in.size() && in[i].present && in[i].host_data != nullptr &&
           read_floats(in[i].host_data, in[i].dtype, static_cast<size_t>(in[i].elements()), v);
  };
  auto nonempty = [&](size_t i) { return i < in.size() && in[i].present && in[i].elements() > 0; };

  if (p.inputs != Inputs::kFull) {
    std::vector<double> s = attr_scales;
    if (p.inputs == Inputs::kScalesInput && !input_floats(1, &s))
      return fail(node, error, "the scales input must be a constant float tensor");
    if (s.size() != rank)
      return fail(node, error,
                  "scales has " + std::to_string(s.size()) + " values, expected " +
                      std::to_string(rank) + " for input " + dims_text(x.dims));
    for (size_t d = 0; d < rank; ++d) {
      if (!(s[d] > 0) || !output_size(static_cast<double>(x.dims[d]) * s[d], &g->out[d]))
        return fail(node, error,
                    "scales value " + std::to_string(s[d]) + " of dim " + std::to_string(d) +
                        " is invalid");
      g->scales[d] = s[d];
    }
  } else {
    const bool has_scales = nonempty(2), has_sizes = nonempty(3);
    if (has_scales == has_sizes)
      return fail(
          node, error,
          has_scales ? "both scales and sizes are given" : "neither scales nor sizes is given");
    Dims axes = p.axes;
    if (axes.empty())
      for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
    std::vector<char> seen(rank, 0);
    for (int64_t& ax : axes) {
      if (ax < -static_cast<int64_t>(rank) || ax >= static_cast<int64_t>(rank))
        return fail(node, error,
                    "axes " + dims_text(p.axes) + " is invalid for input " + dims_text(x.dims));
      if (ax < 0) ax += static_cast<int64_t>(rank);
      if (seen[static_cast<size_t>(ax)])
        return fail(node, error, "axes repeats axis " + std::to_string(ax));
      seen[static_cast<size_t>(ax)] = 1;
    }
    const size_t na = axes.size();
    if (p.coord == Coord::kTfCropAndResize && nonempty(1)) {
      std::vector<double> r;
      if (!input_floats(1, &r)) return fail(node, error, "the roi input must be a constant");
      if (r.size() != 2 * na)
        return fail(
            node, error,
            "roi has " + std::to_string(r.size()) + " values, expected " + std::to_string(2 * na));
      for (size_t i = 0; i < na; ++i) {
        g->roi_start[static_cast<size_t>(axes[i])] = r[i];
        g->roi_end[static_cast<size_t>(axes[i])] = r[i + na];
      }
    }
    if (has_scales) {
      std::vector<double> s;
      if (!input_floats(2, &s)) return fail(node, error, "the scales input must be a constant");
      if (s.size() != na)
        return fail(
            node, error,
            "scales has " + std::to_string(s.size()) + " values, expected " + std::to_string(na));
      for (size_t i = 0; i < na; ++i) {
        const size_t d = static_cast<size_t>(axes[i]);
        if (!(s[i] > 0) || !output_size(static_cast<double>(x.dims[d]) * s[i], &g->out[d]))
          return fail(node, error, "scales value " + std::to_string(s[i]) + " is invalid");
        g->scales[d] = s[i];
      }
    } else {
      Dims sizes;
      if (in[3].host_data == nullptr ||
          !read_ints(in[3].host_data, in[3].dtype, static_cast<size_t>(in[3].elements()), &sizes))
        return fail(node, error, "the sizes input must be a constant int tensor");
      if (sizes.size() != na)
        return fail(node, error,
                    "sizes has " + std::to_string(sizes.size()) + " values, expected " +
                        std::to_string(na));
      for (int64_t s : sizes)
        if (s < 0) return fail(node, error, "sizes " + dims_text(sizes) + " has a negative value");
      if (p.aspect != Aspect::kStretch) {
        double s = p.aspect == Aspect::kNotLarger ? 1e300 : 0.0;
        for (size_t i = 0; i < na; ++i) {
          const double r = static_cast<double>(sizes[i]) /
                           static_cast<double>(x.dims[static_cast<size_t>(axes[i])]);
          s = p.aspect == Aspect::kNotLarger ? std::min(s, r) : std::max(s, r);
        }
        for (size_t i = 0; i < na; ++i) {
          const size_t d = static_cast<size_t>(axes[i]);
          g->scales[d] = s;
          if (!output_size(s * static_cast<double>(x.dims[d]) + 0.5, &g->out[d]))
            return fail(node, error, "sizes " + dims_text(sizes) + " give an invalid scale");
        }
      } else {
        from_scales = false;
        for (size_t i = 0; i < na; ++i) {
          const size_t d = static_cast<size_t>(axes[i]);
          g->out[d] = sizes[i];
          g->scales[d] =
              x.dims[d] == 0 ? 1.0 : static_cast<double>(sizes[i]) / static_cast<double>(x.dims[d]);
        }
      }
    }
  }
  for (size_t d = 0; d < rank; ++d)
    g->length.push_back(from_scales ? static_cast<double>(x.dims[d]) * g->scales[d]
                                    : static_cast<double>(g->out[d]));
  return true;
}

// x_in = (x_out + q) * k / m + c for one dim, as the reference computes it.
struct DimMap {
  double q = 0, k = 1, m = 1, c = 0;
  double at(int64_t o) const { return (static_cast<double>(o) + q) * k / m + c; }
};

DimMap dim_map(Coord coord, double scale, int64_t in, double length, double rs, double re) {
  const double fin = static_cast<double>(in);
  DimMap f;
  switch (coord) {
    case Coord::kHalfPixel:
      f = {0.5, 1, scale, -0.5};
      break;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = std::floor(length) / length;
      const double offset = fin / 2 * (1 - adjustment);
      f = {0.5, 1, scale, offset - 0.5};
      break;
    }
    case Coord::kPytorchHalfPixel:
      f = length > 1 ? DimMap{0.5, 1, scale, -0.5} : DimMap{0, 0, 1, 0};
      break;
    case Coord::kAlignCorners:
      f = length == 1 ? DimMap{0, 0, 1, 0} : DimMap{0, fin - 1, length - 1, 0};
      break;
    case Coord::kAsymmetric:
      f = {0, 1, scale, 0};
      break;
    case Coord::kTfHalfPixelForNn:
      f = {0.5, 1, scale, 0};
      break;
    case Coord::kTfCropAndResize:
      f = length > 1 ? DimMap{0, (re - rs) * (fin - 1), length - 1, rs * (fin - 1)}
                     : DimMap{0, 0, 1, 0.5 * (rs + re) * (fin - 1)};
      break;
  }
  return f;
}

bool resize_plan(const NodeInfo& node, std::span<const TensorDesc> in, OpPlan* out,
                 std::string* error) {
  const bool upsample = node.op_type == "Upsample";
  Params p;
  std::vector<double> attr_scales;
  AttrReader a;
  a.info = &node;
  std::string why;
  if (!parse(a, upsample, node.opset, &p, &why, &attr_scales)) return fail(node, error, why);
  const TensorDesc& x = in[0];
  if (x.dims.empty()) return fail(node, error, "input X must have at least 1 dim");
  Geometry g;
  if (!geometry(node, p, attr_scales, in, &g, error)) return false;
  TensorDesc y{x.dtype, g.out};
  const bool extrapolate = p.coord == Coord::kTfCropAndResize;
  if ((p.linear || extrapolate) && x.dtype != INFER_DTYPE_FLOAT32)
    return fail(node, error,
                "unsupported dtype " + dtype_name(x.dtype) + " (float32 only for this mode)");
  const uint32_t words = copy_words(x.dtype);
  if (words == 0) return fail(node, error, "unsupported dtype " + dtype_name(x.dtype));
  if ((x.elements() + y.elements()) * words > kMaxWords)
    return fail(node, error,
                "input " + dims_text(x.dims) + " or output " + dims_text(g.out) + " is too large");
  out->outputs.push_back(y);
  if (y.elements() == 0) return true;
  for (size_t d = 0; d < x.dims.size(); ++d)
    if (x.dims[d] == 0)
      return fail(node, error,
                  "cannot resize the empty dim " + std::to_string(d) + " of " + dims_text(x.dims));

  // Dims whose map sends every output coordinate to itself need no taps; neighbouring
  // ones merge into a single dim.
  struct Merged {
    int64_t in, out;
    bool resized;
    DimMap map;
    bool shrinks;
  };
  std::vector<Merged> dims;
  for (size_t d = 0; d < x.dims.size(); ++d) {
    const DimMap f =
        dim_map(p.coord, g.scales[d], x.dims[d], g.length[d], g.roi_start[d], g.roi_end[d]);
    bool identity = g.out[d] == x.dims[d];
    for (int64_t o = 0; identity && o < g.out[d]; ++o) identity = f.at(o) == static_cast<double>(o);
    if (identity && !dims.empty() && !dims.back().resized) {
      dims.back().in *= x.dims[d];
      dims.back().out *= x.dims[d];
      continue;
    }
    dims.push_back({x.dims[d], g.out[d], !identity, f, g.scales[d] < 1});
  }
  if (dims.size() > kMaxRank)
    return fail(node, error,
                "input " + dims_text(x.dims) + " resized to " + dims_text(g.out) + " keeps " +
                    std::to_string(dims.size()) +
                    " dims after merging, the shader takes at most 4");

  Dispatch disp;
  disp.shader = find_shader("resize");
  if (disp.shader == nullptr) return fail(node, error, "shader resize is missing from the build");
  disp.spec = {kLanes, 1, 1, words, p.linear ? 1u : 0u, p.nearest, extrapolate ? 1u : 0u};
  disp.push.assign(5 + 6 * kMaxRank, 0);
  uint32_t resized = 0, shrinks = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    const Merged& m = dims[d];
    if (m.resized) resized |= 1u << d;
    if (m.shrinks) shrinks |= 1u << d;
    disp.push[5 + d] = static_cast<uint32_t>(m.in);
    disp.push[5 + kMaxRank + d] = static_cast<uint32_t>(m.out);
    disp.push[5 + 2 * kMaxRank + d] = push_float(static_cast<float>(m.map.q));
    disp.push[5 + 3 * kMaxRank + d] = push_float(static_cast<float>(m.map.k));
    disp.push[5 + 4 * kMaxRank + d] = push_float(static_cast<float>(m.map.m));
    disp.push[5 + 5 * kMaxRank + d] = push_float(static_cast<float>(m.map.c));
  }
  disp.push[0] = static_cast<uint32_t>(y.elements());
  disp.push[1] = static_cast<uint32_t>(dims.size());
  disp.push[2] = resized;
  disp.push[3] = shrinks;
  disp.push[4] = push_float(static_cast<float>(p.extrapolation));
  disp.bindings = {Operand::input(0), Operand::output(0)};
  const uint64_t groups = div_up(static_cast<uint64_t>(y.elements()), kLanes);
  if (groups <= 65535) {
    disp.groups[0] = static_cast<uint32_t>(groups);
  } else {
    disp.groups[0] = 65535;
    disp.groups[1] = div_up(groups, 65535);
  }
  out->dispatches.push_back(std::move(disp));
  return true;
}

double resize_flops(const infer_node_view& node) {
  const infer_value_view* y = node.num_outputs > 0 ? node.outputs[0] : nullptr;
  if (y == nullptr || y->rank < 0) return -1;
  double n = 1;
  for (int64_t i = 0; i < y->rank; ++i) {
    if (y->dims[i] < 0) return -1;
    n *= static_cast<double>(y->dims[i]);
  }
  return (sdk::attr_string(&node, "mode", "nearest") == "nearest" ? 1 : 8) * n;
}

}  // namespace

void add_resize_ops(std::vector<OpKernel>& table) {
  table.push_back({"", "Resize", resize_check, resize_plan, resize_flops});
  table.push_back({"", "Upsample", resize_check, resize_plan, resize_flops});
}

}  // namespace infer::vk
