#!/usr/bin/python3
"""Writes the tiny ONNX models of tests/tools/data/ that the infer-run CLI tests feed to
the binary, each built for one failure (or one naming rule) it must report cleanly.

Run with Debian's python (python3-onnx):
    /usr/bin/python3 tests/tools/gen_model_fixtures.py
The output is deterministic: re-running rewrites the same bytes.
"""
import os
import warnings

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def write_model(name, graph, opsets, check=True):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                              producer_name="infer-tests")
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    data = model.SerializeToString()
    with open(os.path.join(DATA, name), "wb") as f:
        f.write(data)
    return data


def write_raw(name, data):
    with open(os.path.join(DATA, name), "wb") as f:
        f.write(data)


def must_not_parse(data):
    # Python's protobuf only warns where C++'s ParseFromString fails (e.g. a stray
    # end-group tag), so warnings count as failures here.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            onnx.ModelProto.FromString(data)
        except Exception:  # noqa: BLE001 - any decode error is what we want
            return
    raise AssertionError("fixture unexpectedly parses as a ModelProto")


def main():
    os.makedirs(DATA, exist_ok=True)

    # An op no backend implements: node 'acme_node', op FooBar, domain com.acme.
    graph = helper.make_graph(
        [helper.make_node("FooBar", ["x"], ["y"], name="acme_node", domain="com.acme")],
        "unknown_op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    write_model("unknown_op.onnx", graph, [("", 13), ("com.acme", 1)])

    # A string input: infer-run feeds numeric and bool tensors only.
    graph = helper.make_graph(
        [helper.make_node("Identity", ["text"], ["same"], name="copy_text")],
        "string_input",
        [helper.make_tensor_value_info("text", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("same", TensorProto.STRING, [2])])
    write_model("string_input.onnx", graph, [("", 13)])

    # Names with characters that are not safe in file names: the output is saved as
    # scores_relu_0.npy. The input has a fixed shape so it can be generated.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["in:0"], ["scores/relu:0"], name="relu")],
        "odd_names",
        [helper.make_tensor_value_info("in:0", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("scores/relu:0", TensorProto.FLOAT, [2, 3])])
    relu = write_model("odd_names.onnx", graph, [("", 13)])

    # A model file cut in half: the protobuf ends in the middle of a field.
    truncated = relu[: len(relu) // 2]
    must_not_parse(truncated)
    write_raw("truncated.onnx", truncated)

    # A corrupted name: the node's name holds invalid UTF-8, an escape sequence and a
    # newline (proto2 strings are not checked for UTF-8 when parsed). Written with a
    # placeholder of the same length, then patched in the serialized bytes. The error
    # line must show these bytes as \xNN, never raw.
    placeholder = b"bad_NAME_0123"
    raw_name = b"bad\xff\x1b[31m\nE\xc3("
    assert len(placeholder) == len(raw_name)
    graph = helper.make_graph(
        [helper.make_node("FooBar", ["x"], ["y"], name=placeholder.decode(), domain="com.acme")],
        "raw_bytes_name",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.acme", 1)],
                              producer_name="infer-tests")
    model.ir_version = 8
    data = model.SerializeToString()
    assert data.count(placeholder) == 1
    write_raw("raw_bytes_name.onnx", data.replace(placeholder, raw_name))

    # Not a model at all.
    text = b"this is a text file, not an ONNX model\n"
    must_not_parse(text)
    write_raw("not_onnx.onnx", text)

    # A float16 body between float32 edges, as exporters write half-precision models:
    # Cast -> Conv (float16 weights) -> Relu -> Cast. The cpu backend has no float16 Conv,
    # so the session computes it in float32 and --explain says so.
    weights = helper.make_tensor("w", TensorProto.FLOAT16, [2, 1, 1, 1], [0.5, -1.0])
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["xh"], name="to_half", to=TensorProto.FLOAT16),
         helper.make_node("Conv", ["xh", "w"], ["c"], name="half_conv"),
         helper.make_node("Relu", ["c"], ["r"], name="half_relu"),
         helper.make_node("Cast", ["r"], ["y"], name="to_float", to=TensorProto.FLOAT)],
        "float16_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 2])],
        [weights])
    write_model("float16_conv.onnx", graph, [("", 13)])


if __name__ == "__main__":
    main()
