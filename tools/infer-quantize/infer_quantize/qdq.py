"""The static QDQ model, in ONNX Runtime's QDQ conventions.

plan() decides what to quantize; build() writes the graph once the activation ranges are
known. The output:

- activations: QuantizeLinear -> DequantizeLinear per tensor (uint8 asymmetric by
  default, or int8), one DequantizeLinear shared by all quantized readers;
- Conv / Gemm / MatMul constant weights: int8 initializers, symmetric, per output
  channel (Conv axis 0; Gemm axis 0 with transB, else 1; MatMul the last axis) or per
  tensor, read through DequantizeLinear;
- Conv / Gemm bias: an int32 initializer with scale x_scale * w_scale, zero point 0;
- a quantized op whose only reader is a Relu or Clip keeps its output float and the
  activation's output is quantized instead (the Relu stays in the graph);
- MaxPool and the pass-through ops (Reshape, Transpose, Flatten, Squeeze, Unsqueeze)
  give their output their input's scale and zero point; a pass-through op or a lone
  Relu/Clip is quantized only when its input is;
- constant inputs of Add / Mul / Concat are stored quantized like activations;
- graph inputs and outputs stay float: a quantized graph output is the output of its
  DequantizeLinear under the original name (the producer writes <name>_QuantizeInput);
- a quantized tensor is read through its DequantizeLinear by every reader (as ORT
  does), except the nodes kept in float, which read the float tensor.

Names follow ORT's: <t>_QuantizeLinear_Output, <t>_DequantizeLinear_Output, <t>_scale,
<t>_zero_point, <w>_quantized.
"""

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import params as qp
from .errors import QuantizeError

# Ops quantized by default, by role.
WEIGHTED_OPS = ("Conv", "Gemm", "MatMul")
DEFAULT_OPS = ("Conv", "Gemm", "MatMul", "Add", "Mul", "MaxPool", "AveragePool", "GlobalAveragePool", "Concat")
PASSTHROUGH_OPS = ("Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze")
ACTIVATION_OPS = ("Relu", "Clip")
SHARED_OUTPUT_OPS = ("MaxPool",)  # the output takes the input's scale and zero point


@dataclass
class StaticConfig:
    """What to quantize and how (the defaults are the command's)."""
    op_types: tuple = DEFAULT_OPS
    # ops whose lone Relu/Clip reader gets quantized instead of their own output
    fuse_activation_after: tuple = ("Conv", "Gemm", "MatMul", "Add", "Mul")
    passthrough_ops: tuple = PASSTHROUGH_OPS
    quantize_lone_activations: bool = True   # a Relu/Clip whose input is quantized
    quantize_constant_inputs: bool = True    # Add/Mul/Concat constants as activations
    per_channel: bool = True
    activation_type: str = "uint8"
    symmetric_activations: bool = False
    keep_float_nodes: frozenset = frozenset()
    keep_float_ops: frozenset = frozenset()
    producer_name: str = "infer-quantize"


@dataclass
class Plan:
    """What plan() decided.
    activations: float tensors to Q/DQ, in graph order;
    weights: {initializer: axis or None} quantized int8;
    biases: {node index: (bias initializer, the node's input tensor, weight initializer)};
    shared: {tensor: tensor whose scale and zero point it takes};
    constants: float initializers stored quantized like activations;
    quantized_nodes: indices of the nodes quantized (their float inputs read DQ outputs)."""
    activations: list
    weights: dict
    biases: dict
    shared: dict
    constants: list = field(default_factory=list)
    quantized_nodes: set = field(default_factory=set)

    def root(self, name):
        """The tensor whose range gives name's scale and zero point."""
        seen = set()
        while name in self.shared and name not in seen:
            seen.add(name)
            name = self.shared[name]
        return name

    def calibrated(self):
        """The tensors whose ranges calibration must measure."""
        out = []
        for name in self.activations:
            r = self.root(name)
            if r not in out:
                out.append(r)
        return out


def attr(node, name, default):
    """A node attribute's value, or default."""
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def node_label(node, index):
    return node.name or f"#{index} ({node.op_type} -> {node.output[0] if node.output else '?'})"


def check_keep_float(model, names, ops, path):
    """Raises QuantizeError for a keep-float node name or op type the model lacks."""
    present = {n.name for n in model.graph.node if n.name}
    for name in names:
        if name not in present:
            raise QuantizeError(f"--keep-float: the model has no node named '{name}'" +
                                ("" if present else f" ({path} has unnamed nodes only)"))
    types = {n.op_type for n in model.graph.node}
    for op in ops:
        if op not in types:
            raise QuantizeError(f"--keep-float-op: the model has no {op} node (its op types: "
                                f"{', '.join(sorted(types))})")


