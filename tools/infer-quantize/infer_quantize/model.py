"""Loading the float model and reading what the rest of the tool needs from it: its
inputs (name, dtype, dims), every tensor's element type and the default-domain opset."""

import os
import warnings
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, mapping

from .errors import QuantizeError

# Nodes that mean the model is quantized already.
QUANTIZED_OP_TYPES = {
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
    "ConvInteger", "MatMulInteger", "QLinearAdd", "QLinearMul", "QGemm",
}


@dataclass
class InputSpec:
    """One graph input: its name, numpy dtype and dims (int, a symbolic name, or None)."""
    name: str
    dtype: np.dtype
    dims: list

    def describe(self):
        """The input as a user reads it, e.g. "'image' float32 [batch,1,8,8]"."""
        dims = ",".join("?" if d is None else str(d) for d in self.dims)
        return f"'{self.name}' {self.dtype.name} [{dims}]"


def load(path):
    """Reads an ONNX model, or raises QuantizeError naming the file."""
    if not os.path.isfile(path):
        raise QuantizeError(f"{path}: no such file")
    try:
        with warnings.catch_warnings():  # protobuf warns before it fails on a non-ONNX file
            warnings.simplefilter("ignore")
            return onnx.load(path)
    except Exception as error:  # protobuf's DecodeError and friends
        raise QuantizeError(f"{path}: not a readable ONNX model ({type(error).__name__})") from None


def default_opset(model):
    """The model's default-domain (ai.onnx) opset version, 0 if it imports none."""
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)


def numpy_dtype(elem_type):
    """numpy dtype of an ONNX element type, None for those numpy lacks (bfloat16, strings)."""
    if elem_type == TensorProto.BFLOAT16 or elem_type == TensorProto.STRING:
        return None
    t = mapping.TENSOR_TYPE_TO_NP_TYPE.get(elem_type)
    return np.dtype(t) if t is not None else None


def input_specs(model):
    """The graph inputs that are fed (initializers listed as inputs excluded)."""
    inits = {i.name for i in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in inits:
            continue
        tensor = value.type.tensor_type
        dtype = numpy_dtype(tensor.elem_type)
        dims = []
        for d in tensor.shape.dim:
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param"):
                dims.append(d.dim_param)
            else:
                dims.append(None)
        specs.append(InputSpec(value.name, dtype, dims))
    return specs


def tensor_types(model):
    """{tensor name: ONNX element type} for every tensor whose type is known, after ONNX
    shape inference (best effort: a model it cannot infer keeps the declared types)."""
    types = {}
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        inferred = model
    graph = inferred.graph
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        if value.type.HasField("tensor_type") and value.type.tensor_type.elem_type:
            types[value.name] = value.type.tensor_type.elem_type
    for init in model.graph.initializer:
        types[init.name] = init.data_type
    return types, inferred


def check_float_model(model, path):
    """Raises QuantizeError unless the model is a float32 model that is not quantized yet."""
    for node in model.graph.node:
        if node.op_type in QUANTIZED_OP_TYPES:
            raise QuantizeError(f"{path}: the model is already quantized (node '{node.name or node.output[0]}' "
                                f"is {node.op_type})")
    if not model.graph.node:
        raise QuantizeError(f"{path}: the graph has no nodes")
    floats = [i for i in model.graph.initializer if i.data_type == TensorProto.FLOAT]
    float_inputs = [s for s in input_specs(model) if s.dtype == np.float32]
    if not floats and not float_inputs:
        kinds = sorted({TensorProto.DataType.Name(i.data_type).lower() for i in model.graph.initializer})
        raise QuantizeError(f"{path}: not a float32 model (no float32 input or weight; weights are "
                            f"{', '.join(kinds) or 'absent'})")
