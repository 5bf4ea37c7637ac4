#!/usr/bin/python3
"""Generates tests/plugins/cpu/data/op_cases.txt: operator test cases with inputs and
expected outputs computed independently of the plugin, with numpy (and PyTorch for
convolutions). The file format is described in
tests/support/include/infer/test_support/op_case.hpp.

Run with the system python (it has numpy and torch):
    /usr/bin/python3 tests/plugins/cpu/gen_expected.py
The output is committed; rerun after changing this script.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "op_cases.txt")

DTYPE_NAMES = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.int8): "int8",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.int16): "int16",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.int32): "int32",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.int64): "int64",
    np.dtype(np.uint64): "uint64",
    np.dtype(np.bool_): "bool",
    np.dtype(np.float16): "float16",
}

# ONNX TensorProto data types, for Cast's `to`.
ONNX_TYPES = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6,
              "int64": 7, "bool": 9, "float16": 10, "float64": 11, "uint32": 12,
              "uint64": 13, "bfloat16": 16}

rng = np.random.default_rng(20240601)


class BF16:
    """A bfloat16 tensor, held as its raw 16-bit patterns (numpy has no bfloat16)."""

    def __init__(self, bits):
        self.bits = np.asarray(bits, dtype=np.uint16)
        self.shape = self.bits.shape


def to_bf16(x):
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(torch.bfloat16)
    return BF16(t.view(torch.int16).numpy().view(np.uint16))


def fmt_value(v, dtype):
    if dtype in ("float32", "float64"):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return "%.9g" % f if dtype == "float32" else "%.17g" % f
    if dtype == "bool":
        return "1" if v else "0"
    return str(int(v))


def fmt_tensor(arr):
    if isinstance(arr, BF16):
        dtype, flat, shape = "bfloat16", arr.bits.reshape(-1), arr.shape
    else:
        arr = np.asarray(arr)
        dtype = DTYPE_NAMES[arr.dtype]
        shape = arr.shape
        flat = arr.reshape(-1)
        if dtype == "float16":
            flat = flat.view(np.uint16)
    head = "%s %d %s" % (dtype, len(shape), " ".join(str(d) for d in shape))
    vals = " ".join(fmt_value(v, "uint16" if dtype in ("float16", "bfloat16") else dtype) for v in flat)
    return "%s : %s" % (head.rstrip(), vals)


def fmt_attr(name, v):
    if isinstance(v, tuple) and v[0] == "ints":
        return "attr ints %s %d%s" % (name, len(v[1]), (" : " + " ".join(str(int(x)) for x in v[1])) if v[1] else "")
    if isinstance(v, (bool, int, np.integer)):
        return "attr int %s %d" % (name, int(v))
    if isinstance(v, float):
        return "attr float %s %s" % (name, "%.9g" % v)
    if isinstance(v, str):
        return "attr string %s %s" % (name, v)
    if isinstance(v, (np.ndarray, BF16)):
        return "attr tensor %s %s" % (name, fmt_tensor(v))
    if isinstance(v, list) and all(isinstance(x, (int, np.integer)) for x in v):
        return "attr ints %s %d : %s" % (name, len(v), " ".join(str(int(x)) for x in v))
    if isinstance(v, list):
        return "attr floats %s %d : %s" % (name, len(v), " ".join("%.9g" % x for x in v))
    raise TypeError("attribute %s: %r" % (name, v))


class Case:
    def __init__(self, name, atol=1e-5, rtol=1e-5):
        self.name, self.atol, self.rtol = name, atol, rtol
        self.lines = []

    def input(self, name, arr):
        self.lines.append("input %s %s" % (name, fmt_tensor(arr)))
        return self

    def const(self, name, arr):
        self.lines.append("const %s %s" % (name, fmt_tensor(arr)))
        return self

    def value(self, name, dtype, shape):
        """Declares an intermediate value's view (dtype name and dims)."""
        self.lines.append("value %s %s %d %s" % (name, dtype, len(shape), " ".join(str(d) for d in shape)))
        return self

    def node(self, op, ins, outs, opset=17, name=None, **attrs):
        name = name or "%s_%d" % (op.lower(), sum(1 for l in self.lines if l.startswith("node")))
        self.lines.append("node %s %d %s | %s | %s" % (
            op, opset, name, " ".join(i or "-" for i in ins), " ".join(o or "-" for o in outs)))
        for k, v in attrs.items():
            self.lines.append(fmt_attr(k, v))
        return self

    def output(self, name, arr):
        self.lines.append("output %s %s" % (name, fmt_tensor(arr)))
        return self

    def text(self):
        head = ["case " + self.name]
        if (self.atol, self.rtol) != (1e-5, 1e-5):
            head.append("tol %g %g" % (self.atol, self.rtol))
        return "\n".join(head + self.lines + ["end", ""])


CASES = []


def add(case):
    if any(c.name == case.name for c in CASES):
        raise ValueError("duplicate case " + case.name)
    CASES.append(case)
    return case


def single(name, op, inputs, outputs, opset=17, atol=1e-5, rtol=1e-5, consts=(), **attrs):
    """One node. inputs: list of (name, array) or None (omitted); names in `consts` are
    constants. outputs: list of (name, expected array) or None (omitted)."""
    c = Case(name, atol, rtol)
    for item in inputs:
        if item is None:
            continue
        n, arr = item
        (c.const if n in consts else c.input)(n, arr)
    c.node(op, [i[0] if i else None for i in inputs], [o[0] if o else None for o in outputs],
           opset=opset, name=name, **attrs)
    for o in outputs:
        if o is not None:
            c.output(o[0], o[1])
    return add(c)


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def ints(dtype, *shape, lo=-9, hi=10):
    return rng.integers(lo, hi, size=shape).astype(dtype)


# ---------------------------------------------------------------------------------------
# Elementwise binary ops with broadcasting.

