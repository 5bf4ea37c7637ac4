// Geometry shared by the windowed ops (Conv, ConvTranspose, pools): the attributes
// kernel_shape, strides, dilations, pads and auto_pad, and the output size they imply
// for concrete input sizes.
#pragma once

#include <string>

#include "../node_util.hpp"
#include "../status.hpp"
#include "../tensor.hpp"

namespace infer::cpu {

struct WindowAttrs {
  std::string auto_pad = "NOTSET";
  Dims kernel_shape;  // may be empty (Conv: taken from the weights)
  Dims strides;       // empty: all 1
  Dims dilations;     // empty: all 1
  Dims pads;          // empty: all 0; else begin..., end...
  bool ceil_mode = false;
};

// Reads the attributes; the check function validates them.
WindowAttrs read_window_attrs(const infer_node_view& node);
// Rejects unknown auto_pad values and inconsistent attribute lengths ("Conv auto_pad=X
// not supported", "Conv strides has 3 values, expected 2").
Status check_window_attrs(const infer_node_view& node, const WindowAttrs& a, int64_t spatial_rank);

// Per spatial dim: input, kernel, stride, dilation, pads and output sizes.
struct Window {
  Dims in, kernel, stride, dilation, pad_begin, pad_end, out;
  int64_t rank() const { return static_cast<int64_t>(in.size()); }
};

// Output sizes of a conv/pool window over `in` (ceil_mode applies to pools only; a
// last window starting entirely in the end padding is dropped, as ONNX Runtime and
// PyTorch do).
Result<Window> plan_window(const WindowAttrs& a, const Dims& in, const Dims& kernel);

}  // namespace infer::cpu
