"""The KServe v2 (Open Inference Protocol) REST endpoints of infer-serve, spoken by
Python's http.client: server and model metadata, health, and inference over JSON (flat and
nested data) and over the binary tensor data extension. Every answer is checked against an
independent reference: infer-run's logits for the same samples, PyTorch's logits, the known
predictions, or numpy for the small models written here."""
import json

import numpy as np
import pytest

from conftest import (DIGITS_PREDICTIONS, binary_body, binary_input, decode_outputs, digits_request,
                      json_input, serve, stop_cleanly, toy_expected, toy_feeds, toy_model,
                      write_deployment)

DIGITS_BATCHING = {"max_batch_size": 16, "preferred_batch_size": [8, 16], "max_queue_delay_us": 500}


@pytest.fixture(scope="module")
def server(infer_serve, tmp_path_factory):
    """digits, version 1, batching as in configs/serve_digits.yaml."""
    folder = tmp_path_factory.mktemp("protocol")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits", version=1,
                                            batching=DIGITS_BATCHING))
    yield s
    stop_cleanly(s)


@pytest.fixture(scope="module")
def toy(infer_serve, tmp_path_factory):
    """toy_model (three inputs of three datatypes, four outputs), batching off."""
    folder = tmp_path_factory.mktemp("protocol_toy")
    s = serve(infer_serve, write_deployment(folder / "toy.yaml", toy_model(folder / "toy.onnx"), name="toy"))
    yield s
    stop_cleanly(s)


def test_server_metadata(server):
    """GET /v2 names the server, its version and the binary_tensor_data extension."""
    r = server.get("/v2")
    assert r.status == 200, r
    assert r.header("Content-Type") == "application/json"
    doc = r.json()
    assert doc["name"] == "infer"
    assert isinstance(doc["version"], str) and doc["version"]
    assert "binary_tensor_data" in doc["extensions"]


def test_health(server):
    """Liveness and readiness are 200 with {"live": true} / {"ready": true} once serving;
    a query string does not change the route."""
    assert server.get("/v2/health/live").json() == {"live": True}
    r = server.get("/v2/health/ready")
    assert r.status == 200 and r.json() == {"ready": True}
    assert server.get("/v2/health/ready?verbose=1").json() == {"ready": True}


def test_model_metadata(server):
    """The model's metadata names its inputs and outputs with v2 datatypes and -1 for the
    symbolic batch dim, lists its versions, and is the same at /versions/1."""
    r = server.get("/v2/models/digits")
    assert r.status == 200, r
    doc = r.json()
    assert doc["name"] == "digits"
    assert doc["versions"] == ["1"]
    assert doc["inputs"] == [{"name": "image", "datatype": "FP32", "shape": [-1, 1, 8, 8]}]
    assert doc["outputs"] == [{"name": "logits", "datatype": "FP32", "shape": [-1, 10]}]
    assert isinstance(doc["platform"], str) and doc["platform"]
    assert server.get("/v2/models/digits/versions/1").json() == doc


def test_model_ready(server):
    """GET .../ready says the model (at any version path) is ready."""
    for path in ("/v2/models/digits/ready", "/v2/models/digits/versions/1/ready"):
        r = server.get(path)
        assert r.status == 200, (path, r)
        assert r.json() == {"name": "digits", "ready": True}


def test_infer_json_flat(server, samples, reference_logits, torch_logits):
    """Eight samples as one JSON request with flat data: the logits are infer-run's, close
    to PyTorch's, and their argmax is the known predictions; model name and version are
    in the response."""
    r = server.infer(digits_request(samples))
    assert r.header("Content-Type") == "application/json"
    assert r.header("Inference-Header-Content-Length") is None
    outputs, head = decode_outputs(r)
    assert head["model_name"] == "digits" and head["model_version"] == "1"
    assert [o["name"] for o in head["outputs"]] == ["logits"]
    assert head["outputs"][0]["datatype"] == "FP32" and head["outputs"][0]["shape"] == [8, 10]
    logits = outputs["logits"]
    assert_close_to_references(logits, reference_logits, torch_logits)


