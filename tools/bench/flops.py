"""Counts the floating-point operations of an ONNX model: 2 x the multiply-accumulates
of its Conv, Gemm and MatMul nodes (and of their integer forms: ConvInteger, QLinearConv,
MatMulInteger, QLinearMatMul), with the shapes from ONNX shape inference.

The other operators (activations, normalisations, pooling, softmax) are left out on
purpose: they are memory-bound, a few percent of the arithmetic of the models the
harness measures, and the usual "GFLOPs of ResNet-50" figure (8.2 G at batch 1) counts
the same way, so achieved GFLOP/s stay comparable with published figures.

Needs only the onnx package (no torch), so the harness' tests can run it on tiny models.
"""

import math

import onnx
from onnx import shape_inference


class FlopError(Exception):
    """A Conv/Gemm/MatMul whose operand or result shape is not fully known."""


def _shape_table(model):
    """Maps every tensor name with a fully known static shape to that shape."""
    table = {}
    graph = model.graph
    for init in graph.initializer:
        table[init.name] = list(init.dims)
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        tensor_type = info.type.tensor_type
        if not tensor_type.HasField("shape"):
            continue
        dims = []
        for d in tensor_type.shape.dim:
            if not d.HasField("dim_value"):
                dims = None
                break
            dims.append(d.dim_value)
        if dims is not None:
            table.setdefault(info.name, dims)
    return table


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _need(table, node, name, what):
    if name not in table:
        raise FlopError(f"node '{node.name or node.op_type}' ({node.op_type}): the shape of its {what} "
                        f"'{name}' is unknown after shape inference (give the model static shapes)")
    return table[name]


def node_macs(node, table):
    """Multiply-accumulates of one node (0 for operators that are not counted)."""
    if node.op_type in ("Conv", "ConvInteger", "QLinearConv"):
        weight = _need(table, node, node.input[3 if node.op_type == "QLinearConv" else 1], "weight")
        out = _need(table, node, node.output[0], "output")
        # Each output element sums over C_in/group x kernel products: W is [M, C/group, k...].
        return math.prod(out) * math.prod(weight[1:])
    if node.op_type == "Gemm":
        a = _need(table, node, node.input[0], "input A")
        out = _need(table, node, node.output[0], "output")
        k = a[0] if _attr(node, "transA", 0) else a[1]
        return math.prod(out) * k
    if node.op_type in ("MatMul", "MatMulInteger", "QLinearMatMul"):
        a = _need(table, node, node.input[0], "input A")
        out = _need(table, node, node.output[0], "output")
        return math.prod(out) * a[-1]
    return 0


def model_flops(model):
    """Returns (total FLOPs, {op_type: FLOPs}) of an onnx.ModelProto. Subgraphs (If, Loop)
    are not entered: the benchmark models have none."""
    inferred = shape_inference.infer_shapes(model)
    table = _shape_table(inferred)
    per_op = {}
    for node in inferred.graph.node:
        flops = 2 * node_macs(node, table)
        if flops:
            per_op[node.op_type] = per_op.get(node.op_type, 0) + flops
    return sum(per_op.values()), per_op


def file_flops(path):
    # Loading without external data is enough: shape inference needs the dims only.
    return model_flops(onnx.load(path, load_external_data=False))
