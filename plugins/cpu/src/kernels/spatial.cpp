#include "spatial.hpp"

#include <algorithm>

namespace infer::cpu {

WindowAttrs read_window_attrs(const infer_node_view& node) {
  WindowAttrs a;
  a.auto_pad = attr_s(node, "auto_pad", "NOTSET");
  a.kernel_shape = attr_ints(node, "kernel_shape");
  a.strides = attr_ints(node, "strides");
  a.dilations = attr_ints(node, "dilations");
  a.pads = attr_ints(node, "pads");
  a.ceil_mode = attr_i(node, "ceil_mode", 0) != 0;
  return a;
}

Status check_window_attrs(const infer_node_view& node, const WindowAttrs& a, int64_t rank) {
  const char* op = node.op_type;
  if (a.auto_pad != "NOTSET" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER" &&
      a.auto_pad != "VALID")
    return unsupported(op, " auto_pad=", a.auto_pad, " not supported");
  auto check_len = [&](const Dims& v, const char* name, int64_t expect) -> Status {
    if (!v.empty() && rank >= 0 && static_cast<int64_t>(v.size()) != expect)
      return unsupported(op, " ", name, " has ", v.size(), " values, expected ", expect);
    return Status::ok();
  };
  CPU_RETURN_IF_ERROR(check_len(a.kernel_shape, "kernel_shape", rank));
  CPU_RETURN_IF_ERROR(check_len(a.strides, "strides", rank));
  CPU_RETURN_IF_ERROR(check_len(a.dilations, "dilations", rank));
  CPU_RETURN_IF_ERROR(check_len(a.pads, "pads", 2 * rank));
  for (int64_t v : a.strides)
    if (v < 1) return unsupported(op, " strides must be >= 1, got ", v);
  for (int64_t v : a.dilations)
    if (v < 1) return unsupported(op, " dilations must be >= 1, got ", v);
  for (int64_t v : a.pads)
    if (v < 0) return unsupported(op, " pads must be >= 0, got ", v);
  for (int64_t v : a.kernel_shape)
    if (v < 1) return unsupported(op, " kernel_shape must be >= 1, got ", v);
  return Status::ok();
}

Result<Window> plan_window(const WindowAttrs& a, const Dims& in, const Dims& kernel) {
  const size_t r = in.size();
  if (kernel.size() != r)
    return invalid("kernel has ", kernel.size(), " dims, input has ", r, " spatial dims");
  auto pick = [&](const Dims& v, size_t i, int64_t fallback) {
    return v.empty() ? fallback : v[i];
  };
  if (!a.strides.empty() && a.strides.size() != r)
    return invalid("strides has ", a.strides.size(), " values, expected ", r);
  if (!a.dilations.empty() && a.dilations.size() != r)
    return invalid("dilations has ", a.dilations.size(), " values, expected ", r);
  if (!a.pads.empty() && a.pads.size() != 2 * r)
    return invalid("pads has ", a.pads.size(), " values, expected ", 2 * r);
  Window w;
  w.in = in;
  w.kernel = kernel;
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = pick(a.strides, i, 1), d = pick(a.dilations, i, 1), k = kernel[i];
    const int64_t span = d * (k - 1) + 1;  // extent of the dilated window
    int64_t pb = pick(a.pads, i, 0), pe = a.pads.empty() ? 0 : a.pads[i + r];
    int64_t out;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      out = (in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in[i]);
      pb = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (a.auto_pad == "VALID") {
      pb = pe = 0;
      out = in[i] >= span ? (in[i] - span) / s + 1 : 0;
    } else {
      const int64_t padded = in[i] + pb + pe;
      if (padded < span) {
        out = 0;
      } else if (a.ceil_mode) {
        out = (padded - span + s - 1) / s + 1;
        // A window may not start in the end padding.
        if ((out - 1) * s >= in[i] + pb) --out;
      } else {
        out = (padded - span) / s + 1;
      }
    }
    if (out <= 0)
      return invalid("spatial dim ", i, " of size ", in[i], " is smaller than the window (kernel ",
                     k, ", dilation ", d, ", pads ", pb, "+", pe, ")");
    w.stride.push_back(s);
    w.dilation.push_back(d);
    w.pad_begin.push_back(pb);
    w.pad_end.push_back(pe);
    w.out.push_back(out);
  }
  return w;
}

Result<std::vector<double>> read_float_list(const Tensor& t, const char* what) {
  if (t.rank() > 1) return invalid(what, " must be 1-D, got shape ", dims_str(t.dims));
  std::vector<double> out(static_cast<size_t>(t.numel()));
  Status st = dispatch(t.dtype, dtypes::kF32 | dtypes::kF64 | dtypes::kF16, what,
                       [&]<typename T>(Tag<T>) -> Status {
                         if constexpr (is_float_v<T>) {
                           for (size_t i = 0; i < out.size(); ++i) out[i] = to_double(t.as<T>()[i]);
                           return Status::ok();
                         } else {
                           return Status::ok();
                         }
                       });
  if (!st.is_ok())
    return invalid(what, " must be float16, float32 or float64, got ", dtype_name(t.dtype));
  return out;
}

}  // namespace infer::cpu