def gen_binary():
    a, b = f32(2, 3), f32(2, 3)
    single("add_f32_same", "Add", [("a", a), ("b", b)], [("y", a + b)], opset=14)
    a, b = f32(2, 3, 4), f32(4)
    single("add_f32_bcast_row", "Add", [("a", a), ("b", b)], [("y", a + b)], opset=7)
    a, b = f32(2, 1, 4), f32(3, 1)
    single("add_f32_bcast_both", "Add", [("a", a), ("b", b)], [("y", a + b)], opset=13)
    a, b = f32(2, 3), np.array(1.5, dtype=np.float32)
    single("add_f32_scalar_const", "Add", [("a", a), ("b", b)], [("y", a + b)], consts=("b",))
    a, b = f32(0, 3), f32(3)
    single("add_f32_empty", "Add", [("a", a), ("b", b)], [("y", a + b)])
    a, b = ints(np.int64, 3, 1), ints(np.int64, 1, 4)
    single("sub_i64_bcast", "Sub", [("a", a), ("b", b)], [("y", a - b)])
    a, b = ints(np.int32, 2, 3), ints(np.int32, 3)
    single("mul_i32_bcast", "Mul", [("a", a), ("b", b)], [("y", a * b)])
    a, b = f32(2, 3), f32(2, 3, lo=0.5, hi=2.0)
    single("div_f32", "Div", [("a", a), ("b", b)], [("y", a / b)])
    a = np.array([7, -7, 7, -7, 0, 9], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 4], dtype=np.int64)
    trunc = np.array([int(x / y) for x, y in zip(a, b)], dtype=np.int64)  # C truncation
    single("div_i64_truncates", "Div", [("a", a), ("b", b)], [("y", trunc)])
    a, b = f32(2, 3, lo=0.1, hi=3.0), f32(2, 3)
    single("pow_f32", "Pow", [("a", a), ("b", b)], [("y", np.power(a, b))], atol=1e-5, rtol=1e-5)
    a, b = f32(2, 3), np.array([2], dtype=np.int64)
    single("pow_f32_i64_exponent", "Pow", [("a", a), ("b", b)], [("y", (a.astype(np.float64) ** 2).astype(np.float32))],
           opset=15)
    a, b = ints(np.int64, 4, lo=-3, hi=4), np.array([0, 1, 2, 3], dtype=np.int64)
    single("pow_i64", "Pow", [("a", a), ("b", b)], [("y", a ** b)], opset=15)
    a, b, c = f32(2, 1, 3), f32(4, 1), f32(3)
    single("max_variadic_bcast", "Max", [("a", a), ("b", b), ("c", c)], [("y", np.maximum(np.maximum(a, b), c))], opset=13)
    single("max_single_input", "Max", [("a", a)], [("y", a)], opset=13)
    a, b = ints(np.int64, 2, 3), ints(np.int64, 3)
    single("max_i64", "Max", [("a", a), ("b", b)], [("y", np.maximum(a, b))], opset=13)
    a, b = f32(3, 2), f32(2)
    single("min_f32", "Min", [("a", a), ("b", b)], [("y", np.minimum(a, b))], opset=8)
    a = ints(np.int64, 2, 3, lo=0, hi=3)
    b = ints(np.int64, 3, lo=0, hi=3)
    single("equal_i64", "Equal", [("a", a), ("b", b)], [("y", a == b)], opset=13)
    a, b = rng.integers(0, 2, size=(4,)).astype(bool), np.array([True, False, True, False])
    single("equal_bool", "Equal", [("a", a), ("b", b)], [("y", a == b)], opset=11)
    a, b = f32(2, 3), f32(3)
    b[1] = a[0, 1]  # one tie
    single("less_f32_bcast", "Less", [("a", a), ("b", b)], [("y", a < b)], opset=13)
    single("lessorequal_f32", "LessOrEqual", [("a", a), ("b", b)], [("y", a <= b)], opset=16)
    single("greaterorequal_f32", "GreaterOrEqual", [("a", a), ("b", b)], [("y", a >= b)], opset=16)
    a, b = ints(np.int32, 2, 3), ints(np.int32, 2, 1)
    single("greater_i32", "Greater", [("a", a), ("b", b)], [("y", a > b)], opset=9)
    a = np.array([[True, True, False, False]])
    b = np.array([[True], [False]])
    single("and_bool", "And", [("a", a), ("b", b)], [("y", a & b)])
    single("or_bool", "Or", [("a", a), ("b", b)], [("y", a | b)])
    single("xor_bool", "Xor", [("a", a), ("b", b)], [("y", a ^ b)])
    cnd = np.array([[True, False, True]])
    x, y = f32(2, 1), f32(2, 3)
    single("where_f32_bcast", "Where", [("c", cnd), ("x", x), ("y", y)], [("out", np.where(cnd, x, y))], opset=16)
    x, y = ints(np.int64, 3), ints(np.int64, 2, 1)
    single("where_i64", "Where", [("c", cnd), ("x", x), ("y", y)], [("out", np.where(cnd, x, y))], opset=9)


# ---------------------------------------------------------------------------------------
# Elementwise unary ops and activations.

def gen_unary():
    x = f32(2, 5, lo=-3, hi=3)
    pos = f32(2, 5, lo=0.1, hi=4)
    erf = np.vectorize(math.erf)
    table = [
        ("Neg", x, -x), ("Abs", x, np.abs(x)), ("Exp", x, np.exp(x)), ("Log", pos, np.log(pos)),
        ("Sqrt", pos, np.sqrt(pos)), ("Reciprocal", pos, 1 / pos), ("Floor", x, np.floor(x)),
        ("Ceil", x, np.ceil(x)), ("Erf", x, erf(x.astype(np.float64)).astype(np.float32)),
        ("Relu", x, np.maximum(x, 0)), ("Sigmoid", x, 1 / (1 + np.exp(-x.astype(np.float64)))),
        ("Tanh", x, np.tanh(x)), ("Softplus", x, np.log1p(np.exp(x.astype(np.float64)))),
        ("Sign", x, np.sign(x)), ("Sin", x, np.sin(x)), ("Cos", x, np.cos(x)),
        ("Softsign", x, x / (1 + np.abs(x))),
    ]
    for op, inp, out in table:
        single("unary_%s" % op.lower(), op, [("x", inp)], [("y", np.asarray(out, dtype=np.float32))],
               opset=13, atol=2e-6, rtol=2e-6)
    r = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, 0.0], dtype=np.float32)
    single("unary_round_half_even", "Round", [("x", r)], [("y", np.round(r))], opset=11)
    xl = x.astype(np.float64)
    single("leakyrelu_alpha", "LeakyRelu", [("x", x)], [("y", np.where(x >= 0, x, 0.1 * xl).astype(np.float32))],
           opset=16, alpha=0.1)
    single("leakyrelu_default", "LeakyRelu", [("x", x)], [("y", np.where(x >= 0, x, 0.01 * xl).astype(np.float32))],
           opset=6)
    single("elu_alpha", "Elu", [("x", x)], [("y", np.where(x >= 0, x, 0.5 * np.expm1(xl)).astype(np.float32))],
           opset=6, alpha=0.5)
    single("hardsigmoid_default", "HardSigmoid", [("x", x)],
           [("y", np.clip(0.2 * xl + 0.5, 0, 1).astype(np.float32))], opset=6)
    single("hardsigmoid_custom", "HardSigmoid", [("x", x)],
           [("y", np.clip(0.3 * xl + 0.25, 0, 1).astype(np.float32))], opset=6, alpha=0.3, beta=0.25)
    single("hardswish", "HardSwish", [("x", x)], [("y", (xl * np.clip(xl / 6 + 0.5, 0, 1)).astype(np.float32))],
           opset=14)
    a, g = 1.67326319217681884765625, 1.05070102214813232421875
    single("selu_default", "Selu", [("x", x)], [("y", (g * np.where(xl > 0, xl, a * np.expm1(xl))).astype(np.float32))],
           opset=6, atol=2e-6)
    xi = ints(np.int64, 6)
    single("neg_i64", "Neg", [("x", xi)], [("y", -xi)], opset=13)
    xi32 = ints(np.int32, 6)
    single("abs_i32", "Abs", [("x", xi32)], [("y", np.abs(xi32))], opset=13)
    b = np.array([True, False, True])
    single("not_bool", "Not", [("x", b)], [("y", ~b)], opset=1)
    # Clip: attributes (opset 6), inputs (opset 11), int64 (opset 12), min > max.
    single("clip_attrs_opset6", "Clip", [("x", x)], [("y", np.clip(x, -1.0, 0.5))], opset=6, min=-1.0, max=0.5)
    single("clip_default_opset6", "Clip", [("x", x)], [("y", x)], opset=6)
    lo, hi = np.array(-0.5, dtype=np.float32), np.array(1.0, dtype=np.float32)
    single("clip_inputs_opset11", "Clip", [("x", x), ("lo", lo), ("hi", hi)], [("y", np.clip(x, lo, hi))],
           opset=11, consts=("lo", "hi"))
    single("clip_min_only_opset13", "Clip", [("x", x), ("lo", lo)], [("y", np.maximum(x, lo))], opset=13)
    single("clip_max_only_opset13", "Clip", [("x", x), None, ("hi", hi)], [("y", np.minimum(x, hi))], opset=13)
    xi = ints(np.int64, 8)
    single("clip_i64_opset12", "Clip", [("x", xi), ("lo", np.array(-3, dtype=np.int64)), ("hi", np.array(4, dtype=np.int64))],
           [("y", np.clip(xi, -3, 4))], opset=12)
    single("clip_min_gt_max", "Clip", [("x", x), ("lo", np.array(1.0, dtype=np.float32)),
                                       ("hi", np.array(0.0, dtype=np.float32))],
           [("y", np.full_like(x, 0.0))], opset=13)


