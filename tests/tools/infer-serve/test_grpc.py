"""The gRPC endpoint of infer-serve (inference.GRPCInferenceService), driven by
@grpc/grpc-js and @grpc/proto-loader from npm (grpc_client.mjs loads our .proto at run
time): health and metadata, inference with typed contents and with raw_input_contents
against infer-run's logits, and errors as gRPC status codes."""
import base64
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import DIGITS_PREDICTIONS, serve, stop_cleanly, write_deployment

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PROTO = os.path.join(REPO, "tools", "infer-serve", "grpc_inference.proto")
PACKAGES = ["@grpc/grpc-js@1.14.3", "@grpc/proto-loader@0.8.0"]
# gRPC status codes
INVALID_ARGUMENT, NOT_FOUND = 3, 5


@pytest.fixture(scope="session")
def npm_dir(tmp_path_factory):
    """The gRPC client packages, installed with npm once into INFER_SERVE_NPM_DIR (ctest
    points it into the build tree) or a temporary folder."""
    folder = os.environ.get("INFER_SERVE_NPM_DIR") or str(tmp_path_factory.mktemp("npm"))
    marker = os.path.join(folder, "installed.txt")
    if os.path.exists(marker) and open(marker).read() == " ".join(PACKAGES):
        return folder
    if shutil.which("npm") is None:
        pytest.fail("npm is missing: bash tools/install-deps.sh installs node and npm")
    os.makedirs(folder, exist_ok=True)
    done = subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", folder,
                           *PACKAGES], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"npm install {' '.join(PACKAGES)} failed:\n{done.stdout}\n{done.stderr}"
    with open(marker, "w") as f:
        f.write(" ".join(PACKAGES))
    return folder


@pytest.fixture(scope="module")
def server(infer_serve, tmp_path_factory):
    folder = tmp_path_factory.mktemp("grpc")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits", version=1,
                                            batching={"max_batch_size": 16, "max_queue_delay_us": 500}))
    m = re.search(r"and grpc [0-9.]+:(\d+)", s.stderr)
    assert m, s.stderr
    s.grpc_port = int(m.group(1))
    yield s
    stop_cleanly(s)