def plan(model, types, config):
    """Decides what to quantize in the float model (types: {tensor: ONNX element type})."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    graph_outputs = {o.name for o in graph.output}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            if name:
                consumers.setdefault(name, []).append(node)

    def is_float(name):
        return bool(name) and types.get(name, TensorProto.FLOAT) == TensorProto.FLOAT

    def activation(name):
        return is_float(name) and name not in inits

    def kept(node):
        return node.name in config.keep_float_nodes or node.op_type in config.keep_float_ops

    wanted, weights, biases, shared, constants, quantized = set(), {}, {}, {}, [], set()
    absorbed = set()  # Relu/Clip nodes whose output stands for their producer's
    for index, node in enumerate(graph.node):
        op = node.op_type
        if op not in config.op_types or kept(node):
            continue
        if op in ("Add", "Mul", "Concat"):
            ins = [n for n in node.input if activation(n)]
            if not ins:
                continue
            if config.quantize_constant_inputs:
                for n in node.input:
                    if n in inits and is_float(n) and n not in constants:
                        constants.append(n)
        elif op == "MatMul":
            ins = [n for n in node.input if activation(n)]
            if not ins:
                continue
        else:
            ins = [node.input[0]] if activation(node.input[0]) else []
            if not ins:
                continue
        quantized.add(index)
        wanted.update(ins)
        out = node.output[0]
        if not is_float(out):
            continue
        readers = consumers.get(out, [])
        if (op in config.fuse_activation_after and len(readers) == 1 and readers[0].op_type in ACTIVATION_OPS
                and out not in graph_outputs and not kept(readers[0])):
            absorbed.add(id(readers[0]))
            out = readers[0].output[0]  # the op's output stays float; the activation's is quantized
        wanted.add(out)
        if op in SHARED_OUTPUT_OPS:
            shared[out] = ins[0]
        if op in WEIGHTED_OPS and len(node.input) > 1 and node.input[1] in inits and is_float(node.input[1]):
            w = node.input[1]
            rank = len(inits[w].dims)
            if op == "Gemm":
                if attr(node, "transA", 0):
                    continue  # A transposed: leave this Gemm's weight float
                axis = 0 if attr(node, "transB", 0) else 1
            elif op == "MatMul":
                if rank < 2:
                    continue
                axis = rank - 1
            else:
                axis = 0
            if not config.per_channel:
                axis = None
            if weights.get(w, axis) != axis:
                continue  # the same weight read along two axes: leave it float
            weights[w] = axis
            if op != "MatMul" and len(node.input) > 2 and node.input[2] in inits and is_float(node.input[2]):
                bias = numpy_helper.to_array(inits[node.input[2]])
                channels = numpy_helper.to_array(inits[w]).shape[axis if axis is not None else 0]
                plain = op == "Conv" or (attr(node, "alpha", 1.0) == 1.0 and attr(node, "beta", 1.0) == 1.0)
                if plain and bias.ndim == 1 and bias.shape[0] == channels:
                    biases[index] = (node.input[2], ins[0], w)

    # Second pass, in graph order: pass-through ops and lone activations follow their input.
    for index, node in enumerate(graph.node):
        op = node.op_type
        if kept(node) or not node.input or not node.output or not is_float(node.output[0]):
            continue
        source, out = node.input[0], node.output[0]
        if op in config.passthrough_ops and source in wanted:
            wanted.add(out)
            shared[out] = source
            quantized.add(index)
        elif (config.quantize_lone_activations and op in ACTIVATION_OPS and id(node) not in absorbed
              and source in wanted):
            wanted.add(out)
            quantized.add(index)

    order = []
    for name in [i.name for i in graph.input] + [o for n in graph.node for o in n.output]:
        if name in wanted and name not in order:
            order.append(name)
    return Plan(order, weights, biases, shared, constants, quantized)


def build(model, the_plan, ranges, config):
    """The QDQ model; ranges: {tensor: (low, high)} for the_plan.calibrated().
    Returns (model, number of activation Q/DQ pairs)."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    graph_outputs = {o.name for o in graph.output}
    p = the_plan
    new_inits, nodes = [], []
    qparams = {}
    act_dtype = np.uint8 if config.activation_type == "uint8" else np.int8
    for name in p.activations:
        source = p.root(name)
        if source not in qparams:
            if source not in ranges:
                raise QuantizeError(f"no calibration range for tensor '{source}'")
            qparams[source] = qp.activation_qparams(*ranges[source], config.activation_type,
                                                    config.symmetric_activations)
        qparams[name] = qparams[source]

    dq_name = {}  # float tensor -> its DequantizeLinear output
    produced = {}  # quantized graph output -> the name its producer writes

    def qdq(name):
        """Q -> DQ for activation `name`."""
        scale, zero = qparams[name]
        source = f"{name}_QuantizeInput" if name in graph_outputs else name
        produced[name] = source
        scale_name, zero_name = f"{name}_scale", f"{name}_zero_point"
        new_inits.append(numpy_helper.from_array(np.array(scale, dtype=np.float32), scale_name))
        new_inits.append(numpy_helper.from_array(np.array(zero, dtype=act_dtype), zero_name))
        q_out = f"{name}_QuantizeLinear_Output"
        dq_out = name if name in graph_outputs else f"{name}_DequantizeLinear_Output"
        nodes.append(helper.make_node("QuantizeLinear", [source, scale_name, zero_name], [q_out],
                                      name=f"{name}_QuantizeLinear"))
        nodes.append(helper.make_node("DequantizeLinear", [q_out, scale_name, zero_name], [dq_out],
                                      name=f"{name}_DequantizeLinear"))
        dq_name[name] = dq_out

    constant_dq = {}

    def constant(c):
        """DQ(quantized constant) for an Add/Mul/Concat initializer, emitted before its first reader."""
        if c not in constant_dq:
            value = numpy_helper.to_array(inits[c]).astype(np.float32)
            lo, hi = (float(value.min()), float(value.max())) if value.size else (0.0, 0.0)
            scale, zero = qp.activation_qparams(lo, hi, config.activation_type, config.symmetric_activations)
            q = qp.quantize_array(value, scale, zero, act_dtype)
            new_inits.extend([numpy_helper.from_array(q, f"{c}_quantized"),
                              numpy_helper.from_array(np.array(scale, np.float32), f"{c}_scale"),
                              numpy_helper.from_array(np.array(zero, act_dtype), f"{c}_zero_point")])
            constant_dq[c] = f"{c}_DequantizeLinear_Output"
            nodes.append(helper.make_node("DequantizeLinear", [f"{c}_quantized", f"{c}_scale", f"{c}_zero_point"],
                                          [constant_dq[c]], name=f"{c}_DequantizeLinear"))
        return constant_dq[c]

    weight_dq, weight_scales = {}, {}

    def weight(w):
        """DQ(int8 weight) for initializer w, emitted before its first reader."""
        if w not in weight_dq:
            axis = p.weights[w]
            q, scale = qp.quantize_weight(numpy_helper.to_array(inits[w]), axis)
            weight_scales[w] = scale
            new_inits.extend([numpy_helper.from_array(q, f"{w}_quantized"),
                              numpy_helper.from_array(scale, f"{w}_scale"),
                              numpy_helper.from_array(np.zeros(scale.shape, np.int8), f"{w}_zero_point")])
            weight_dq[w] = f"{w}_DequantizeLinear_Output"
            extra = {} if axis is None else {"axis": axis}
            nodes.append(helper.make_node("DequantizeLinear", [f"{w}_quantized", f"{w}_scale", f"{w}_zero_point"],
                                          [weight_dq[w]], name=f"{w}_DequantizeLinear", **extra))
        return weight_dq[w]

    # A bias read by several quantized nodes gets one int32 copy per node (its scale
    # depends on the node's input); named after the bias alone otherwise, as ORT does.
    bias_readers = {}
    for b, _, _ in p.biases.values():
        bias_readers[b] = bias_readers.get(b, 0) + 1
    constants = set(p.constants)

    for name in [i.name for i in graph.input]:
        if name in qparams:
            qdq(name)
    pairs = 0
    for index, node in enumerate(graph.node):
        new = onnx.NodeProto()
        new.CopyFrom(node)
        is_quantized = index in p.quantized_nodes
        keep = node.name in config.keep_float_nodes or node.op_type in config.keep_float_ops
        for k, name in enumerate(new.input):
            if keep and name in produced:
                new.input[k] = produced[name]  # a node kept in float reads the float tensor
            elif name in dq_name:
                new.input[k] = dq_name[name]  # every other reader reads the DequantizeLinear
            elif (k == 1 and name in p.weights and node.op_type in WEIGHTED_OPS and is_quantized
                  and node.input[0] in qparams):
                new.input[k] = weight(name)
            elif is_quantized and name in constants and node.op_type in ("Add", "Mul", "Concat"):
                new.input[k] = constant(name)
        if index in p.biases:
            b, x, w = p.biases[index]
            b_scale = qp.bias_scale(qparams[x][0], weight_scales[w])
            qb = qp.quantize_bias(numpy_helper.to_array(inits[b]), b_scale)
            stem = b if bias_readers[b] == 1 else f"{b}_node{index}"
            new_inits += [numpy_helper.from_array(qb, f"{stem}_quantized"),
                          numpy_helper.from_array(b_scale, f"{stem}_scale"),
                          numpy_helper.from_array(np.zeros(b_scale.shape, np.int32), f"{stem}_zero_point")]
            extra = {"axis": 0} if b_scale.ndim == 1 else {}
            nodes.append(helper.make_node("DequantizeLinear", [f"{stem}_quantized", f"{stem}_scale",
                                                               f"{stem}_zero_point"],
                                          [f"{stem}_DequantizeLinear_Output"], name=f"{stem}_DequantizeLinear",
                                          **extra))
            new.input[2] = f"{stem}_DequantizeLinear_Output"
        for k, name in enumerate(new.output):
            if name in qparams and name in graph_outputs:
                new.output[k] = f"{name}_QuantizeInput"
        nodes.append(new)
        for name in node.output:
            if name in qparams:
                qdq(name)
                pairs += 1
    pairs += sum(1 for i in graph.input if i.name in qparams)

    used = {n for node in nodes for n in node.input}
    kept = [i for i in graph.initializer if i.name in used]
    out = helper.make_model(
        helper.make_graph(nodes, graph.name, list(graph.input), list(graph.output), kept + new_inits),
        opset_imports=list(model.opset_import), producer_name=config.producer_name,
        ir_version=model.ir_version)
    return out, pairs
