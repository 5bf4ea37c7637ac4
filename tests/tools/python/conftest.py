"""Fixtures for the tests of the `infer` Python module (tools/python).

ctest runs them with Debian's Python (python3-pytest, python3-numpy, python3-onnx):
PYTHONPATH holds the built module (build/python) and INFER_RUN the infer-run binary of
the same build. Models are written with onnx.helper at test time into a temp folder.
"""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def infer_run():
    path = os.environ.get("INFER_RUN")
    if not path or not os.path.isfile(path):
        pytest.fail(f"INFER_RUN must name the infer-run binary of this build (got {path!r}); run these through ctest")
    return path


@pytest.fixture(scope="session")
def digits(repo):
    """(model path, samples [8,1,8,8], PyTorch's logits [8,10], predictions)."""
    return (os.path.join(repo, "models", "digits_cnn.onnx"),
            np.load(os.path.join(repo, "models", "digits_samples.npy")),
            np.load(os.path.join(repo, "models", "digits_samples_expected_logits.npy")),
            [0, 7, 0, 3, 8, 5, 8, 4])


def save_model(path, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture
def make_model(tmp_path):
    """make_model(name, nodes, inputs, outputs, initializers=()) -> path of the saved model."""
    def make(name, nodes, inputs, outputs, initializers=(), opset=17):
        return save_model(tmp_path / name, nodes, inputs, outputs, initializers, opset)
    return make


def value(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


FLOAT = TensorProto.FLOAT