def assert_close_to_references(logits, reference_logits, torch_logits):
    np.testing.assert_allclose(logits, reference_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(logits, torch_logits, rtol=1e-4, atol=1e-4)
    assert logits.argmax(axis=1).tolist() == DIGITS_PREDICTIONS


def test_infer_json_nested(server, samples, reference_logits, torch_logits):
    """Nested JSON data ([[[[...]]]] like the array) means the same as flat data."""
    body = {"inputs": [json_input("image", samples, nested=True)]}
    assert isinstance(body["inputs"][0]["data"][0][0][0], list)
    outputs, _ = decode_outputs(server.infer(body))
    assert_close_to_references(outputs["logits"], reference_logits, torch_logits)


def test_infer_each_row_alone(server, samples, reference_logits):
    """One sample per request, at the versioned path too: each answer is that row's."""
    for i in range(len(samples)):
        r = server.infer(digits_request(samples[i:i + 1]), version=1 if i % 2 else None)
        outputs, head = decode_outputs(r)
        assert head["model_version"] == "1"
        np.testing.assert_allclose(outputs["logits"], reference_logits[i:i + 1], rtol=1e-5, atol=1e-5)


def test_id_is_echoed(server, samples):
    """The request's id comes back in the response; without one there is none."""
    _, head = decode_outputs(server.infer(digits_request(samples[:1], request_id="req-42 \u00e9\"x")))
    assert head["id"] == "req-42 \u00e9\"x"
    _, head = decode_outputs(server.infer(digits_request(samples[:1])))
    assert head.get("id", "") == ""


def test_binary_inputs_and_outputs(server, samples, reference_logits, torch_logits):
    """Binary tensor data both ways: the input's bytes after the JSON header
    (Inference-Header-Content-Length), binary_data_output: true; the response is the JSON
    header (its length in the same header) and the logits' raw little-endian bytes."""
    head_in, raw = binary_input("image", samples)
    body, headers = binary_body({"id": "b1", "inputs": [head_in], "parameters": {"binary_data_output": True}},
                                [raw])
    r = server.infer(body, headers=headers)
    assert r.status == 200, r
    assert r.header("Content-Type") == "application/octet-stream"
    n = int(r.header("Inference-Header-Content-Length"))
    head = json.loads(r.body[:n])
    assert head["id"] == "b1"
    assert head["outputs"] == [{"name": "logits", "datatype": "FP32", "shape": [8, 10],
                                "parameters": {"binary_data_size": 320}}]
    assert len(r.body) == n + 320
    logits = np.frombuffer(r.body[n:], dtype="<f4").reshape(8, 10)
    assert_close_to_references(logits, reference_logits, torch_logits)


def test_binary_input_json_output(server, samples, reference_logits):
    """Binary input without binary_data_output: the outputs come back as JSON data."""
    head_in, raw = binary_input("image", samples[2:5])
    body, headers = binary_body({"inputs": [head_in]}, [raw])
    r = server.infer(body, headers=headers)
    assert r.header("Inference-Header-Content-Length") is None
    outputs, head = decode_outputs(r)
    assert "data" in head["outputs"][0]
    np.testing.assert_allclose(outputs["logits"], reference_logits[2:5], rtol=1e-5, atol=1e-5)


def test_output_binary_data_overrides_request_default(server, samples, reference_logits):
    """A requested output's parameters.binary_data wins over the request's
    binary_data_output, in both directions, for JSON and binary requests alike."""
    want = reference_logits[:2]
    # JSON request, default JSON, the output asks for binary.
    r = server.infer(digits_request(samples[:2], outputs=[{"name": "logits", "parameters": {"binary_data": True}}]))
    assert r.header("Inference-Header-Content-Length") is not None
    outputs, head = decode_outputs(r)
    assert "binary_data_size" in head["outputs"][0]["parameters"]
    np.testing.assert_allclose(outputs["logits"], want, rtol=1e-5, atol=1e-5)
    # Binary request, default binary, the output asks for JSON.
    head_in, raw = binary_input("image", samples[:2])
    body, headers = binary_body({"inputs": [head_in], "parameters": {"binary_data_output": True},
                                 "outputs": [{"name": "logits", "parameters": {"binary_data": False}}]}, [raw])
    r = server.infer(body, headers=headers)
    assert r.header("Inference-Header-Content-Length") is None
    outputs, head = decode_outputs(r)
    assert head["outputs"][0]["data"]
    np.testing.assert_allclose(outputs["logits"], want, rtol=1e-5, atol=1e-5)
    # Requested output without parameters: the request's default (binary) applies.
    body, headers = binary_body({"inputs": [head_in], "parameters": {"binary_data_output": True},
                                 "outputs": [{"name": "logits"}]}, [raw])
    r = server.infer(body, headers=headers)
    assert r.header("Inference-Header-Content-Length") is not None
    np.testing.assert_allclose(decode_outputs(r)[0]["logits"], want, rtol=1e-5, atol=1e-5)


def test_json_and_binary_outputs_agree_exactly(server, samples):
    """The JSON numbers of an output are its float32 values written to round-trip: parsed
    back they equal the binary output's bytes bit for bit (same input, same batch, one
    thread per run)."""
    as_json = decode_outputs(server.infer(digits_request(samples)))[0]["logits"]
    as_binary = decode_outputs(server.infer(digits_request(samples, parameters={"binary_data_output": True})))[0]
    np.testing.assert_array_equal(as_json, as_binary["logits"])


def test_toy_metadata(toy):
    """A model with several inputs and outputs lists them in declaration order with their
    v2 datatypes (UINT8, FP16, BOOL); without batching there is no max_batch_size."""
    doc = toy.get("/v2/models/toy").json()
    assert doc["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 3]},
                             {"name": "k", "datatype": "UINT8", "shape": [-1, 3]},
                             {"name": "h", "datatype": "FP16", "shape": [-1, 2]}]
    assert doc["outputs"] == [{"name": "sum", "datatype": "FP32", "shape": [-1, 3]},
                              {"name": "sqrt", "datatype": "FP32", "shape": [-1, 3]},
                              {"name": "is_neg", "datatype": "BOOL", "shape": [-1, 3]},
                              {"name": "h32", "datatype": "FP32", "shape": [-1, 2]}]
    assert "max_batch_size" not in (doc.get("parameters") or {})


def test_requested_outputs_subset_in_order(toy):
    """Requested outputs: only those come back, in the order asked for; the JSON numbers
    of UINT8 and FP16 inputs are converted exactly; BOOL outputs are JSON booleans."""
    feeds = toy_feeds(rows=2, seed=1)
    feeds["x"] = np.abs(feeds["x"])  # no NaN in sqrt: every output can be JSON
    want = toy_expected(feeds)
    body = {"inputs": [json_input(n, a) for n, a in feeds.items()],
            "outputs": [{"name": "h32"}, {"name": "is_neg"}, {"name": "sum"}]}
    outputs, head = decode_outputs(toy.infer(body, model="toy"))
    assert [o["name"] for o in head["outputs"]] == ["h32", "is_neg", "sum"]
    assert [o["datatype"] for o in head["outputs"]] == ["FP32", "BOOL", "FP32"]
    assert all(isinstance(v, bool) for v in head["outputs"][1]["data"])
    np.testing.assert_array_equal(outputs["h32"], want["h32"])
    np.testing.assert_array_equal(outputs["is_neg"], want["is_neg"])
    np.testing.assert_allclose(outputs["sum"], want["sum"], rtol=1e-6)


def test_integer_json_numbers_feed_float_inputs(toy):
    """JSON integers are accepted for an FP32 input (1, 4, 9 -> sqrt 1, 2, 3)."""
    body = {"inputs": [{"name": "x", "shape": [1, 3], "datatype": "FP32", "data": [1, 4, 9]},
                       json_input("k", np.zeros((1, 3), np.uint8)),
                       json_input("h", np.zeros((1, 2), np.float16))],
            "outputs": [{"name": "sqrt"}]}
    outputs, _ = decode_outputs(toy.infer(body, model="toy"))
    np.testing.assert_array_equal(outputs["sqrt"], [[1, 2, 3]])


def test_every_input_binary_mixed_outputs(toy):
    """Three binary inputs of three datatypes, laid end to end in input order; two outputs
    binary and two JSON: the binary ones follow the header in the order of the outputs."""
    feeds = toy_feeds(rows=3, seed=2)
    want = toy_expected(feeds)
    heads, blobs = zip(*(binary_input(n, a) for n, a in feeds.items()))
    as_json = {"binary_data": False}
    outputs = [{"name": "sqrt"}, {"name": "sum", "parameters": as_json},
               {"name": "h32"}, {"name": "is_neg", "parameters": as_json}]
    body, headers = binary_body({"inputs": list(heads), "parameters": {"binary_data_output": True},
                                 "outputs": outputs}, blobs)
    r = toy.infer(body, model="toy", headers=headers)
    outputs, head = decode_outputs(r)
    assert [o["name"] for o in head["outputs"]] == ["sqrt", "sum", "h32", "is_neg"]
    assert ["data" in o for o in head["outputs"]] == [False, True, False, True]
    np.testing.assert_array_equal(np.isnan(outputs["sqrt"]), np.isnan(want["sqrt"]))
    np.testing.assert_allclose(outputs["sqrt"], want["sqrt"], rtol=1e-6)  # NaNs compare equal
    np.testing.assert_allclose(outputs["sum"], want["sum"], rtol=1e-6)
    np.testing.assert_array_equal(outputs["h32"], want["h32"])
    np.testing.assert_array_equal(outputs["is_neg"], want["is_neg"])


def test_nan_output_needs_binary(toy):
    """NaN has no JSON form: asked for as JSON, the answer is 400 naming the output and
    pointing to binary_data; asked for as binary, the NaN arrives."""
    feeds = {"x": np.array([[-1, 4, 0]], np.float32), "k": np.zeros((1, 3), np.uint8),
             "h": np.zeros((1, 2), np.float16)}
    body = {"inputs": [json_input(n, a) for n, a in feeds.items()], "outputs": [{"name": "sqrt"}]}
    r = toy.infer(body, model="toy")
    assert r.status == 400, r
    assert "'sqrt'" in r.error and "binary_data" in r.error
    body["outputs"] = [{"name": "sqrt", "parameters": {"binary_data": True}}]
    outputs, _ = decode_outputs(toy.infer(body, model="toy"))
    assert np.isnan(outputs["sqrt"][0, 0]) and outputs["sqrt"][0, 1:].tolist() == [2, 0]
