"""Graphs in the styles of other exporters, built directly with onnx.helper: old opsets
with Constant nodes, fp16 weights, NHWC inputs, dynamic int8 quantization, rank-0 inputs,
many outputs and symbolic dims. Each reference is computed here, independently, with
numpy or PyTorch following the ONNX operator specification, never with infer itself.
"""

import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

from model_writer import Run, write_model

FLOAT = TensorProto.FLOAT


def _const(output, array):
    """A Constant node, as converters from other frameworks write shapes and scales."""
    return helper.make_node("Constant", [], [output], name=f"const_{output}",
                            value=numpy_helper.from_array(np.asarray(array), name=f"{output}_value"))


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name=name)


def _info(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def _model(name, nodes, inputs, outputs, initializers, opset, producer, ir_version=None,
           initializers_as_inputs=False):
    graph_inputs = list(inputs)
    if initializers_as_inputs:
        # Files of IR version 3 and older list every initializer among the graph inputs too,
        # and many converters of that era kept doing it.
        graph_inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in initializers]
    graph = helper.make_graph(nodes, name, graph_inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, producer_name=producer, opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        model.ir_version = ir_version
    return model


def _t(array):
    return torch.from_numpy(np.ascontiguousarray(array))


def export_opset9_cnn(cache_dir):
    """Opset 9 in the style of PyTorch 1.0-era and early converters: IR version 4 with the
    initializers listed as inputs, Constant nodes for the Upsample scales, the Reshape shape
    and a scalar multiplier, Upsample (removed in opset 10) and Pad-2 (pads attribute)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = (0.3 * rng.standard_normal((8, 4, 3, 3))).astype(np.float32)
    b = (0.1 * rng.standard_normal(8)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, 8).astype(np.float32)
    shift = (0.1 * rng.standard_normal(8)).astype(np.float32)
    mean = (0.1 * rng.standard_normal(8)).astype(np.float32)
    var = rng.uniform(0.5, 2.0, 8).astype(np.float32)
    wg = (0.05 * rng.standard_normal((10, 512))).astype(np.float32)
    bg = (0.1 * rng.standard_normal(10)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "bn_scale", "bn_shift", "bn_mean", "bn_var"], ["bn"],
                         epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        _const("up_scales", np.array([1, 1, 2, 2], np.float32)),
        helper.make_node("Upsample", ["pool", "up_scales"], ["upsampled"], mode="nearest"),
        helper.make_node("Pad", ["upsampled"], ["padded"], pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="reflect"),
        _const("flat_shape", np.array([1, -1], np.int64)),
        helper.make_node("Reshape", ["padded", "flat_shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "wg", "bg"], ["gemm"], transB=1),
        _const("half", np.array(0.5, np.float32)),
        helper.make_node("Mul", ["gemm", "half"], ["y"]),
    ]
    inits = [_init("w", w), _init("b", b), _init("bn_scale", scale), _init("bn_shift", shift),
             _init("bn_mean", mean), _init("bn_var", var), _init("wg", wg), _init("bg", bg)]
    model = _model("opset9_cnn", nodes, [_info("x", FLOAT, [1, 4, 6, 6])],
                   [_info("y", FLOAT, [1, 10]), _info("upsampled", FLOAT, [1, 8, 6, 6])],
                   inits, 9, "handmade (onnx.helper), opset-9 converter style", ir_version=4,
                   initializers_as_inputs=True)

    conv = F.conv2d(_t(x), _t(w), _t(b), padding=1)
    bn = F.batch_norm(conv, _t(mean), _t(var), _t(scale), _t(shift), training=False, eps=1e-5)
    pool = F.max_pool2d(torch.relu(bn), 2, 2)
    upsampled = pool.repeat_interleave(2, dim=2).repeat_interleave(2, dim=3)
    padded = F.pad(upsampled, (1, 1, 1, 1), mode="reflect")
    y = F.linear(padded.reshape(1, -1), _t(wg), _t(bg)) * 0.5
    run = Run([("x", x)], [("y", y.numpy()), ("upsampled", upsampled.numpy())])
    write_model(cache_dir, "opset9_cnn", model, [run], 1e-5, 1e-5,
                "Small convolution and Gemm (K=36 and 512); float32 results agree to ~1e-6.",
                "onnx.helper, opset 9, IR 4 with initializers as inputs: Conv, BatchNormalization, "
                "MaxPool, Upsample with Constant scales, Pad-2 reflect, Reshape with a Constant shape, "
                "Gemm, Mul by a Constant scalar; reference: PyTorch functional ops")


def export_opset11_resize_pad(cache_dir):
    """Opset 11 in the style of tf2onnx/keras2onnx of that time: every shape, scale and pad
    amount comes from a Constant node; Resize-11 (roi and scales inputs, empty scales when
    sizes is given), Pad-11 (pads and value as inputs), Clip-11 (min/max as inputs)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 3, 5, 7)).astype(np.float32)
    nodes = [
        _const("roi", np.zeros(0, np.float32)),
        _const("scales", np.array([1, 1, 2, 2], np.float32)),
        helper.make_node("Resize", ["x", "roi", "scales"], ["bilinear"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        _const("no_scales", np.zeros(0, np.float32)),
        _const("sizes", np.array([1, 3, 10, 21], np.int64)),
        helper.make_node("Resize", ["x", "roi", "no_scales", "sizes"], ["nearest"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        _const("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)),
        _const("pad_value", np.array(0.25, np.float32)),
        helper.make_node("Pad", ["x", "pads", "pad_value"], ["padded_constant"], mode="constant"),
        _const("edge_pads", np.array([0, 0, 2, 2, 0, 0, 2, 2], np.int64)),
        helper.make_node("Pad", ["x", "edge_pads"], ["padded_edge"], mode="edge"),
        _const("flat_shape", np.array([0, -1], np.int64)),
        helper.make_node("Reshape", ["bilinear", "flat_shape"], ["flat"]),
        _const("clip_min", np.array(-0.5, np.float32)),
        _const("clip_max", np.array(0.5, np.float32)),
        helper.make_node("Clip", ["flat", "clip_min", "clip_max"], ["clipped"]),
    ]
    outputs = [_info("nearest", FLOAT, [1, 3, 10, 21]), _info("padded_constant", FLOAT, [1, 3, 8, 10]),
               _info("padded_edge", FLOAT, [1, 3, 9, 11]), _info("clipped", FLOAT, [1, 420])]
    model = _model("opset11_resize_pad", nodes, [_info("x", FLOAT, [1, 3, 5, 7])], outputs, [], 11,
                   "handmade (onnx.helper), opset-11 converter style")

    # Bilinear with half_pixel coordinates is PyTorch's align_corners=False when upsampling.
    bilinear = F.interpolate(_t(x), scale_factor=2, mode="bilinear", align_corners=False).numpy()
    # Nearest, asymmetric, floor: source index floor(dst * in / out), in exact integers.
    rows = (np.arange(10) * 5) // 10
    cols = (np.arange(21) * 7) // 21
    nearest = x[:, :, rows][:, :, :, cols]
    padded_constant = np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="constant", constant_values=0.25)
    padded_edge = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode="edge")
    clipped = np.clip(bilinear.reshape(1, -1), -0.5, 0.5)
    run = Run([("x", x)], [("nearest", nearest), ("padded_constant", padded_constant),
                           ("padded_edge", padded_edge), ("clipped", clipped)])
    write_model(cache_dir, "opset11_resize_pad", model, [run], 1e-6, 1e-6,
                "Copies and two-tap interpolation only: results are exact up to one rounding.",
                "onnx.helper, opset 11: Resize linear/half_pixel with Constant roi and scales, "
                "Resize nearest/asymmetric/floor with Constant sizes, Pad-11 constant and edge, "
                "Reshape [0,-1], Clip-11; reference: PyTorch interpolate and numpy")


def export_fp16_weights(cache_dir):
    """Weights stored as float16 initializers and Cast to float32 at run time, as models
    converted to halve their size keep them; the result is also returned as float16."""
    rng = np.random.default_rng(16)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    w1 = (0.3 * rng.standard_normal((16, 32))).astype(np.float16)
    b1 = (0.1 * rng.standard_normal(32)).astype(np.float16)
    w2 = (0.3 * rng.standard_normal((32, 8))).astype(np.float16)
    b2 = (0.1 * rng.standard_normal(8)).astype(np.float16)
    nodes = [helper.make_node("Cast", [n], [n + "_f32"], to=FLOAT) for n in ("w1", "b1", "w2", "b2")]
    nodes += [
        helper.make_node("MatMul", ["x", "w1_f32"], ["mm1"]),
        helper.make_node("Add", ["mm1", "b1_f32"], ["add1"]),
        helper.make_node("Relu", ["add1"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "w2_f32"], ["mm2"]),
        helper.make_node("Add", ["mm2", "b2_f32"], ["y"]),
        helper.make_node("Cast", ["y"], ["y_fp16"], to=TensorProto.FLOAT16),
    ]
    model = _model("fp16_weights", nodes, [_info("x", FLOAT, [4, 16])],
                   [_info("y", FLOAT, [4, 8]), _info("y_fp16", TensorProto.FLOAT16, [4, 8])],
                   [_init("w1", w1), _init("b1", b1), _init("w2", w2), _init("b2", b2)], 13,
                   "handmade (onnx.helper), fp16-weights converter style")

    hidden = np.maximum(x @ w1.astype(np.float32) + b1.astype(np.float32), 0)
    y = (hidden @ w2.astype(np.float32) + b2.astype(np.float32)).astype(np.float32)
    run = Run([("x", x)], [("y", y), ("y_fp16", y.astype(np.float16))],
              # One float16 ulp is 2^-10 of the value at most: a float32 result a hair away
              # from PyTorch's can round to the neighbouring float16.
              output_tolerances={"y_fp16": (2e-3, 1e-4)})
    write_model(cache_dir, "fp16_weights", model, [run], 1e-5, 1e-5,
                "float32 path: two small MatMuls (K=16, 32), agree to ~1e-6; the float16 output "
                "allows one float16 ulp (rtol 2e-3).",
                "onnx.helper, opset 13: float16 initializers Cast to float32, MLP, float16 output; "
                "reference: numpy")


def export_nhwc_conv(cache_dir):
    """An NHWC input as TensorFlow converters produce: Transpose to NCHW, convolutions, and
    Transpose back for an NHWC output."""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((1, 10, 12, 3)).astype(np.float32)
    w1 = (0.3 * rng.standard_normal((6, 3, 3, 3))).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(6)).astype(np.float32)
    w2 = (0.3 * rng.standard_normal((6, 1, 3, 3))).astype(np.float32)
    b2 = (0.1 * rng.standard_normal(6)).astype(np.float32)
    nodes = [
        helper.make_node("Transpose", ["x"], ["nchw"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["nchw", "w1", "b1"], ["conv1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["conv1"], ["relu1"]),
        helper.make_node("Conv", ["relu1", "w2", "b2"], ["conv2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         group=6),
        helper.make_node("Transpose", ["conv2"], ["y_nhwc"], perm=[0, 2, 3, 1]),
        helper.make_node("GlobalAveragePool", ["conv2"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["pooled"]),
    ]
    model = _model("nhwc_conv", nodes, [_info("x", FLOAT, [1, 10, 12, 3])],
                   [_info("y_nhwc", FLOAT, [1, 5, 6, 6]), _info("pooled", FLOAT, [1, 6])],
                   [_init("w1", w1), _init("b1", b1), _init("w2", w2), _init("b2", b2)], 13,
                   "handmade (onnx.helper), NHWC converter style")

    conv1 = torch.relu(F.conv2d(_t(x).permute(0, 3, 1, 2), _t(w1), _t(b1), stride=2, padding=1))
    conv2 = F.conv2d(conv1, _t(w2), _t(b2), padding=1, groups=6)
    run = Run([("x", x)], [("y_nhwc", conv2.permute(0, 2, 3, 1).contiguous().numpy()),
                           ("pooled", conv2.mean(dim=(2, 3)).numpy())])
    write_model(cache_dir, "nhwc_conv", model, [run], 1e-5, 1e-5,
                "Two small convolutions (K=27 and 9); float32 results agree to ~1e-6.",
                "onnx.helper, opset 13: NHWC input, Transpose, strided Conv, depthwise Conv, "
                "Transpose back, GlobalAveragePool + Flatten; reference: PyTorch")


def _dynamic_quantize_linear(x):
    """DynamicQuantizeLinear as the ONNX specification writes it, in float32."""
    x_min = np.float32(min(np.float32(0), x.min()))
    x_max = np.float32(max(np.float32(0), x.max()))
    scale = np.float32((x_max - x_min) / np.float32(255))
    zero_point = np.uint8(np.clip(np.round(np.float32(0) - x_min / scale), 0, 255))
    quantized = np.clip(np.round(x / scale) + zero_point, 0, 255).astype(np.uint8)
    return quantized, scale, zero_point


def export_int8_dynamic(cache_dir):
    """Dynamic int8 quantization as ONNX Runtime's quantizer writes it for convolutions:
    DynamicQuantizeLinear on the activation, ConvInteger with uint8 weights and zero points,
    and the int32 accumulator rescaled by x_scale * w_scale (DequantizeLinear) plus bias."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 3, 9, 9)).astype(np.float32)
    w = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
    w_zero_point = np.uint8(121)
    w_scale = np.float32(0.02)
    bias = (0.1 * rng.standard_normal((1, 4, 1, 1))).astype(np.float32)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["x_quantized", "x_scale", "x_zero_point"]),
        helper.make_node("ConvInteger", ["x_quantized", "w", "x_zero_point", "w_zero_point"], ["accumulator"],
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["x_scale", "w_scale"], ["output_scale"]),
        helper.make_node("DequantizeLinear", ["accumulator", "output_scale"], ["rescaled"]),
        helper.make_node("Add", ["rescaled", "bias"], ["y"]),
    ]
    outputs = [_info("y", FLOAT, [1, 4, 9, 9]), _info("x_quantized", TensorProto.UINT8, [1, 3, 9, 9]),
               _info("x_scale", FLOAT, []), _info("x_zero_point", TensorProto.UINT8, [])]
    model = _model("int8_dynamic", nodes, [_info("x", FLOAT, [1, 3, 9, 9])], outputs,
                   [_init("w", w), _init("w_zero_point", w_zero_point), _init("w_scale", w_scale),
                    _init("bias", bias)], 13, "handmade (onnx.helper), dynamic-quantization style")

    quantized, x_scale, x_zero_point = _dynamic_quantize_linear(x)
    # The integer convolution in float64 is exact: |sum| <= 27 * 255 * 255 < 2^53.
    x_centered = quantized.astype(np.float64) - float(x_zero_point)
    w_centered = w.astype(np.float64) - float(w_zero_point)
    accumulator = F.conv2d(_t(x_centered), _t(w_centered), padding=1).numpy().astype(np.int32)
    rescaled = accumulator.astype(np.float32) * np.float32(x_scale * w_scale)
    y = (rescaled + bias).astype(np.float32)
    run = Run([("x", x)], [("y", y), ("x_quantized", quantized), ("x_scale", np.array(x_scale, np.float32)),
                           ("x_zero_point", np.array(x_zero_point, np.uint8))])
    write_model(cache_dir, "int8_dynamic", model, [run], 1e-5, 1e-5,
                "Quantized values and zero point must be exact (the specification divides by the "
                "scale and rounds half to even); the integer convolution is exact, so y differs "
                "only by float32 rounding of one multiply and one add.",
                "onnx.helper, opset 13: DynamicQuantizeLinear, ConvInteger (uint8, zero points), "
                "Mul of scales, DequantizeLinear of int32, Add; reference: numpy per the spec")


def export_scalar_inputs(cache_dir):
    """Rank-0 inputs and outputs: scalars scale and shift a vector, a scalar count drives
    Range (a data-dependent output length), and a comparison and a full reduction give
    rank-0 outputs."""
    nodes = [
        helper.make_node("Mul", ["x", "a"], ["scaled"]),
        helper.make_node("Add", ["scaled", "b"], ["y"]),
        helper.make_node("Mul", ["a", "b"], ["product"]),
        _const("zero", np.array(0, np.int64)),
        _const("one", np.array(1, np.int64)),
        helper.make_node("Range", ["zero", "n", "one"], ["indices"]),
        helper.make_node("Cast", ["indices"], ["indices_f32"], to=FLOAT),
        helper.make_node("Mul", ["indices_f32", "a"], ["ramp"]),
        helper.make_node("Less", ["a", "b"], ["a_less_b"]),
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
    ]
    inputs = [_info("a", FLOAT, []), _info("b", FLOAT, []), _info("n", TensorProto.INT64, []),
              _info("x", FLOAT, [5])]
    outputs = [_info("y", FLOAT, [5]), _info("product", FLOAT, []), _info("ramp", FLOAT, ["count"]),
               _info("a_less_b", TensorProto.BOOL, []), _info("total", FLOAT, [])]
    model = _model("scalar_inputs", nodes, inputs, outputs, [], 13, "handmade (onnx.helper)")

    x = np.array([0.5, -1.25, 2.0, 3.5, -0.75], np.float32)
    runs = []
    for a, b, n in [(1.5, -2.0, 4), (-0.25, 3.0, 1)]:
        a32, b32 = np.float32(a), np.float32(b)
        outputs = [("y", x * a32 + b32), ("product", np.array(a32 * b32, np.float32)),
                   ("ramp", np.arange(n, dtype=np.float32) * a32), ("a_less_b", np.array(a32 < b32)),
                   ("total", np.array(x.sum(dtype=np.float32), np.float32))]
        runs.append(Run([("a", np.array(a32)), ("b", np.array(b32)), ("n", np.array(n, np.int64)), ("x", x)],
                        outputs))
    write_model(cache_dir, "scalar_inputs", model, runs, 1e-6, 1e-6,
                "A handful of float32 multiplies and adds on exactly representable values.",
                "onnx.helper, opset 13: rank-0 float and int64 inputs, Range with a scalar limit, "
                "rank-0 Mul/Less/ReduceSum outputs; two runs; reference: numpy")


def export_multi_output(cache_dir):
    """Eight outputs: an intermediate that is also consumed further on, its consumer, an
    int64 ArgMax, an input passed through, a keepdims reduction, both halves of a Split
    (listed out of order) and a copy of an initializer."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    w = (0.5 * rng.standard_normal((8, 8))).astype(np.float32)
    b = (0.1 * rng.standard_normal(8)).astype(np.float32)
    table = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["h"]),
        helper.make_node("Relu", ["h"], ["relu"]),
        helper.make_node("Sigmoid", ["relu"], ["sigmoid"]),
        helper.make_node("ArgMax", ["h"], ["argmax"], axis=1, keepdims=0),
        helper.make_node("Identity", ["x"], ["x_copy"]),
        helper.make_node("ReduceMax", ["h"], ["row_max"], axes=[1], keepdims=1),
        _const("split_sizes", np.array([3, 5], np.int64)),
        helper.make_node("Split", ["h", "split_sizes"], ["left", "right"], axis=1),
        helper.make_node("Identity", ["table"], ["table_copy"]),
    ]
    outputs = [_info("right", FLOAT, [3, 5]), _info("relu", FLOAT, [3, 8]), _info("sigmoid", FLOAT, [3, 8]),
               _info("argmax", TensorProto.INT64, [3]), _info("x_copy", FLOAT, [3, 8]),
               _info("row_max", FLOAT, [3, 1]), _info("left", FLOAT, [3, 3]), _info("table_copy", FLOAT, [2, 2])]
    model = _model("multi_output", nodes, [_info("x", FLOAT, [3, 8])], outputs,
                   [_init("w", w), _init("b", b), _init("table", table)], 13, "handmade (onnx.helper)")

    h = x @ w + b
    relu = np.maximum(h, 0)
    run = Run([("x", x)], [("right", h[:, 3:]), ("relu", relu), ("sigmoid", 1 / (1 + np.exp(-relu))),
                           ("argmax", h.argmax(axis=1).astype(np.int64)), ("x_copy", x),
                           ("row_max", h.max(axis=1, keepdims=True)), ("left", h[:, :3]), ("table_copy", table)])
    write_model(cache_dir, "multi_output", model, [run], 1e-5, 1e-5,
                "One small MatMul (K=8); float32 results agree to ~1e-6; argmax must be equal "
                "(the row maxima are far apart).",
                "onnx.helper, opset 13: 8 outputs of several dtypes, listed out of order; "
                "reference: numpy")


def export_symbolic_dims(cache_dir):
    """Symbolic batch and sequence dims, with the Shape -> Slice -> Concat -> Reshape chain
    that exporters write for a dynamic reshape; run at two concrete shapes."""
    rng = np.random.default_rng(5)
    w = (0.4 * rng.standard_normal((6, 4))).astype(np.float32)
    bias = (0.1 * rng.standard_normal(4)).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"]),
        _const("zero", np.array([0], np.int64)),
        _const("two", np.array([2], np.int64)),
        helper.make_node("Slice", ["x_shape", "zero", "two", "zero"], ["batch_seq"]),
        _const("heads", np.array([2, 3], np.int64)),
        helper.make_node("Concat", ["batch_seq", "heads"], ["split_shape"], axis=0),
        helper.make_node("Reshape", ["x", "split_shape"], ["split"]),
        helper.make_node("Transpose", ["split"], ["by_head"], perm=[0, 2, 1, 3]),
        helper.make_node("Softmax", ["by_head"], ["probabilities"], axis=-1),
        helper.make_node("ReduceMean", ["probabilities"], ["pooled"], axes=[2], keepdims=0),
        helper.make_node("MatMul", ["x", "w"], ["projected"]),
        helper.make_node("Add", ["projected", "bias"], ["y"]),
    ]
    outputs = [_info("y", FLOAT, ["batch", "seq", 4]), _info("pooled", FLOAT, ["batch", 2, 3]),
               _info("x_shape", TensorProto.INT64, [3])]
    model = _model("symbolic_dims", nodes, [_info("x", FLOAT, ["batch", "seq", 6])], outputs,
                   [_init("w", w), _init("bias", bias)], 13, "handmade (onnx.helper)")

    runs = []
    for batch, seq in [(1, 3), (4, 7)]:
        x = rng.standard_normal((batch, seq, 6)).astype(np.float32)
        by_head = x.reshape(batch, seq, 2, 3).transpose(0, 2, 1, 3)
        probabilities = torch.softmax(_t(by_head), dim=-1).numpy()
        runs.append(Run([("x", x)], [("y", x @ w + bias), ("pooled", probabilities.mean(axis=2)),
                                     ("x_shape", np.array(x.shape, np.int64))]))
    write_model(cache_dir, "symbolic_dims", model, runs, 1e-5, 1e-5,
                "Small MatMul (K=6) and softmax over 3 values; float32 agrees to ~1e-6.",
                "onnx.helper, opset 13: input [batch, seq, 6], Shape/Slice/Concat/Reshape, "
                "Transpose, Softmax, ReduceMean, MatMul; runs at [1,3,6] and [4,7,6]; reference: numpy")


EXPORTERS = [
    ("opset9_cnn", export_opset9_cnn),
    ("opset11_resize_pad", export_opset11_resize_pad),
    ("fp16_weights", export_fp16_weights),
    ("nhwc_conv", export_nhwc_conv),
    ("int8_dynamic", export_int8_dynamic),
    ("scalar_inputs", export_scalar_inputs),
    ("multi_output", export_multi_output),
    ("symbolic_dims", export_symbolic_dims),
]