# ---------------------------------------------------------------------------------------
# Convolution (reference: PyTorch in float64; explicit padding done with F.pad so that
# asymmetric pads and auto_pad are covered).

def torch_conv(x, w, b, strides, pads, dilations, group):
    nd = x.ndim - 2
    xt = torch.from_numpy(x.astype(np.float64))
    # F.pad takes (last_begin, last_end, prev_begin, prev_end, ...).
    pad = []
    for i in reversed(range(nd)):
        pad += [pads[i], pads[i + nd]]
    xt = F.pad(xt, pad)
    wt = torch.from_numpy(w.astype(np.float64))
    bt = None if b is None else torch.from_numpy(b.astype(np.float64))
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    return fn(xt, wt, bt, stride=strides, dilation=dilations, groups=group).numpy().astype(np.float32)


def same_pads(in_sizes, k, s, d, upper):
    pb, pe = [], []
    for i, n in enumerate(in_sizes):
        out = -(-n // s[i])
        total = max(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - n)
        b = total // 2 if upper else total - total // 2
        pb.append(b)
        pe.append(total - b)
    return pb + pe


def gen_conv():
    x, w, b = f32(1, 2, 5, 5), f32(3, 2, 3, 3), f32(3)
    single("conv2d_pads1", "Conv", [("x", x), ("w", w), ("b", b)],
           [("y", torch_conv(x, w, b, [1, 1], [1, 1, 1, 1], [1, 1], 1))], opset=11, atol=1e-5,
           consts=("w", "b"), pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    x, w = f32(2, 3, 9, 8), f32(4, 3, 3, 2)
    single("conv2d_stride_dilation_asym_pads", "Conv", [("x", x), ("w", w)],
           [("y", torch_conv(x, w, None, [2, 1], [0, 1, 1, 2], [2, 2], 1))], atol=1e-5,
           strides=[2, 1], pads=[0, 1, 1, 2], dilations=[2, 2])
    x, w, b = f32(1, 4, 6, 6), f32(6, 2, 3, 3), f32(6)
    single("conv2d_group2", "Conv", [("x", x), ("w", w), ("b", b)],
           [("y", torch_conv(x, w, b, [1, 1], [0, 0, 0, 0], [1, 1], 2))], atol=1e-5, group=2)
    x, w = f32(1, 3, 5, 5), f32(3, 1, 3, 3)
    single("conv2d_depthwise", "Conv", [("x", x), ("w", w)],
           [("y", torch_conv(x, w, None, [1, 1], [1, 1, 1, 1], [1, 1], 3))], atol=1e-5, group=3,
           pads=[1, 1, 1, 1])
    x, w = f32(1, 2, 7, 6), f32(2, 2, 3, 3)
    for mode in ("SAME_UPPER", "SAME_LOWER"):
        p = same_pads([7, 6], [3, 3], [2, 2], [1, 1], mode == "SAME_UPPER")
        single("conv2d_auto_pad_%s" % mode.lower(), "Conv", [("x", x), ("w", w)],
               [("y", torch_conv(x, w, None, [2, 2], p, [1, 1], 1))], atol=1e-5, auto_pad=mode, strides=[2, 2])
    x4, w4 = f32(1, 1, 4, 4), f32(1, 1, 2, 2)
    p = same_pads([4, 4], [2, 2], [1, 1], [1, 1], False)
    assert p[0] != p[2], "SAME_LOWER must pad asymmetrically here"
    single("conv2d_same_lower_even_kernel", "Conv", [("x", x4), ("w", w4)],
           [("y", torch_conv(x4, w4, None, [1, 1], p, [1, 1], 1))], atol=1e-5, auto_pad="SAME_LOWER")
    single("conv2d_auto_pad_valid", "Conv", [("x", x), ("w", w)],
           [("y", torch_conv(x, w, None, [2, 1], [0, 0, 0, 0], [1, 1], 1))], atol=1e-5, auto_pad="VALID",
           strides=[2, 1])
    x, w, b = f32(2, 4, 3, 3), f32(5, 4, 1, 1), f32(5)
    single("conv2d_1x1_batch2", "Conv", [("x", x), ("w", w), ("b", b)],
           [("y", torch_conv(x, w, b, [1, 1], [0, 0, 0, 0], [1, 1], 1))], atol=1e-5, consts=("w",))
    x, w, b = f32(2, 2, 9), f32(3, 2, 3), f32(3)
    single("conv1d", "Conv", [("x", x), ("w", w), ("b", b)],
           [("y", torch_conv(x, w, b, [2], [1, 0], [1], 1))], atol=1e-5, strides=[2], pads=[1, 0])
    x, w = f32(1, 2, 4, 5, 4), f32(2, 2, 2, 3, 2)
    single("conv3d", "Conv", [("x", x), ("w", w)],
           [("y", torch_conv(x, w, None, [1, 2, 1], [1, 0, 1, 0, 1, 0], [1, 1, 2], 1))], atol=1e-5,
           strides=[1, 2, 1], pads=[1, 0, 1, 0, 1, 0], dilations=[1, 1, 2])
    # A larger conv whose im2col matrix spans several gemm tiles (K > 256, N > 256).
    x, w, b = f32(1, 32, 18, 18), f32(8, 32, 3, 3), f32(8)
    single("conv2d_multi_tile", "Conv", [("x", x), ("w", w), ("b", b)],
           [("y", torch_conv(x, w, b, [1, 1], [1, 1, 1, 1], [1, 1], 1))], atol=2e-4, rtol=1e-4,
           consts=("w", "b"), pads=[1, 1, 1, 1])


def torch_conv_transpose(x, w, b, strides, pads, out_pad, dilations, group):
    nd = x.ndim - 2
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d}[nd]
    full = fn(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
              None if b is None else torch.from_numpy(b.astype(np.float64)), stride=strides,
              output_padding=out_pad, dilation=dilations, groups=group).numpy()
    sl = [slice(None), slice(None)]
    for i in range(nd):
        sl.append(slice(pads[i], full.shape[2 + i] - pads[i + nd]))
    return full[tuple(sl)].astype(np.float32)


def gen_conv_transpose():
    x, w, b = f32(1, 2, 3, 3), f32(2, 3, 3, 3), f32(3)
    single("convtranspose2d_basic", "ConvTranspose", [("x", x), ("w", w), ("b", b)],
           [("y", torch_conv_transpose(x, w, b, [1, 1], [0, 0, 0, 0], [0, 0], [1, 1], 1))], atol=1e-5)
    x, w = f32(1, 4, 3, 4), f32(4, 1, 3, 3)
    single("convtranspose2d_stride_pads_group", "ConvTranspose", [("x", x), ("w", w)],
           [("y", torch_conv_transpose(x, w, None, [2, 2], [1, 0, 1, 2], [1, 1], [1, 1], 2))], atol=1e-5,
           strides=[2, 2], pads=[1, 0, 1, 2], output_padding=[1, 1], group=2)
    x, w, b = f32(2, 3, 5), f32(3, 2, 3), f32(2)
    single("convtranspose1d_dilation", "ConvTranspose", [("x", x), ("w", w), ("b", b)],
           [("y", torch_conv_transpose(x, w, b, [2], [1, 1], [0], [2], 1))], atol=1e-5,
           strides=[2], pads=[1, 1], dilations=[2])


# ---------------------------------------------------------------------------------------
# Gemm and MatMul.

def gen_matmul():
    a, b, c = f32(3, 4), f32(4, 5), f32(5)
    ad, bd, cd = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    single("gemm_bias_row", "Gemm", [("a", a), ("b", b), ("c", c)], [("y", (ad @ bd + cd).astype(np.float32))])
    single("gemm_transA_transB_alpha_beta", "Gemm", [("a", a.T.copy()), ("b", b.T.copy()), ("c", c)],
           [("y", (0.5 * ad @ bd + 2.0 * cd).astype(np.float32))], opset=9, transA=1, transB=1, alpha=0.5, beta=2.0)
    cm = f32(3, 1)
    single("gemm_bias_column", "Gemm", [("a", a), ("b", b), ("c", cm)],
           [("y", (ad @ bd + cm.astype(np.float64)).astype(np.float32))], opset=7)
    cs = np.array(0.25, dtype=np.float32)
    single("gemm_bias_scalar", "Gemm", [("a", a), ("b", b), ("c", cs)], [("y", (ad @ bd + 0.25).astype(np.float32))])
    single("gemm_no_c_opset11", "Gemm", [("a", a), ("b", b)], [("y", (ad @ bd).astype(np.float32))], opset=11)
    single("gemm_const_b_transB", "Gemm", [("a", a), ("b", b.T.copy()), ("c", c)],
           [("y", (ad @ bd + cd).astype(np.float32))], consts=("b", "c"), transB=1)
    single("gemm_transA_const_b", "Gemm", [("a", a.T.copy()), ("b", b)],
           [("y", (ad @ bd).astype(np.float32))], consts=("b",), transA=1)

    def mm(x, y):
        return np.matmul(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    a, b = f32(3, 4), f32(4, 2)
    single("matmul_2d", "MatMul", [("a", a), ("b", b)], [("y", mm(a, b))], opset=13)
    a, b = f32(2, 3, 4), f32(2, 4, 5)
    single("matmul_batched", "MatMul", [("a", a), ("b", b)], [("y", mm(a, b))], opset=13)
    a, b = f32(2, 1, 3, 4), f32(3, 4, 2)
    single("matmul_broadcast_batch", "MatMul", [("a", a), ("b", b)], [("y", mm(a, b))], opset=9)
    a, b = f32(4), f32(2, 4, 3)
    single("matmul_1d_left", "MatMul", [("a", a), ("b", b)], [("y", mm(a, b))], opset=13)
    a, b = f32(2, 3, 4), f32(4)
    single("matmul_1d_right", "MatMul", [("a", a), ("b", b)], [("y", mm(a, b))], opset=13)
    a, b = f32(5), f32(5)
    single("matmul_1d_both", "MatMul", [("a", a), ("b", b)], [("y", mm(a, b))], opset=13)


# ---------------------------------------------------------------------------------------
# Pooling: a direct implementation of the ONNX definitions with Python loops, checked
# against PyTorch where PyTorch has the same semantics.

def pool_ref(x, kind, k, s, pb, pe, d, ceil_mode, count_include_pad):
    nd = len(k)
    in_sp = x.shape[2:]
    out_sp = []
    for i in range(nd):
        span = d[i] * (k[i] - 1) + 1
        padded = in_sp[i] + pb[i] + pe[i]
        if ceil_mode:
            o = -(-(padded - span) // s[i]) + 1
            if (o - 1) * s[i] >= in_sp[i] + pb[i]:
                o -= 1
        else:
            o = (padded - span) // s[i] + 1
        out_sp.append(o)
    y = np.zeros(x.shape[:2] + tuple(out_sp), dtype=np.float64)
    idx = np.zeros(y.shape, dtype=np.int64)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for o in np.ndindex(*out_sp):
                vals, count_pad, best, best_at = [], 1, -np.inf, 0
                for i in range(nd):
                    st = o[i] * s[i] - pb[i]
                    count_pad *= sum(1 for t in range(k[i]) if -pb[i] <= st + t * d[i] < in_sp[i] + pe[i])
                for t in np.ndindex(*k):
                    pos = tuple(o[i] * s[i] - pb[i] + t[i] * d[i] for i in range(nd))
                    if all(0 <= pos[i] < in_sp[i] for i in range(nd)):
                        v = float(x[(n, c) + pos])
                        vals.append(v)
                        if v > best:
                            best = v
                            flat = (n * x.shape[1] + c) * int(np.prod(in_sp)) + int(np.ravel_multi_index(pos, in_sp))
                            best_at = flat
                if kind == "max":
                    y[(n, c) + o] = best
                    idx[(n, c) + o] = best_at
                else:
                    y[(n, c) + o] = sum(vals) / (count_pad if count_include_pad else len(vals))
    return y.astype(np.float32), idx


def gen_pool():
    x = f32(1, 2, 6, 6)
    y, _ = pool_ref(x, "max", [2, 2], [2, 2], [0, 0], [0, 0], [1, 1], False, False)
    ref = F.max_pool2d(torch.from_numpy(x), 2, 2).numpy()
    assert np.allclose(y, ref)
    single("maxpool2d_k2s2", "MaxPool", [("x", x)], [("y", y)], opset=12, kernel_shape=[2, 2], strides=[2, 2])
    x = f32(2, 2, 5, 7)
    y, _ = pool_ref(x, "max", [3, 3], [1, 2], [1, 0], [1, 2], [1, 1], False, False)
    single("maxpool2d_asym_pads", "MaxPool", [("x", x)], [("y", y)], opset=8, kernel_shape=[3, 3], strides=[1, 2],
           pads=[1, 0, 1, 2])
    x = f32(1, 1, 7, 7)
    y, _ = pool_ref(x, "max", [3, 3], [2, 2], [0, 0], [0, 0], [1, 1], True, False)
    ref = F.max_pool2d(torch.from_numpy(x), 3, 2, ceil_mode=True).numpy()
    assert np.allclose(y, ref)
    single("maxpool2d_ceil_mode", "MaxPool", [("x", x)], [("y", y)], opset=10, kernel_shape=[3, 3], strides=[2, 2],
           ceil_mode=1)
    x = f32(1, 2, 8, 8)
    y, _ = pool_ref(x, "max", [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], False, False)
    single("maxpool2d_dilations", "MaxPool", [("x", x)], [("y", y)], opset=11, kernel_shape=[2, 2], dilations=[2, 2])
    x = f32(2, 3, 4, 4)
    y, idx = pool_ref(x, "max", [2, 2], [2, 2], [0, 0], [0, 0], [1, 1], False, False)
    single("maxpool2d_indices", "MaxPool", [("x", x)], [("y", y), ("i", idx)], opset=12, kernel_shape=[2, 2],
           strides=[2, 2])
    x = f32(1, 2, 9)
    y, _ = pool_ref(x, "max", [3], [2], [1], [1], [1], False, False)
    single("maxpool1d", "MaxPool", [("x", x)], [("y", y)], opset=12, kernel_shape=[3], strides=[2], pads=[1, 1])
    x = f32(1, 1, 4, 5, 4)
    y, _ = pool_ref(x, "max", [2, 2, 2], [2, 2, 2], [0, 0, 0], [0, 1, 0], [1, 1, 1], False, False)
    single("maxpool3d", "MaxPool", [("x", x)], [("y", y)], opset=12, kernel_shape=[2, 2, 2], strides=[2, 2, 2],
           pads=[0, 0, 0, 0, 1, 0])
    x = f32(1, 2, 5, 5)
    p = same_pads([5, 5], [3, 3], [2, 2], [1, 1], True)
    y, _ = pool_ref(x, "max", [3, 3], [2, 2], p[:2], p[2:], [1, 1], False, False)
    single("maxpool2d_same_upper", "MaxPool", [("x", x)], [("y", y)], opset=12, kernel_shape=[3, 3], strides=[2, 2],
           auto_pad="SAME_UPPER")
    x = f32(1, 2, 5, 5)
    for inc in (0, 1):
        y, _ = pool_ref(x, "avg", [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, bool(inc))
        ref = F.avg_pool2d(torch.from_numpy(x), 3, 2, padding=1, count_include_pad=bool(inc)).numpy()
        assert np.allclose(y, ref, atol=1e-6)
        single("avgpool2d_pads_include_pad%d" % inc, "AveragePool", [("x", x)], [("y", y)], opset=11,
               kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=inc)
    x = f32(1, 1, 6, 6)
    for inc in (0, 1):
        y, _ = pool_ref(x, "avg", [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], True, bool(inc))
        ref = F.avg_pool2d(torch.from_numpy(x), 3, 2, padding=1, ceil_mode=True, count_include_pad=bool(inc)).numpy()
        assert np.allclose(y, ref, atol=1e-6)
        single("avgpool2d_ceil_include_pad%d" % inc, "AveragePool", [("x", x)], [("y", y)], opset=10,
               kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=inc)
    x = f32(1, 2, 7)
    y, _ = pool_ref(x, "avg", [2], [1], [0], [0], [2], False, False)
    single("avgpool1d_dilations_opset19", "AveragePool", [("x", x)], [("y", y)], opset=19, kernel_shape=[2],
           dilations=[2])
    x = f32(2, 3, 4, 5)
    single("globalaveragepool", "GlobalAveragePool", [("x", x)],
           [("y", x.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32))])
    single("globalmaxpool", "GlobalMaxPool", [("x", x)], [("y", x.max(axis=(2, 3), keepdims=True))])
    x = f32(2, 3, 6)
    single("globalaveragepool_1d", "GlobalAveragePool", [("x", x)],
           [("y", x.astype(np.float64).mean(axis=2, keepdims=True).astype(np.float32))])


# ---------------------------------------------------------------------------------------
# Normalization, softmax, reductions.

def gen_norm_softmax_reduce():
    x = f32(2, 3, 4, 4)
    s, b, m, v = f32(3), f32(3), f32(3), f32(3, lo=0.5, hi=2.0)
    sh = (1, 3, 1, 1)
    ref = ((x.astype(np.float64) - m.reshape(sh)) / np.sqrt(v.reshape(sh) + 1e-3) * s.reshape(sh) + b.reshape(sh))
    for opset in (7, 9, 15):
        single("batchnorm_opset%d" % opset, "BatchNormalization",
               [("x", x), ("s", s), ("b", b), ("m", m), ("v", v)], [("y", ref.astype(np.float32))], opset=opset,
               consts=("s", "b", "m", "v"), epsilon=1e-3)

    def softmax(a, axis):
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    x = f32(2, 3, 4).astype(np.float64)
    flat = x.reshape(2, 12)
    legacy = softmax(flat, 1).reshape(2, 3, 4)
    single("softmax_opset11_default_axis", "Softmax", [("x", x.astype(np.float32))], [("y", legacy.astype(np.float32))],
           opset=11, atol=1e-6)
    single("softmax_opset13_default_axis", "Softmax", [("x", x.astype(np.float32))],
           [("y", softmax(x, -1).astype(np.float32))], opset=13, atol=1e-6)
    single("softmax_opset13_axis1", "Softmax", [("x", x.astype(np.float32))],
           [("y", softmax(x, 1).astype(np.float32))], opset=13, atol=1e-6, axis=1)
    single("logsoftmax_opset11_axis2", "LogSoftmax", [("x", x.astype(np.float32))],
           [("y", np.log(softmax(x.reshape(6, 4), 1)).reshape(2, 3, 4).astype(np.float32))], opset=11, atol=1e-6,
           axis=2)
    single("logsoftmax_opset13_axis0", "LogSoftmax", [("x", x.astype(np.float32))],
           [("y", np.log(softmax(x, 0)).astype(np.float32))], opset=13, atol=1e-6, axis=0)

    x = f32(2, 3, 4)
    xd = x.astype(np.float64)
    single("reducesum_opset11_attr", "ReduceSum", [("x", x)],
           [("y", xd.sum(axis=(0, 2)).astype(np.float32))], opset=11, axes=[0, -1], keepdims=0)
    single("reducesum_opset13_input", "ReduceSum", [("x", x), ("axes", np.array([1], dtype=np.int64))],
           [("y", xd.sum(axis=1, keepdims=True).astype(np.float32))], opset=13, consts=("axes",))
    single("reducesum_opset13_all", "ReduceSum", [("x", x)],
           [("y", xd.sum(keepdims=True).astype(np.float32))], opset=13)
    single("reducesum_opset13_noop", "ReduceSum", [("x", x)], [("y", x)], opset=13, noop_with_empty_axes=1)
    xi = ints(np.int64, 3, 4)
    single("reducesum_i64", "ReduceSum", [("x", xi)], [("y", xi.sum(axis=0))], opset=11, axes=[0], keepdims=0)
    single("reducemean_opset13_attr", "ReduceMean", [("x", x)],
           [("y", xd.mean(axis=(1, 2), keepdims=True).astype(np.float32))], opset=13, axes=[1, 2])
    single("reducemean_opset18_input", "ReduceMean", [("x", x), ("axes", np.array([-1], dtype=np.int64))],
           [("y", xd.mean(axis=-1).astype(np.float32))], opset=18, keepdims=0)
    single("reducemax_opset13_attr", "ReduceMax", [("x", x)], [("y", x.max(axis=1))], opset=13, axes=[1], keepdims=0)
    single("reducemax_i64_all", "ReduceMax", [("x", xi)], [("y", xi.max(keepdims=True))], opset=13)
    single("reducemax_opset18_input", "ReduceMax", [("x", x), ("axes", np.array([0, 2], dtype=np.int64))],
           [("y", x.max(axis=(0, 2), keepdims=True))], opset=18)
    single("reducemin_opset13", "ReduceMin", [("x", x)], [("y", x.min(axis=2))], opset=13, axes=[2], keepdims=0)
    xs = f32(2, 3, lo=0.5, hi=1.5)
    single("reduceprod_opset13", "ReduceProd", [("x", xs)],
           [("y", xs.astype(np.float64).prod(axis=1).astype(np.float32))], opset=13, axes=[1], keepdims=0)


# ---------------------------------------------------------------------------------------
# Shape and data movement ops, int64 shape arithmetic.

def gen_shape_ops():
    x = f32(2, 3, 4)
    single("reshape_zero_and_minus_one", "Reshape", [("x", x), ("shape", np.array([0, -1], dtype=np.int64))],
           [("y", x.reshape(2, 12))], opset=13, consts=("shape",))
    single("reshape_dynamic_shape_input", "Reshape", [("x", x), ("shape", np.array([4, 3, 2], dtype=np.int64))],
           [("y", x.reshape(4, 3, 2))], opset=5)
    xe = f32(0, 3)
    single("reshape_allowzero", "Reshape", [("x", xe), ("shape", np.array([3, 0], dtype=np.int64))],
           [("y", xe.reshape(3, 0))], opset=14, allowzero=1)
    for axis in (0, 2, -1):
        a = axis % 3 if axis < 0 else axis
        single("flatten_axis%s" % str(axis).replace("-", "m"), "Flatten", [("x", x)],
               [("y", x.reshape(int(np.prod(x.shape[:a])), -1))], opset=13, axis=axis)
    xs = f32(1, 3, 1, 2)
    single("squeeze_opset11_attr", "Squeeze", [("x", xs)], [("y", xs.reshape(3, 1, 2))], opset=11, axes=[0])
    single("squeeze_opset13_input", "Squeeze", [("x", xs), ("axes", np.array([-2, 0], dtype=np.int64))],
           [("y", xs.reshape(3, 2))], opset=13)
    single("squeeze_all", "Squeeze", [("x", xs)], [("y", xs.reshape(3, 2))], opset=13)
    xu = f32(3, 2)
    single("unsqueeze_opset11_attr", "Unsqueeze", [("x", xu)], [("y", xu.reshape(1, 3, 2, 1))], opset=11,
           axes=[0, -1])
    single("unsqueeze_opset13_input", "Unsqueeze", [("x", xu), ("axes", np.array([1, 3], dtype=np.int64))],
           [("y", xu.reshape(3, 1, 2, 1))], opset=13, consts=("axes",))
    single("transpose_perm", "Transpose", [("x", x)], [("y", x.transpose(1, 2, 0))], perm=[1, 2, 0])
    single("transpose_default", "Transpose", [("x", x)], [("y", x.transpose())])
    xi = ints(np.int64, 2, 3, 4)
    single("transpose_i64", "Transpose", [("x", xi)], [("y", xi.transpose(0, 2, 1))], perm=[0, 2, 1])
    a, b, c = f32(2, 1, 3), f32(2, 2, 3), f32(2, 0, 3)
    single("concat_axis1_with_empty", "Concat", [("a", a), ("b", b), ("c", c)],
           [("y", np.concatenate([a, b, c], axis=1))], opset=11, axis=1)
    ai, bi = ints(np.int64, 2), ints(np.int64, 3)
    single("concat_i64_axis_minus1", "Concat", [("a", ai), ("b", bi)], [("y", np.concatenate([ai, bi]))],
           opset=13, axis=-1)
    xs = f32(2, 6)
    single("split_opset11_attr", "Split", [("x", xs)], [("y0", xs[:, :2]), ("y1", xs[:, 2:])], opset=11, axis=1,
           split=[2, 4])
    single("split_opset13_input", "Split", [("x", xs), ("split", np.array([1, 2, 3], dtype=np.int64))],
           [("y0", xs[:, :1]), ("y1", xs[:, 1:3]), ("y2", xs[:, 3:])], opset=13, axis=-1)
    single("split_equal_default", "Split", [("x", xs)], [("y0", xs[:, :3]), ("y1", xs[:, 3:])], opset=13, axis=1)
    x7 = f32(7, 2)
    single("split_opset18_num_outputs", "Split", [("x", x7)], [("y0", x7[:3]), ("y1", x7[3:6]), ("y2", x7[6:])],
           opset=18, num_outputs=3)
    x = f32(3, 4, 5)
    single("slice_opset9_attrs", "Slice", [("x", x)], [("y", x[1:3, :, 0:2])], opset=9, starts=[1, 0], ends=[3, 2],
           axes=[0, 2])

    def s64(*v):
        return np.array(v, dtype=np.int64)
    single("slice_opset13_steps", "Slice",
           [("x", x), ("starts", s64(-1, 1)), ("ends", s64(-1000, 5)), ("axes", s64(1, 2)), ("steps", s64(-2, 2))],
           [("y", x[:, -1:-1000:-2, 1:5:2])], opset=13, consts=("starts", "ends", "axes", "steps"))
    single("slice_opset10_clamp_default_axes", "Slice", [("x", x), ("starts", s64(1, -100)), ("ends", s64(100, 2))],
           [("y", x[1:100, -100:2])], opset=10)
    single("slice_opset13_empty", "Slice", [("x", x), ("starts", s64(3)), ("ends", s64(1)), ("axes", s64(0))],
           [("y", x[3:1])], opset=13)
    xe = f32(3, 1)
    single("expand_bidirectional", "Expand", [("x", xe), ("shape", s64(2, 1, 4))],
           [("y", np.broadcast_to(xe, (2, 3, 4)).copy())], opset=13, consts=("shape",))
    single("expand_smaller_shape", "Expand", [("x", xe), ("shape", s64(4))],
           [("y", np.broadcast_to(xe, (3, 4)).copy())], opset=8)
    single("identity_i64", "Identity", [("x", xi)], [("y", xi)])
    xd = f32(2, 3)
    single("dropout_opset7_inference", "Dropout", [("x", xd)], [("y", xd)], opset=7, ratio=0.5)
    single("dropout_opset12_mask", "Dropout", [("x", xd), ("r", np.array(0.3, dtype=np.float32))],
           [("y", xd), ("mask", np.ones((2, 3), dtype=bool))], opset=12)
    single("dropout_opset13_training_false", "Dropout",
           [("x", xd), ("r", np.array(0.3, dtype=np.float32)), ("t", np.array(False))], [("y", xd)], opset=13,
           consts=("t",))
    cv = f32(2, 2)
    single("constant_tensor", "Constant", [], [("y", cv)], opset=11, value=cv)
    single("constant_value_floats", "Constant", [], [("y", np.array([1.5, -2.0], dtype=np.float32))], opset=12,
           value_floats=[1.5, -2.0])
    single("constant_value_int", "Constant", [], [("y", np.array(7, dtype=np.int64))], opset=13, value_int=7)
    single("constant_value_ints", "Constant", [], [("y", s64(1, 2, 3))], opset=13, value_ints=[1, 2, 3])
    x = f32(2, 3, 4)
    single("shape_full", "Shape", [("x", x)], [("y", s64(2, 3, 4))], opset=13)
    single("shape_start_end_opset15", "Shape", [("x", x)], [("y", s64(3))], opset=15, start=1, end=-1)
    single("shape_start_only_opset15", "Shape", [("x", x)], [("y", s64(4))], opset=15, start=-1)
    data = f32(5, 3)
    idx = s64(0, -1, 2, 2)
    single("gather_axis0_negative", "Gather", [("x", data), ("i", idx)], [("y", data[[0, 4, 2, 2]])], opset=13)
    idx2 = np.array([[0, 2], [1, 1]], dtype=np.int32)
    single("gather_axis1_2d_i32", "Gather", [("x", data), ("i", idx2)], [("y", data[:, idx2])], opset=11, axis=1)
    single("gather_scalar_index", "Gather", [("x", data), ("i", np.array(3, dtype=np.int64))], [("y", data[3])],
           opset=13, consts=("i",))
    shp = s64(2, 3, 4)
    single("gather_int64_shape", "Gather", [("x", shp), ("i", s64(1))], [("y", s64(3))], opset=13)
    single("constantofshape_default", "ConstantOfShape", [("s", s64(2, 3))], [("y", np.zeros((2, 3), np.float32))],
           opset=9)
    single("constantofshape_i64", "ConstantOfShape", [("s", s64(3))], [("y", np.full(3, 5, np.int64))], opset=20,
           value=np.array([5], dtype=np.int64))
    single("constantofshape_empty", "ConstantOfShape", [("s", s64(2, 0))], [("y", np.zeros((2, 0), np.float32))],
           opset=9)

    def sc(v, t):
        return np.array(v, dtype=t)
    single("range_i64", "Range", [("a", sc(1, np.int64)), ("b", sc(10, np.int64)), ("d", sc(3, np.int64))],
           [("y", np.arange(1, 10, 3, dtype=np.int64))], opset=11)
    single("range_i64_negative_delta", "Range",
           [("a", sc(5, np.int64)), ("b", sc(-3, np.int64)), ("d", sc(-2, np.int64))],
           [("y", np.arange(5, -3, -2, dtype=np.int64))], opset=11)
    single("range_f32", "Range", [("a", sc(0.5, np.float32)), ("b", sc(2.0, np.float32)), ("d", sc(0.25, np.float32))],
           [("y", np.arange(0.5, 2.0, 0.25, dtype=np.float32))], opset=11)
    single("range_empty", "Range", [("a", sc(3, np.int32)), ("b", sc(1, np.int32)), ("d", sc(1, np.int32))],
           [("y", np.zeros(0, np.int32))], opset=11)


# ---------------------------------------------------------------------------------------
# Cast between numeric types, including float16/bfloat16 rounding.

def gen_cast():
    x = np.array([-2.7, -1.5, -0.5, 0.0, 0.5, 1.49, 2.5, 100.9], dtype=np.float32)

    def cast(name, arr, to, expected, opset=13):
        single("cast_%s" % name, "Cast", [("x", arr)], [("y", expected)], opset=opset, to=ONNX_TYPES[to])
    cast("f32_to_i32_truncates", x, "int32", np.trunc(x).astype(np.int32))
    cast("f32_to_i64", x, "int64", np.trunc(x).astype(np.int64), opset=6)
    cast("f32_to_u8", np.abs(x), "uint8", np.trunc(np.abs(x)).astype(np.uint8))
    cast("f32_to_bool", x, "bool", x != 0)
    cast("bool_to_f32", np.array([True, False, True]), "float32", np.array([1, 0, 1], np.float32))
    cast("i64_to_f32", np.array([-3, 0, 16777217, 2 ** 40], np.int64), "float32",
         np.array([-3, 0, 16777217, 2 ** 40], np.int64).astype(np.float32))
    cast("i32_to_i64", np.array([-5, 7], np.int32), "int64", np.array([-5, 7], np.int64))
    cast("i64_to_i8_wraps", np.array([127, 128, -129, 300], np.int64), "int8",
         np.array([127, 128, -129, 300], np.int64).astype(np.int8))
    cast("f64_to_f32", np.array([1.0 / 3, -2.5e10], np.float64), "float32", np.array([1.0 / 3, -2.5e10], np.float32))
    cast("f32_to_f64", x, "float64", x.astype(np.float64))
    # float16: ties to even (2049 -> 2048, 2051 -> 2052), overflow to inf, subnormals.
    h = np.array([1.0, 2049.0, 2051.0, 65519.0, 65520.0, -1e6, 1e-7, 3e-8, 2.98023224e-8, 0.1, float("nan")],
                 dtype=np.float32)
    cast("f32_to_f16_rounding", h, "float16", h.astype(np.float16))
    hv = np.array([0x0001, 0x03FF, 0x3C00, 0x7BFF, 0x7C00, 0xFC00, 0x8001], dtype=np.uint16).view(np.float16)
    cast("f16_to_f32", hv, "float32", hv.astype(np.float32))
    cast("f16_to_i32", np.array([1.5, -2.5, 300.0], np.float16), "int32", np.array([1, -2, 300], np.int32))
    b = np.array([1.0, 1.00390625, 1.01171875, 3.14159265, -1e30, 1e-40, 65504.0], dtype=np.float32)
    cast("f32_to_bf16_rounding", b, "bfloat16", to_bf16(b))
    bb = to_bf16(np.array([1.5, -0.1, 3e38], np.float32))
    bf = torch.from_numpy(bb.bits.view(np.int16)).view(torch.bfloat16).to(torch.float32).numpy()
    cast("bf16_to_f32", bb, "float32", bf)
    cast("i64_to_f16", np.array([3, -2049, 70000], np.int64), "float16",
         np.array([3, -2049, 70000], np.int64).astype(np.float32).astype(np.float16))


# ---------------------------------------------------------------------------------------
# Multi-node partitions.

def gen_multi_node():
    # Conv -> Relu -> MaxPool -> Flatten -> Gemm, weights as constants.
    x = f32(2, 1, 8, 8)
    w1, b1 = f32(4, 1, 3, 3), f32(4)
    w2, b2 = f32(10, 64, lo=-0.3, hi=0.3), f32(10)
    conv = torch_conv(x, w1, b1, [1, 1], [1, 1, 1, 1], [1, 1], 1)
    relu = np.maximum(conv, 0)
    pool = F.max_pool2d(torch.from_numpy(relu), 2, 2).numpy()
    flat = pool.reshape(2, 64)
    logits = (flat.astype(np.float64) @ w2.T.astype(np.float64) + b2).astype(np.float32)
    c = Case("partition_conv_relu_pool_flatten_gemm", atol=1e-4, rtol=1e-4)
    c.input("x", x).const("w1", w1).const("b1", b1).const("w2", w2).const("b2", b2)
    c.value("c", "float32", [2, 4, 8, 8]).value("r", "float32", [2, 4, 8, 8])
    c.value("p", "float32", [2, 4, 4, 4]).value("f", "float32", [2, 64])
    c.node("Conv", ["x", "w1", "b1"], ["c"], opset=13, name="conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    c.node("Relu", ["c"], ["r"], opset=13, name="relu")
    c.node("MaxPool", ["r"], ["p"], opset=13, name="pool", kernel_shape=[2, 2], strides=[2, 2])
    c.node("Flatten", ["p"], ["f"], opset=13, name="flatten", axis=1)
    c.node("Gemm", ["f", "w2", "b2"], ["y"], opset=13, name="fc", transB=1)
    c.output("y", logits)
    add(c)

    # A diamond whose intermediate is also a graph output, an output listed twice, and a
    # graph input passed straight through.
    a = f32(2, 3)
    r = np.maximum(a, 0)
    s = r + a
    y = s * r
    c = Case("partition_diamond_outputs")
    c.input("a", a).value("s", "float32", [2, 3])
    c.node("Relu", ["a"], ["r"], name="relu")
    c.node("Add", ["r", "a"], ["s"], name="add")
    c.node("Mul", ["s", "r"], ["y"], name="mul")
    c.output("y", y).output("r", r).output("y", y).output("a", a)
    add(c)

    # Shape arithmetic on int64 feeding a Reshape, the pattern exported models use.
    x = f32(2, 3, 4)
    c = Case("partition_shape_gather_concat_reshape")
    c.input("x", x).const("i0", np.array([0], np.int64)).const("minus1", np.array([-1], np.int64))
    # Symbolic dims (-1): the plugin must work out every shape at run time.
    c.value("shape", "int64", [-1]).value("batch", "int64", [-1]).value("newshape", "int64", [-1])
    c.node("Shape", ["x"], ["shape"], opset=13, name="shape")
    c.node("Gather", ["shape", "i0"], ["batch"], opset=13, name="gather", axis=0)
    c.node("Concat", ["batch", "minus1"], ["newshape"], opset=13, name="concat", axis=0)
    c.node("Reshape", ["x", "newshape"], ["y"], opset=13, name="reshape")
    c.output("y", x.reshape(2, 12))
    add(c)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def rnn_reference(kind, x, w, r, b, h0, c0=None, p=None):
    """ONNX's RNN (tanh), GRU (linear_before_reset 0) and LSTM (with peepholes p) in
    float64, layout 0, every direction of w: returns Y [seq, dirs, batch, hidden], Y_h and
    (LSTM) Y_c. Gate order in w, r, b: RNN i; GRU z, r, h; LSTM i, o, f, c."""
    x, w, r, b, h0 = (np.asarray(t, np.float64) for t in (x, w, r, b, h0))
    seq, batch, _ = x.shape
    dirs, hidden = w.shape[0], r.shape[2]
    y = np.zeros((seq, dirs, batch, hidden))
    yh = np.zeros((dirs, batch, hidden))
    yc = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        h = h0[d].copy()
        c = np.asarray(c0, np.float64)[d].copy() if c0 is not None else None
        wb, rb = np.split(b[d], 2)
        steps = range(seq) if d == 0 else range(seq - 1, -1, -1)
        for t in steps:
            xw = x[t] @ w[d].T + wb
            if kind == "RNN":
                h = np.tanh(xw + h @ r[d].T + rb)
            elif kind == "GRU":
                hr = h @ r[d].T + rb
                zx, rx, hx = np.split(xw, 3, axis=1)
                zr, rr, _ = np.split(hr, 3, axis=1)
                rh = np.split(r[d], 3, axis=0)[2]
                rbh = np.split(rb, 3)[2]
                z = _sigmoid(zx + zr)
                rg = _sigmoid(rx + rr)
                hh = np.tanh(hx + (rg * h) @ rh.T + rbh)
                h = (1 - z) * hh + z * h
            else:
                g = xw + h @ r[d].T + rb
                gi, go, gf, gc = np.split(g, 4, axis=1)
                pi, po, pf = np.split(np.asarray(p, np.float64)[d], 3)
                i = _sigmoid(gi + pi * c)
                f = _sigmoid(gf + pf * c)
                c = f * c + i * np.tanh(gc)
                o = _sigmoid(go + po * c)
                h = o * np.tanh(c)
            y[t, d] = h
        yh[d] = h
        if c is not None:
            yc[d] = c
    return y.astype(np.float32), yh.astype(np.float32), yc.astype(np.float32)


def gen_rnn():
    # Constant weights, as exported models have them: the kernels convert and transpose
    # them once at compile time (the ONNX node tests feed them as inputs instead).
    seq, batch, inp, hidden = 3, 2, 5, 4
    for kind, gates in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        x = f32(seq, batch, inp, lo=-1, hi=1)
        w = f32(2, gates * hidden, inp, lo=-0.5, hi=0.5)
        r = f32(2, gates * hidden, hidden, lo=-0.5, hi=0.5)
        b = f32(2, 2 * gates * hidden, lo=-0.5, hi=0.5)
        h0 = f32(2, batch, hidden, lo=-1, hi=1)
        inputs = [("x", x), ("w", w), ("r", r), ("b", b), None, ("h0", h0)]
        consts = ("w", "r", "b")
        c0 = p = None
        if kind == "LSTM":
            c0 = f32(2, batch, hidden, lo=-1, hi=1)
            p = f32(2, 3 * hidden, lo=-0.5, hi=0.5)
            inputs += [("c0", c0), ("p", p)]
            consts += ("p",)
        y, yh, yc = rnn_reference(kind, x, w, r, b, h0, c0, p)
        outputs = [("y", y), ("yh", yh)] + ([("yc", yc)] if kind == "LSTM" else [])
        single(kind.lower() + "_bidirectional_const_weights", kind, inputs, outputs, opset=14,
               atol=1e-5, rtol=1e-4, consts=consts, hidden_size=hidden, direction="bidirectional")


def main():
    np.seterr(over="ignore")  # float16 overflow to inf is what the cases test
    gen_binary()
    gen_unary()
    gen_conv()
    gen_conv_transpose()
    gen_matmul()
    gen_pool()
    gen_norm_softmax_reduce()
    gen_shape_ops()
    gen_cast()
    gen_multi_node()
    gen_rnn()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("# Generated by tests/plugins/cpu/gen_expected.py; do not edit.\n")
        f.write("# Format: tests/support/include/infer/test_support/op_case.hpp\n\n")
        for c in CASES:
            f.write(c.text() + "\n")
    print("wrote %d cases to %s (%d bytes)" % (len(CASES), OUT, os.path.getsize(OUT)), file=sys.stderr)


if __name__ == "__main__":
    main()
