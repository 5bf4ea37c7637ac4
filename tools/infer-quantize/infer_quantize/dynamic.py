"""The dynamic form, as ONNX Runtime's quantize_dynamic writes it, for MatMul and Gemm
nodes with a constant weight:

    x -> DynamicQuantizeLinear -> (x_q uint8, x_scale, x_zero_point)
    MatMulInteger(x_q, w_q, x_zero_point, w_zero_point) -> int32
      -> Cast(float) -> Mul(x_scale * w_scale) [-> Add(bias)] -> the node's output

w_q is int8 symmetric (zero point 0) or uint8 asymmetric, per output column (w_scale and
w_zero_point of length N; MatMulInteger reads a 1-D b_zero_point per column) or per
tensor. One DynamicQuantizeLinear serves every converted node reading the same x. A
Gemm's transB, alpha and beta are folded into the constant weight and bias; a Gemm with
transA, or with a non-constant C scaled by beta != 1, stays float. No calibration is
needed: the activations' scales are computed at run time.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import params as qp
from .qdq import attr

DYNAMIC_OPS = ("MatMul", "Gemm")


def _weight_for(node, inits):
    """(weight [K, N] as float32 with Gemm's transB and alpha folded in, bias or None,
    bias name or None, why-not) for a convertible node, else None with the reason."""
    w_name = node.input[1] if len(node.input) > 1 else ""
    if w_name not in inits or inits[w_name].data_type != TensorProto.FLOAT:
        return None
    w = numpy_helper.to_array(inits[w_name]).astype(np.float32)
    if w.ndim != 2:
        return None
    bias, bias_name = None, None
    if node.op_type == "Gemm":
        if attr(node, "transA", 0):
            return None
        if attr(node, "transB", 0):
            w = w.T
        w = np.ascontiguousarray(w * np.float32(attr(node, "alpha", 1.0)))
        if len(node.input) > 2 and node.input[2]:
            c, beta = node.input[2], float(attr(node, "beta", 1.0))
            if c in inits:
                bias = numpy_helper.to_array(inits[c]).astype(np.float32) * np.float32(beta)
            elif beta == 1.0:
                bias_name = c
            else:
                return None
    return w, bias, bias_name


def quantize_dynamic(model, types, per_channel=True, weight_type="int8", keep_float_nodes=frozenset(),
                     keep_float_ops=frozenset(), op_types=DYNAMIC_OPS, producer_name="infer-quantize"):
    """The dynamically quantized model and the number of nodes converted."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    nodes, new_inits = [], []
    dql = {}  # x -> (x_q, x_scale, x_zero_point)
    weight_names = {}
    converted = 0
    for index, node in enumerate(graph.node):
        x = node.input[0] if node.input else ""
        kept = node.name in keep_float_nodes or node.op_type in keep_float_ops
        spec = None
        if (node.op_type in op_types and not kept and x and x not in inits
                and types.get(x, TensorProto.FLOAT) == TensorProto.FLOAT):
            spec = _weight_for(node, inits)
        if spec is None:
            nodes.append(node)
            continue
        w, bias, bias_name = spec
        converted += 1
        out = node.output[0]
        stem = node.name or out
        if x not in dql:
            dql[x] = (f"{x}_quantized", f"{x}_scale", f"{x}_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(dql[x]),
                                          name=f"{x}_DynamicQuantizeLinear"))
        x_q, x_scale, x_zero = dql[x]
        key = (node.input[1], node.op_type, attr(node, "transB", 0), attr(node, "alpha", 1.0))
        if key not in weight_names:
            w_name = node.input[1] if not any(k[0] == node.input[1] for k in weight_names) \
                else f"{node.input[1]}_{index}"
            axis = 1 if per_channel else None
            if weight_type == "uint8":
                q, scale, zero = qp.quantize_weight_asymmetric_uint8(w, axis)
            else:
                q, scale = qp.quantize_weight(w, axis)
                zero = np.zeros(scale.shape, np.int8)
            new_inits += [numpy_helper.from_array(q, f"{w_name}_quantized"),
                          numpy_helper.from_array(np.asarray(scale, np.float32), f"{w_name}_scale"),
                          numpy_helper.from_array(np.asarray(zero), f"{w_name}_zero_point")]
            weight_names[key] = w_name
        w_name = weight_names[key]
        nodes.append(helper.make_node("MatMulInteger", [x_q, f"{w_name}_quantized", x_zero, f"{w_name}_zero_point"],
                                      [f"{out}_MatMulInteger_Output"], name=f"{stem}_MatMulInteger"))
        nodes.append(helper.make_node("Cast", [f"{out}_MatMulInteger_Output"], [f"{out}_MatMulInteger_Cast_Output"],
                                      name=f"{stem}_Cast", to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Mul", [x_scale, f"{w_name}_scale"], [f"{out}_scale_product"],
                                      name=f"{stem}_scale_Mul"))
        has_bias = bias is not None or bias_name is not None
        scaled = f"{out}_scaled" if has_bias else out
        nodes.append(helper.make_node("Mul", [f"{out}_MatMulInteger_Cast_Output", f"{out}_scale_product"], [scaled],
                                      name=f"{stem}_output_Mul"))
        if bias is not None:
            new_inits.append(numpy_helper.from_array(bias, f"{out}_bias"))
            bias_name = f"{out}_bias"
        if has_bias:
            nodes.append(helper.make_node("Add", [scaled, bias_name], [out], name=f"{stem}_bias_Add"))
    used = {n for node in nodes for n in node.input}
    kept_inits = [i for i in graph.initializer if i.name in used]
    out_model = helper.make_model(
        helper.make_graph(nodes, graph.name, list(graph.input), list(graph.output), kept_inits + new_inits,
                          value_info=list(graph.value_info)),
        opset_imports=list(model.opset_import), producer_name=producer_name, ir_version=model.ir_version)
    return out_model, converted
