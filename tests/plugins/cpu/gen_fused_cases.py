#!/usr/bin/python3
"""Generates tests/plugins/cpu/data/fused_cases.txt: test cases for the fused operators
of the ai.infer domain (sdk/FUSED_OPS.md), with expected outputs computed independently
of the plugin: numpy in float64, and PyTorch (float64) for the convolutions and Gelu.

The format is op_cases.txt's (tests/support/include/infer/test_support/op_case.hpp),
written with gen_expected.py's formatting helpers. The format has no domain field, so a
node's op type is written "ai.infer:<Op>"; fused_ops_test.cpp splits it into domain and
op type when it builds the graph.

Run with the system python (it has numpy and torch):
    /usr/bin/python3 tests/plugins/cpu/gen_fused_cases.py
The output is committed; rerun after changing this script.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_expected as ge  # noqa: E402  (formatting helpers only)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fused_cases.txt")
DOMAIN = "ai.infer:"

rng = np.random.default_rng(20240917)
CASES = []


def add(case):
    if any(c.name == case.name for c in CASES):
        raise ValueError("duplicate case " + case.name)
    CASES.append(case)
    return case


def fused(name, op, inputs, outputs, atol=1e-5, rtol=1e-5, consts=(), **attrs):
    """One ai.infer node (opset 1). inputs: list of (name, array) or None (omitted);
    names in `consts` are constants. outputs: list of (name, expected array)."""
    c = ge.Case(name, atol, rtol)
    for item in inputs:
        if item is None:
            continue
        n, arr = item
        (c.const if n in consts else c.input)(n, arr)
    c.node(DOMAIN + op, [i[0] if i else None for i in inputs], [o[0] for o in outputs],
           opset=1, name=name, **attrs)
    for n, arr in outputs:
        c.output(n, arr)
    return add(c)


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def d64(a):
    return np.asarray(a, dtype=np.float64)


# ---------------------------------------------------------------------------------------
# Activations (float64 references). LeakyRelu's and HardSigmoid's parameters become
# float32 ONNX attributes, so they are rounded to float32 before use, as the kernel does
# (Clip's bounds used here are exact in float32 either way).

def erf(x):
    return torch.erf(torch.from_numpy(d64(x))).numpy()


def act_ref(x, name, params):
    x = d64(x)
    p = [float(np.float32(v)) for v in params]
    if name == "":
        return x
    if name == "Relu":
        return np.maximum(x, 0)
    if name == "Tanh":
        return np.tanh(x)
    if name == "Sigmoid":
        return 1 / (1 + np.exp(-x))
    if name == "LeakyRelu":
        return np.where(x >= 0, x, p[0] * x)
    if name == "Clip":
        return np.minimum(np.maximum(x, p[0]), p[1])
    if name == "HardSigmoid":
        return np.clip(p[0] * x + p[1], 0, 1)
    if name == "HardSwish":
        return x * np.clip(x / 6 + 0.5, 0, 1)
    if name == "Gelu":
        return F.gelu(torch.from_numpy(x)).numpy()
    if name == "GeluTanh":
        return F.gelu(torch.from_numpy(x), approximate="tanh").numpy()
    raise ValueError(name)


# Every activation with its parameters (Clip also with an infinite bound).
ACTIVATIONS = [
    ("", []),
    ("Relu", []),
    ("Tanh", []),
    ("Sigmoid", []),
    ("LeakyRelu", [0.1]),
    ("Clip", [-0.5, 0.75]),
    ("HardSigmoid", [0.3, 0.4]),
    ("HardSwish", []),
    ("Gelu", []),
    ("GeluTanh", []),
]


def act_attrs(name, params):
    """The attributes of an activation; the default (none) is written by omission."""
    out = {}
    if name:
        out["activation"] = name
    if params:
        out["activation_params"] = [float(v) for v in params]
    return out


def act_tag(name):
    return (name or "none").lower()


# ---------------------------------------------------------------------------------------
# FusedConv: reference PyTorch conv in float64 (explicit pads via F.pad).

def torch_conv(x, w, b, strides, pads, dilations, group):
    nd = x.ndim - 2
    xt = torch.from_numpy(d64(x))
    pad = []
    for i in reversed(range(nd)):
        pad += [pads[i], pads[i + nd]]
    xt = F.pad(xt, pad)
    bt = None if b is None else torch.from_numpy(d64(b))
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    return fn(xt, torch.from_numpy(d64(w)), bt, stride=strides, dilation=dilations,
              groups=group).numpy()


def gen_fused_conv():
    # Bias, residual and Relu: the ResNet block pattern.
    x, w, b = f32(1, 2, 5, 5), f32(3, 2, 3, 3), f32(3)
    conv = torch_conv(x, w, b, [1, 1], [1, 1, 1, 1], [1, 1], 1)
    z = f32(*conv.shape)
    y = act_ref(conv + d64(z), "Relu", [])
    fused("fconv_bias_z_relu", "FusedConv", [("x", x), ("w", w), ("b", b), ("z", z)],
          [("y", y.astype(np.float32))], consts=("w", "b"), pads=[1, 1, 1, 1],
          kernel_shape=[3, 3], activation="Relu")

    # Grouped, strided, dilated, asymmetric pads, with a residual and LeakyRelu.
    x, w, b = f32(2, 4, 7, 6), f32(6, 2, 3, 2), f32(6)
    pads = [1, 0, 2, 1]
    conv = torch_conv(x, w, b, [2, 1], pads, [1, 2], 2)
    z = f32(*conv.shape)
    y = act_ref(conv + d64(z), "LeakyRelu", [0.2])
    fused("fconv_grouped_strided_padded", "FusedConv",
          [("x", x), ("w", w), ("b", b), ("z", z)], [("y", y.astype(np.float32))],
          consts=("w",), group=2, strides=[2, 1], pads=pads, dilations=[1, 2],
          activation="LeakyRelu", activation_params=[0.2])

    # Depthwise with auto_pad SAME_UPPER, no bias, no residual.
    x, w = f32(1, 3, 5, 4), f32(3, 1, 3, 3)
    conv = torch_conv(x, w, None, [2, 2], ge.same_pads([5, 4], [3, 3], [2, 2], [1, 1], True),
                      [1, 1], 3)
    fused("fconv_depthwise_same_upper", "FusedConv", [("x", x), ("w", w)],
          [("y", act_ref(conv, "HardSwish", []).astype(np.float32))], group=3,
          auto_pad="SAME_UPPER", strides=[2, 2], activation="HardSwish")

    # 1-D convolution with a residual and no bias (input B omitted).
    x, w = f32(2, 3, 9), f32(4, 3, 3)
    conv = torch_conv(x, w, None, [1], [1, 1], [1], 1)
    z = f32(*conv.shape)
    fused("fconv_1d_z_no_bias", "FusedConv", [("x", x), ("w", w), None, ("z", z)],
          [("y", act_ref(conv + d64(z), "Sigmoid", []).astype(np.float32))], pads=[1, 1],
          activation="Sigmoid")

    # A 1x1 kernel (Conv reads the input directly) with Clip to [0, inf).
    x, w, b = f32(1, 4, 3, 3), f32(5, 4, 1, 1), f32(5)
    conv = torch_conv(x, w, b, [1, 1], [0, 0, 0, 0], [1, 1], 1)
    fused("fconv_1x1_clip_inf", "FusedConv", [("x", x), ("w", w), ("b", b)],
          [("y", act_ref(conv, "Clip", [0.0, math.inf]).astype(np.float32))],
          activation="Clip", activation_params=[0.0, math.inf])

    # Every activation once, with a bias and a residual.
    for name, params in ACTIVATIONS:
        x, w, b = f32(1, 3, 4, 4), f32(2, 3, 2, 2), f32(2)
        conv = torch_conv(x, w, b, [1, 1], [0, 0, 0, 0], [1, 1], 1)
        z = f32(*conv.shape)
        fused("fconv_act_" + act_tag(name), "FusedConv",
              [("x", x), ("w", w), ("b", b), ("z", z)],
              [("y", act_ref(conv + d64(z), name, params).astype(np.float32))],
              **act_attrs(name, params))


# ---------------------------------------------------------------------------------------
# FusedGemm: Y = act(alpha·A'·B' + beta·C).

def gemm_ref(a, b, c, alpha, beta, ta, tb):
    a, b = d64(a), d64(b)
    a = a.T if ta else a
    b = b.T if tb else b
    y = alpha * (a @ b)
    if c is not None:
        y = y + beta * d64(c)
    return y


def gen_fused_gemm():
    for name, params in ACTIVATIONS:
        a, b, c = f32(3, 5), f32(5, 4), f32(4)
        y = act_ref(gemm_ref(a, b, c, 1.0, 1.0, False, False), name, params)
        fused("fgemm_act_" + act_tag(name), "FusedGemm", [("a", a), ("b", b), ("c", c)],
              [("y", y.astype(np.float32))], **act_attrs(name, params))

    # transA, transB (B constant: the plain Gemm prepacks it), alpha, beta, C [M, 1].
    a, b, c = f32(6, 3), f32(5, 6), f32(3, 1)
    y = act_ref(gemm_ref(a, b, c, 0.5, -1.5, True, True), "Tanh", [])
    fused("fgemm_trans_alpha_beta_c_col", "FusedGemm", [("a", a), ("b", b), ("c", c)],
          [("y", y.astype(np.float32))], consts=("b",), transA=1, transB=1, alpha=0.5,
          beta=-1.5, activation="Tanh")
    # transB with a non-constant B, a scalar C, GeluTanh.
    a, b, c = f32(4, 7), f32(3, 7), np.array(0.25, dtype=np.float32)
    y = act_ref(gemm_ref(a, b, c, 2.0, 1.0, False, True), "GeluTanh", [])
    fused("fgemm_transb_scalar_c", "FusedGemm", [("a", a), ("b", b), ("c", c)],
          [("y", y.astype(np.float32))], transB=1, alpha=2.0, activation="GeluTanh")
    # Full [M, N] C, transA only, HardSigmoid.
    a, b, c = f32(5, 2), f32(5, 3), f32(2, 3)
    y = act_ref(gemm_ref(a, b, c, 1.0, 0.5, True, False), "HardSigmoid", [0.25, 0.5])
    fused("fgemm_transa_full_c", "FusedGemm", [("a", a), ("b", b), ("c", c)],
          [("y", y.astype(np.float32))], transA=1, beta=0.5, activation="HardSigmoid",
          activation_params=[0.25, 0.5])
    # No C, C [1, N].
    a, b = f32(2, 3), f32(3, 4)
    fused("fgemm_no_c_relu", "FusedGemm", [("a", a), ("b", b)],
          [("y", act_ref(gemm_ref(a, b, None, 1.0, 1.0, False, False), "Relu", []).astype(np.float32))],
          activation="Relu")
    a, b, c = f32(3, 3), f32(3, 2), f32(1, 2)
    fused("fgemm_c_row", "FusedGemm", [("a", a), ("b", b), ("c", c)],
          [("y", gemm_ref(a, b, c, 1.0, 1.0, False, False).astype(np.float32))])
    # float64 and float16 run on the plain Gemm loop.
    a, b, c = d64(f32(3, 4)), d64(f32(4, 2)), d64(f32(2))
    y = act_ref(gemm_ref(a, b, c, 1.0, 1.0, False, False), "Sigmoid", [])
    fused("fgemm_f64_sigmoid", "FusedGemm", [("a", a), ("b", b), ("c", c)], [("y", y)],
          atol=1e-12, rtol=1e-12, activation="Sigmoid")
    a, b, c = f32(3, 4).astype(np.float16), f32(4, 2).astype(np.float16), f32(2).astype(np.float16)
    y = act_ref(gemm_ref(a, b, c, 1.0, 1.0, False, False), "LeakyRelu", [0.1])
    fused("fgemm_f16_leaky", "FusedGemm", [("a", a), ("b", b), ("c", c)],
          [("y", y.astype(np.float16))], atol=1e-2, rtol=1e-2, activation="LeakyRelu",
          activation_params=[0.1])


# ---------------------------------------------------------------------------------------
# FusedMatMul: Y = act(MatMul(A, B) + bias).

def gen_fused_matmul():
    for name, params in ACTIVATIONS:
        a, b, bias = f32(2, 3, 4), f32(4, 5), f32(5)
        y = act_ref(d64(a) @ d64(b) + d64(bias), name, params)
        fused("fmatmul_act_" + act_tag(name), "FusedMatMul",
              [("a", a), ("b", b), ("bias", bias)], [("y", y.astype(np.float32))],
              **act_attrs(name, params))
    # Batched 3-D x 2-D with a constant weight and bias (the transformer projection).
    a, b, bias = f32(3, 4, 8), f32(8, 6), f32(6)
    y = d64(a) @ d64(b) + d64(bias)
    fused("fmatmul_3d_2d_bias", "FusedMatMul", [("a", a), ("b", b), ("bias", bias)],
          [("y", y.astype(np.float32))], consts=("b", "bias"))
    # Broadcast batch dims, no bias.
    a, b = f32(2, 1, 3, 4), f32(3, 4, 2)
    y = act_ref(d64(a) @ d64(b), "Tanh", [])
    fused("fmatmul_bcast_batch_tanh", "FusedMatMul", [("a", a), ("b", b)],
          [("y", y.astype(np.float32))], activation="Tanh")
    # 1-D A (promoted to [1, K], the promoted dim removed), bias over N.
    a, b, bias = f32(4), f32(4, 3), f32(3)
    y = act_ref(d64(a) @ d64(b) + d64(bias), "Relu", [])
    fused("fmatmul_1d_a_bias_relu", "FusedMatMul", [("a", a), ("b", b), ("bias", bias)],
          [("y", y.astype(np.float32))], activation="Relu")
    # float64 and bfloat16.
    a, b, bias = d64(f32(2, 2, 3)), d64(f32(3, 4)), d64(f32(4))
    y = act_ref(a @ b + bias, "GeluTanh", [])
    fused("fmatmul_f64_gelutanh", "FusedMatMul", [("a", a), ("b", b), ("bias", bias)],
          [("y", y)], atol=1e-12, rtol=1e-12, activation="GeluTanh")
    a, b, bias = f32(2, 3), f32(3, 4), f32(4)
    ab, bb, biasb = ge.to_bf16(a), ge.to_bf16(b), ge.to_bf16(bias)
    bf = lambda t: torch.from_numpy(t.bits.view(np.int16)).view(torch.bfloat16).double().numpy()
    y = act_ref(bf(ab) @ bf(bb) + bf(biasb), "Relu", [])
    fused("fmatmul_bf16_relu", "FusedMatMul", [("a", ab), ("b", bb), ("bias", biasb)],
          [("y", ge.to_bf16(y))], atol=3e-2, rtol=2e-2, activation="Relu")


# ---------------------------------------------------------------------------------------
# Gelu, LayerNormalization.

def gen_gelu_layernorm():
    x = f32(2, 3, 4, lo=-4, hi=4)
    ref = F.gelu(torch.from_numpy(d64(x))).numpy()
    ref_t = F.gelu(torch.from_numpy(d64(x)), approximate="tanh").numpy()
    fused("gelu_default", "Gelu", [("x", x)], [("y", ref.astype(np.float32))])
    fused("gelu_none", "Gelu", [("x", x)], [("y", ref.astype(np.float32))], approximate="none")
    fused("gelu_tanh", "Gelu", [("x", x)], [("y", ref_t.astype(np.float32))], approximate="tanh")
    xh = x.astype(np.float16)
    fused("gelu_f16", "Gelu", [("x", xh)],
          [("y", F.gelu(torch.from_numpy(d64(xh))).numpy().astype(np.float16))], atol=2e-3,
          rtol=2e-3)
    xb = ge.to_bf16(x)
    xbd = torch.from_numpy(xb.bits.view(np.int16)).view(torch.bfloat16).double()
    fused("gelu_tanh_bf16", "Gelu", [("x", xb)],
          [("y", ge.to_bf16(F.gelu(xbd, approximate="tanh").numpy()))], atol=2e-2, rtol=1e-2,
          approximate="tanh")
    xd = d64(x)
    fused("gelu_f64", "Gelu", [("x", xd)], [("y", F.gelu(torch.from_numpy(xd)).numpy())],
          atol=1e-12, rtol=1e-12)

    def ln(x, scale, bias, axis, eps):
        x = d64(x)
        axes = tuple(range(axis % x.ndim, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + float(np.float32(eps))) * d64(scale)
        return y + d64(bias) if bias is not None else y

    x, s, b = f32(2, 3, 5), f32(5), f32(5)
    fused("layernorm_last_axis", "LayerNormalization", [("x", x), ("scale", s), ("b", b)],
          [("y", ln(x, s, b, -1, 1e-5).astype(np.float32))])
    x, s = f32(2, 3, 4), f32(3, 4)
    fused("layernorm_axis1_no_bias_eps", "LayerNormalization", [("x", x), ("scale", s)],
          [("y", ln(x, s, None, 1, 1e-3).astype(np.float32))], axis=1, epsilon=1e-3)
    x, s, b = f32(3, 8).astype(np.float16), f32(8).astype(np.float16), f32(8).astype(np.float16)
    fused("layernorm_f16", "LayerNormalization", [("x", x), ("scale", s), ("b", b)],
          [("y", ln(x, s, b, -1, 1e-5).astype(np.float16))], atol=1e-2, rtol=1e-2)


# ---------------------------------------------------------------------------------------
# Attention (numpy float64 reference, one (batch, head) pair at a time).

def attention_ref(q, k, v, mask, heads, scale):
    q, k, v = d64(q), d64(k), d64(v)
    B, Sq, _ = q.shape
    Sk = k.shape[1]
    dk, dv = q.shape[2] // heads, v.shape[2] // heads
    m = None if mask is None else np.broadcast_to(d64(mask), (B, heads, Sq, Sk))
    y = np.zeros((B, Sq, heads * dv))
    for b in range(B):
        for h in range(heads):
            qh = q[b, :, h * dk:(h + 1) * dk]
            kh = k[b, :, h * dk:(h + 1) * dk]
            vh = v[b, :, h * dv:(h + 1) * dv]
            s = float(np.float32(scale)) * (qh @ kh.T)
            if m is not None:
                s = s + m[b, h]
            s = s - s.max(axis=-1, keepdims=True)
            e = np.exp(s)
            y[b, :, h * dv:(h + 1) * dv] = (e / e.sum(axis=-1, keepdims=True)) @ vh
    return y


def attention_case(name, B, H, Sq, Sk, Dk, Dv, mask_shape=None, dtype=np.float32, atol=1e-5,
                   rtol=1e-5, scale=None):
    q, k, v = f32(B, Sq, H * Dk), f32(B, Sk, H * Dk), f32(B, Sk, H * Dv)
    mask = None
    if mask_shape is not None:
        # Additive mask: mostly 0, some large negatives (masked out), some small biases.
        mask = rng.choice(np.array([0.0, 0.0, -10000.0, 0.5, -0.75], dtype=np.float32),
                          size=mask_shape)
    scale = 1 / math.sqrt(Dk) if scale is None else scale
    q, k, v = (t.astype(dtype) for t in (q, k, v))
    if mask is not None:
        mask = mask.astype(dtype)
    y = attention_ref(q, k, v, mask, H, scale)
    ins = [("q", q), ("k", k), ("v", v)] + ([("mask", mask)] if mask is not None else [])
    fused(name, "Attention", ins, [("y", y.astype(dtype))], atol=atol, rtol=rtol, num_heads=H,
          scale=float(np.float32(scale)))


def gen_attention():
    attention_case("attn_no_mask", 2, 2, 3, 3, 4, 4)
    attention_case("attn_mask_b11k", 2, 2, 3, 5, 4, 4, mask_shape=(2, 1, 1, 5))
    attention_case("attn_mask_11qk", 2, 3, 4, 5, 2, 2, mask_shape=(1, 1, 4, 5))
    attention_case("attn_mask_bhqk", 2, 2, 3, 4, 3, 3, mask_shape=(2, 2, 3, 4))
    attention_case("attn_sq_ne_sk_dk_ne_dv", 2, 2, 2, 6, 3, 5)
    attention_case("attn_mask_rank2_dk_ne_dv", 1, 2, 3, 4, 4, 2, mask_shape=(3, 4))
    attention_case("attn_mask_rank1", 2, 1, 2, 3, 2, 3, mask_shape=(3,))
    attention_case("attn_single_head", 1, 1, 5, 7, 6, 3, mask_shape=(1, 1, 5, 7))
    attention_case("attn_larger", 2, 4, 16, 20, 8, 8, mask_shape=(2, 1, 16, 20), atol=2e-5,
                   rtol=2e-5)
    attention_case("attn_scale_one", 1, 2, 2, 2, 3, 3, scale=1.0)
    attention_case("attn_f64", 2, 2, 3, 4, 3, 2, mask_shape=(2, 1, 1, 4), dtype=np.float64,
                   atol=1e-12, rtol=1e-12)
    attention_case("attn_f16", 1, 2, 3, 4, 4, 4, mask_shape=(1, 2, 3, 4), dtype=np.float16,
                   atol=5e-3, rtol=5e-3)


# ---------------------------------------------------------------------------------------
# Quantized elementwise ops: the DequantizeLinear -> Add/Mul -> QuantizeLinear chain in
# numpy float32 (each operation rounded to float32, as the unfused ops compute it), and
# the table lookup by index.

def q8(dtype, *shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def qlinear_binary_ref(op, a, sa, za, b, sb, zb, sc, zc):
    f32 = np.float32
    fa = (a.astype(np.int32) - za).astype(f32) * f32(sa)
    fb = (b.astype(np.int32) - zb).astype(f32) * f32(sb)
    s = fa + fb if op == "QLinearAdd" else fa * fb
    q = (s / f32(sc)).astype(f32)
    info = np.iinfo(a.dtype)
    return np.clip(np.rint(q.astype(np.float64)) + zc, info.min, info.max).astype(a.dtype)


def gen_quant_elementwise():
    def binary(name, op, dtype, a_shape, b_shape, sa, za, sb, zb, sc, zc):
        a, b = q8(dtype, *a_shape), q8(dtype, *b_shape)
        sc_ = lambda v: np.array(v, dtype=np.float32)
        zp = lambda v: np.array(v, dtype=dtype)
        fused(name, op,
              [("a", a), ("a_scale", sc_(sa)), ("a_zero", zp(za)), ("b", b),
               ("b_scale", sc_(sb)), ("b_zero", zp(zb)), ("c_scale", sc_(sc)), ("c_zero", zp(zc))],
              [("c", qlinear_binary_ref(op, a, sa, za, b, sb, zb, sc, zc))], atol=0, rtol=0,
              consts=("a_scale", "a_zero", "b_scale", "b_zero", "c_scale", "c_zero"))

    binary("qadd_u8", "QLinearAdd", np.uint8, (1, 3, 5, 7), (1, 3, 5, 7),
           0.05, 3, 0.0731, 128, 0.09, 60)
    binary("qadd_u8_broadcast", "QLinearAdd", np.uint8, (2, 3, 4, 5), (3, 1, 1),
           0.02, 100, 0.01, 7, 0.02, 128)
    binary("qadd_s8", "QLinearAdd", np.int8, (4, 33), (4, 33), 0.02, -10, 0.013, 5, 0.031, -128)
    binary("qmul_u8_scalar", "QLinearMul", np.uint8, (2, 40), (), 0.1, 128, 0.05, 0, 0.02, 10)
    binary("qmul_s8", "QLinearMul", np.int8, (3, 17), (1, 17), 0.07, 0, 0.03, -3, 0.2, 2)

    for name, dtype, shape in (("qlookup_u8", np.uint8, (2, 3, 37)), ("qlookup_s8", np.int8, (70,))):
        x = q8(dtype, *shape)
        table = q8(dtype, 256)
        index = x.astype(np.int32) - np.iinfo(dtype).min
        fused(name, "QLinearLookup", [("x", x), ("table", table)], [("y", table[index])],
              atol=0, rtol=0, consts=("table",))


def main():
    np.seterr(over="ignore")
    gen_fused_conv()
    gen_fused_gemm()
    gen_fused_matmul()
    gen_gelu_layernorm()
    gen_attention()
    gen_quant_elementwise()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("# Generated by tests/plugins/cpu/gen_fused_cases.py; do not edit.\n")
        f.write("# Format: tests/support/include/infer/test_support/op_case.hpp; op types are\n")
        f.write("# written 'domain:op' (fused_ops_test.cpp splits them).\n\n")
        for c in CASES:
            f.write(c.text() + "\n")
    print("wrote %d cases to %s (%d bytes)" % (len(CASES), OUT, os.path.getsize(OUT)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
