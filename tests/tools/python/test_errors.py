"""Every failure raises infer.Error (a RuntimeError) with one line that names the input,
output, argument or file at fault."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import infer
from conftest import FLOAT, value


@pytest.fixture(scope="module")
def session(digits):
    return infer.Session(digits[0])


def error_of(call):
    with pytest.raises(infer.Error) as info:
        call()
    assert isinstance(info.value, RuntimeError)
    return str(info.value)


def test_input_errors(session, digits):
    x = digits[1]
    assert error_of(lambda: session.run({"image": x.astype(np.float64)})) == (
        "input 'image': expected a numpy array of dtype float32, got float64 (convert it with .astype(numpy.float32))")
    assert error_of(lambda: session.run({"imag": x})) == "unknown input 'imag'; the model's inputs are: image"
    assert error_of(lambda: session.run({})) == "missing input 'image' (float32 [batch,1,8,8])"
    assert error_of(lambda: session.run({"image": x[:, :, :4]})) == "input 'image': dim 2 is 8 in the model, got 4"
    assert error_of(lambda: session.run({"image": x[0]})).startswith("input 'image': ")
    assert error_of(lambda: session.run({1: x})) == "feeds: keys must be input names (str), got 1"
    message = error_of(lambda: session.run({"image": [["a"]]}))
    assert message.startswith("input 'image': cannot convert the list given to a numpy array of dtype float32: ")
    big_endian = x.astype(">f4")
    assert error_of(lambda: session.run({"image": big_endian})) == (
        "input 'image': expected a numpy array of dtype float32, got >f4 (convert it with .astype(numpy.float32))")


def test_output_name_errors(session, digits):
    assert error_of(lambda: session.run(["probs"], {"image": digits[1]})) == (
        "unknown output 'probs'; the model's outputs are: logits")
    assert error_of(lambda: session.run("logits", {"image": digits[1]})) == (
        "output_names: expected a list of names (or None), got the string 'logits'")


def test_bfloat16_input_is_refused_by_name(make_model):
    model = make_model("bf16_in.onnx", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
                       [value("x", TensorProto.BFLOAT16, [2])], [value("y", FLOAT, [2])])
    session = infer.Session(model)
    assert error_of(lambda: session.run({"x": np.zeros(2, np.uint16)})) == (
        "input 'x' is bfloat16, which numpy has no dtype for: infer's Python module cannot feed it")


def test_session_argument_errors(digits, tmp_path):
    model = digits[0]
    assert error_of(lambda: infer.Session(model, backends="cpu")) == (
        "backends: expected a list of backend names such as ['cpu'], got the string 'cpu'")
    assert error_of(lambda: infer.Session(model, backends=[])) == (
        "backends: the list is empty; give at least one, e.g. ['cpu']")
    assert error_of(lambda: infer.Session(model, threads=-1)) == (
        "threads: -1 is negative (0: one per hardware thread)")
    assert error_of(lambda: infer.Session(model, optimization_level=4)) == (
        "optimization_level: 4 is not one of 0, 1, 2, 3")
    assert error_of(lambda: infer.Session(model, precision="int8")) == (
        "precision 'int8': expected None, 'fp32', 'bf16' or 'fp16'")
    assert error_of(lambda: infer.Session()) == (
        "no model: give the model's path (or config= a deployment file with 'model:')")
    missing = str(tmp_path / "missing.onnx")
    assert error_of(lambda: infer.Session(missing)) == f"cannot open model '{missing}': No such file or directory"
    assert error_of(lambda: infer.Session(model, backends=["nope"], plugin_dirs=[str(tmp_path)])).startswith(
        "no plugin 'nope' found (searched: " + str(tmp_path))


def test_deployment_file_errors(tmp_path, digits):
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"model: {digits[0]}\nthreadz: 2\n")
    message = error_of(lambda: infer.Session(config=str(bad)))
    assert message.startswith(str(bad)) and "threadz" in message
    no_model = tmp_path / "no_model.yaml"
    no_model.write_text("threads: 2\n")
    assert error_of(lambda: infer.Session(config=str(no_model))) == (
        f"no model: the deployment file {no_model} has no 'model:' and no path was given")