def call(npm_dir, server, method, request=None):
    done = subprocess.run(["node", os.path.join(HERE, "grpc_client.mjs"), npm_dir, PROTO,
                           f"127.0.0.1:{server.grpc_port}", method],
                          input=json.dumps(request or {}), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def logits_of(response, rows):
    outputs = response["outputs"]
    assert [o["name"] for o in outputs] == ["logits"]
    assert outputs[0]["datatype"] == "FP32" and outputs[0]["shape"] == [str(rows), "10"]
    raw = base64.b64decode(response["raw_output_contents"][0])
    return np.frombuffer(raw, np.float32).reshape(rows, 10)


def test_health_and_metadata(npm_dir, server):
    """ServerLive, ServerReady, ServerMetadata, ModelReady and ModelMetadata answer as the REST ones do."""
    assert call(npm_dir, server, "ServerLive")["response"] == {"live": True}
    assert call(npm_dir, server, "ServerReady")["response"] == {"ready": True}
    meta = call(npm_dir, server, "ServerMetadata")["response"]
    assert meta["name"] == "infer" and meta["version"]
    assert call(npm_dir, server, "ModelReady", {"name": "digits"})["response"] == {"ready": True}
    assert call(npm_dir, server, "ModelReady", {"name": "digits", "version": "1"})["response"] == {"ready": True}
    model = call(npm_dir, server, "ModelMetadata", {"name": "digits"})["response"]
    assert model["name"] == "digits" and model["versions"] == ["1"] and model["platform"] == "onnx_onnxv1"
    assert [(t["name"], t["datatype"], t["shape"]) for t in model["inputs"]] == [("image", "FP32", ["-1", "1", "8", "8"])]
    assert [(t["name"], t["datatype"], t["shape"]) for t in model["outputs"]] == [("logits", "FP32", ["-1", "10"])]


def test_infer_with_typed_contents(npm_dir, server, samples, reference_logits):
    """fp32_contents in, raw_output_contents out: infer-run's logits for the same rows."""
    request = {"model_name": "digits", "id": "g-1",
               "inputs": [{"name": "image", "datatype": "FP32", "shape": [3, 1, 8, 8],
                           "contents": {"fp32_contents": samples[:3].ravel().tolist()}}]}
    response = call(npm_dir, server, "ModelInfer", request)["response"]
    assert response["model_name"] == "digits" and response["model_version"] == "1" and response["id"] == "g-1"
    got = logits_of(response, 3)
    np.testing.assert_allclose(got, reference_logits[:3], rtol=1e-5, atol=1e-5)
    assert got.argmax(axis=1).tolist() == DIGITS_PREDICTIONS[:3]


def test_infer_with_raw_input_contents(npm_dir, server, samples, reference_logits):
    """raw_input_contents (little-endian row-major bytes), version named, output requested."""
    request = {"model_name": "digits", "model_version": "1",
               "inputs": [{"name": "image", "datatype": "FP32", "shape": [8, 1, 8, 8]}],
               "outputs": [{"name": "logits"}],
               "raw_input_contents": [base64.b64encode(samples.astype("<f4").tobytes()).decode()]}
    got = logits_of(call(npm_dir, server, "ModelInfer", request)["response"], 8)
    np.testing.assert_allclose(got, reference_logits, rtol=1e-5, atol=1e-5)
    assert got.argmax(axis=1).tolist() == DIGITS_PREDICTIONS


@pytest.mark.parametrize("request_, code, fragment", [
    ({"model_name": "nope"}, NOT_FOUND, "unknown model 'nope'"),
    ({"model_name": "digits", "model_version": "7"}, NOT_FOUND, "has no version '7'"),
    ({"model_name": "digits", "inputs": [{"name": "image", "datatype": "FP64", "shape": [1, 1, 8, 8],
                                          "contents": {"fp64_contents": [0.0] * 64}}]},
     INVALID_ARGUMENT, "input 'image' is FP64 but model 'digits' expects FP32"),
    ({"model_name": "digits", "inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8],
                                          "contents": {"fp32_contents": [0.0] * 10}}]},
     INVALID_ARGUMENT, "contents.fp32_contents holds 10 values but the shape has 64 elements"),
    ({"model_name": "digits", "inputs": [{"name": "image", "datatype": "FP16", "shape": [1, 1, 8, 8]}]},
     INVALID_ARGUMENT, "send it in raw_input_contents"),
    ({"model_name": "digits", "inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8]}],
      "raw_input_contents": [base64.b64encode(b"\0" * 12).decode()]},
     INVALID_ARGUMENT, "raw_input_contents[0] has 12 bytes but FP32 of this shape needs 256"),
    ({"model_name": "digits", "inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8],
                                          "contents": {"fp32_contents": [0.0] * 64}}],
      "outputs": [{"name": "probs"}]},
     INVALID_ARGUMENT, "output 'probs' is not an output of model 'digits'"),
], ids=["unknown_model", "unknown_version", "wrong_datatype", "count_mismatch", "fp16_contents", "raw_size",
        "unknown_output"])
def test_errors_are_grpc_status_codes(npm_dir, server, request_, code, fragment):
    """Each refusal is a gRPC status with the code and the one-line message the REST error carries."""
    error = call(npm_dir, server, "ModelInfer", request_)["error"]
    assert error["code"] == code, error
    assert fragment in error["details"], error


def test_grpc_requests_are_counted(npm_dir, server, samples):
    """A gRPC inference shows in the same metrics as an HTTP one."""
    before = server.metrics().value("infer_requests_total", model="digits", version="1", outcome="success")
    request = {"model_name": "digits", "inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 1, 8, 8],
                                                   "contents": {"fp32_contents": samples[0].ravel().tolist()}}]}
    call(npm_dir, server, "ModelInfer", request)
    after = server.metrics().value("infer_requests_total", model="digits", version="1", outcome="success")
    assert after == before + 1
