"""Scales and zero points, computed the way ONNX Runtime's quantizer defines them.

- activations, asymmetric (the default, uint8): the range is widened to include 0, then
  scale = (max - min) / (qmax - qmin), zero point = round(qmin - min / scale) clipped to
  [qmin, qmax];
- activations, symmetric (int8): scale = max(|min|, |max|) / 127, zero point 0;
- weights: int8, symmetric, [-127, 127], scale = max|w| / 127 per output channel (or per
  tensor), zero point 0;
- bias: int32, scale = x_scale * w_scale (per channel), zero point 0.

A scale that would be zero (an all-zero tensor) is 1 instead, so that every scale in the
written model is positive and finite.
"""

import numpy as np

from .errors import QuantizeError

TINY = np.finfo(np.float32).tiny

# storage type -> (numpy dtype, qmin, qmax) for asymmetric ranges
ASYMMETRIC_RANGE = {"uint8": (np.uint8, 0, 255), "int8": (np.int8, -128, 127)}


def activation_qparams(lo, hi, qtype="uint8", symmetric=False):
    """(scale as float32, zero point as qtype) for a tensor observed in [lo, hi]."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise QuantizeError(f"calibration range [{lo}, {hi}] is not finite")
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    dtype, qmin, qmax = ASYMMETRIC_RANGE[qtype]
    if symmetric:
        if qtype != "int8":
            raise QuantizeError("symmetric activations are int8 (uint8 activations are asymmetric)")
        scale = np.float32(max(-lo, hi) / 127.0)
        if not np.isfinite(scale) or scale < TINY:
            scale = np.float32(1.0)
        return scale, np.int8(0)
    scale = np.float32((hi - lo) / float(qmax - qmin))
    if not np.isfinite(scale) or scale < TINY:
        return np.float32(1.0), dtype(0)
    zero = int(np.clip(np.round(qmin - lo / float(scale)), qmin, qmax))
    return scale, dtype(zero)


def quantize_array(x, scale, zero, dtype):
    """QuantizeLinear in numpy: saturate(round_half_even(x / scale) + zero) as dtype."""
    info = np.iinfo(dtype)
    q = np.round(np.asarray(x, np.float32) / np.float32(scale)) + int(zero)
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize_array(q, scale, zero):
    """DequantizeLinear in numpy: (q - zero) * scale, float32."""
    return ((np.asarray(q).astype(np.int32) - np.int32(zero)).astype(np.float32) * np.float32(scale))


def quantize_weight(w, axis):
    """int8 symmetric weights: (quantized int8 array, float32 scales). axis None: one scale
    for the whole tensor (a 0-d array); else one scale per index along axis."""
    w64 = np.asarray(w, np.float64)
    if axis is None:
        scale = np.array(np.max(np.abs(w64)) / 127.0 if w64.size else 0.0, np.float32)
        if scale < TINY:
            scale = np.array(1.0, np.float32)
        q = np.clip(np.round(w64 / np.float64(scale)), -127, 127).astype(np.int8)
        return q, scale
    moved = np.moveaxis(w64, axis, 0)
    absmax = np.max(np.abs(moved.reshape(moved.shape[0], -1)), axis=1)
    scale = (absmax / 127.0).astype(np.float32)
    scale[scale < TINY] = 1.0
    shape = [1] * w64.ndim
    shape[axis] = -1
    q = np.clip(np.round(w64 / scale.reshape(shape).astype(np.float64)), -127, 127).astype(np.int8)
    return q, scale


def quantize_weight_asymmetric_uint8(w, axis):
    """uint8 asymmetric weights (for the dynamic form's --weight-type uint8): (quantized,
    scales, zero points), per channel along axis or per tensor (axis None)."""
    w64 = np.asarray(w, np.float64)
    if axis is None:
        lo, hi = np.array([min(w64.min(), 0.0)]), np.array([max(w64.max(), 0.0)])
    else:
        moved = np.moveaxis(w64, axis, 0).reshape(w64.shape[axis], -1)
        lo, hi = np.minimum(moved.min(axis=1), 0.0), np.maximum(moved.max(axis=1), 0.0)
    scale = ((hi - lo) / 255.0).astype(np.float32)
    scale[scale < TINY] = 1.0
    zero = np.clip(np.round(-lo / scale.astype(np.float64)), 0, 255).astype(np.uint8)
    if axis is None:
        s, z = np.float64(scale[0]), int(zero[0])
        q = np.clip(np.round(w64 / s) + z, 0, 255).astype(np.uint8)
        return q, np.array(scale[0], np.float32), np.array(zero[0], np.uint8)
    shape = [1] * w64.ndim
    shape[axis] = -1
    q = np.clip(np.round(w64 / scale.reshape(shape).astype(np.float64)) + zero.reshape(shape).astype(np.float64),
                0, 255).astype(np.uint8)
    return q, scale, zero


def bias_scale(x_scale, w_scale):
    """The int32 bias scale x_scale * w_scale (per channel when w_scale is), as float32."""
    scale = (np.float64(x_scale) * np.asarray(w_scale, np.float64)).astype(np.float32)
    if scale.ndim == 0:
        return np.array(scale if scale >= TINY else 1.0, np.float32)
    scale[scale < TINY] = 1.0
    return scale


def quantize_bias(bias, scale):
    """int32 bias: round(bias / scale), saturated."""
    info = np.iinfo(np.int32)
    return np.clip(np.round(np.asarray(bias, np.float64) / np.asarray(scale, np.float64)),
                   info.min, info.max).astype(np.int32)
