"""Fixtures for the tests of tools/infer-quantize.

ctest runs them with Debian's Python (numpy, onnx, pytest): PYTHONPATH holds the infer
module of this build, INFER_QUANTIZE the configured build/bin/infer-quantize and INFER_RUN
the infer-run binary. The library (tools/infer-quantize/infer_quantize) is imported from
the source tree. Models are written with onnx.helper at test time.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOL_DIR = os.path.join(REPO, "tools", "infer-quantize")
sys.path.insert(0, TOOL_DIR)

FLOAT = TensorProto.FLOAT


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def quantize_cmd():
    """The command line prefix that runs infer-quantize."""
    path = os.environ.get("INFER_QUANTIZE") or os.path.join(TOOL_DIR, "infer-quantize")
    if not os.path.isfile(path):
        pytest.fail(f"INFER_QUANTIZE must name build/bin/infer-quantize (got {path!r}); run these through ctest")
    return [path]


@pytest.fixture
def run_tool(quantize_cmd):
    """run_tool(*args) -> CompletedProcess (text, both streams captured)."""
    def run(*args):
        return subprocess.run(quantize_cmd + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=300)
    return run


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save_model(path, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="test")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


@pytest.fixture(scope="session")
def digits(repo):
    """Paths: (model, calibration folder, held-out images, held-out labels)."""
    m = os.path.join(repo, "models")
    return (os.path.join(m, "digits_cnn.onnx"), os.path.join(m, "digits_calibration"),
            os.path.join(m, "digits_test_images.npy"), os.path.join(m, "digits_test_labels.npy"))


@pytest.fixture(scope="session")
def digits_int8(digits, tmp_path_factory, quantize_cmd):
    """The digits model quantized with the defaults (minmax) and the tool's stdout."""
    out = tmp_path_factory.mktemp("digits") / "digits_int8.onnx"
    proc = subprocess.run(quantize_cmd + [digits[0], str(out), "--calibration", digits[1], "--eval", digits[2],
                                          "--threads", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return str(out), proc
