"""What infer-serve answers to requests it cannot serve: the HTTP status (400 for a bad
request, 404 for an unknown model, version or path, 405 with an Allow header for a wrong
method, 413 for a body over server.max_request_mb, 501 for what it does not implement) and
a JSON {"error": ...} body whose message names the field, input, output, model or limit at
fault. None of them disturbs the server: a good request afterwards, on the same
connection too, is answered correctly."""
import http.client
import json
import socket

import numpy as np
import pytest

from conftest import (binary_body, binary_input, decode_outputs, digits_request, json_input,
                      raw_request, read_raw_response, recv_until_closed, serve, stop_cleanly,
                      toy_feeds, toy_model, write_deployment)

MAX_BATCH = 4


@pytest.fixture(scope="module")
def server(infer_serve, tmp_path_factory):
    """digits with batching max 4 and a 1 MiB request limit."""
    folder = tmp_path_factory.mktemp("errors")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits",
                                            batching={"max_batch_size": MAX_BATCH},
                                            server={"max_request_mb": 1}))
    yield s
    stop_cleanly(s)


@pytest.fixture(scope="module")
def toy(infer_serve, tmp_path_factory):
    folder = tmp_path_factory.mktemp("errors_toy")
    s = serve(infer_serve, write_deployment(folder / "toy.yaml", toy_model(folder / "toy.onnx"), name="toy"))
    yield s
    stop_cleanly(s)


def image(dims=(1, 1, 8, 8), **changes):
    """A JSON image input of shape `dims` (zeros), with fields replaced or removed (None)."""
    entry = {"name": "image", "shape": list(dims), "datatype": "FP32", "data": [0.0] * int(np.prod(dims))}
    entry.update(changes)
    return {k: v for k, v in entry.items() if v is not None}


# (id, body, message fragments). Every one is a 400 on POST /v2/models/digits/infer.
BAD_BODIES = [
    ("malformed_json", b'{"inputs": [', ["not valid JSON"]),
    ("empty_body", b"", ["not valid JSON"]),
    ("not_an_object", b"[1, 2]", ["JSON object", "an array"]),
    ("missing_inputs", {"id": "x"}, ["'inputs'"]),
    ("inputs_not_array", {"inputs": {"image": 1}}, ["'inputs'", "array"]),
    ("input_not_object", {"inputs": [3]}, ["inputs[0]", "object"]),
    ("input_without_name", {"inputs": [image(name=None)]}, ["inputs[0]", "'name'"]),
    ("unknown_datatype", {"inputs": [image(datatype="FLOAT32")]}, ["input 'image'", "'FLOAT32'"]),
    ("wrong_datatype", {"inputs": [image(datatype="FP64")]}, ["input 'image'", "FP64", "FP32"]),
    ("wrong_datatype_int", {"inputs": [image(datatype="INT32", data=[0] * 64)]}, ["input 'image'", "INT32", "FP32"]),
    ("missing_shape", {"inputs": [image(shape=None)]}, ["input 'image'", "'shape'"]),
    ("negative_shape", {"inputs": [{"name": "image", "shape": [1, 1, 8, -8], "datatype": "FP32", "data": []}]},
     ["input 'image'", "'shape'", "-8"]),
    ("wrong_shape", {"inputs": [image(dims=(1, 1, 8, 7))]}, ["input 'image'", "[1,1,8,7]", "[batch,1,8,8]"]),
    ("wrong_rank", {"inputs": [image(dims=(64,))]}, ["input 'image'", "[64]"]),
    ("too_few_elements", {"inputs": [image(data=[0.0] * 63)]}, ["input 'image'", "64 elements", "63"]),
    ("too_many_elements", {"inputs": [image(data=[0.0] * 65)]}, ["input 'image'", "64 elements", "more"]),
    ("nested_wrong_count", {"inputs": [image(dims=(1, 1, 8, 8), data=[[0.0] * 8] * 7)]}, ["input 'image'", "56"]),
    ("string_element", {"inputs": [image(data=[0.0] * 5 + ["x"] + [0.0] * 58)]},
     ["input 'image'", "element 5", "a string", "FP32"]),
    ("bool_element", {"inputs": [image(data=[True] + [0.0] * 63)]}, ["input 'image'", "element 0", "a boolean"]),
    ("no_data", {"inputs": [image(data=None)]}, ["input 'image'", "'data'"]),
    ("unknown_input", {"inputs": [image(name="img")]}, ["'img'", "digits", "image"]),
    ("missing_input", {"inputs": []}, ["input 'image'", "missing"]),
    ("input_twice", {"inputs": [image(), image()]}, ["input 'image'", "twice"]),
    ("unknown_output", {"inputs": [image()], "outputs": [{"name": "probs"}]}, ["'probs'", "digits", "logits"]),
    ("output_twice", {"inputs": [image()], "outputs": [{"name": "logits"}, {"name": "logits"}]},
     ["'logits'", "twice"]),
    ("output_binary_not_bool", {"inputs": [image()], "outputs": [{"name": "logits", "parameters": {"binary_data": 1}}]},
     ["'logits'", "binary_data"]),
    ("binary_data_output_not_bool", {"inputs": [image()], "parameters": {"binary_data_output": "yes"}},
     ["binary_data_output"]),
    ("negative_timeout", {"inputs": [image()], "parameters": {"timeout": -5}}, ["timeout"]),
    ("fractional_timeout", {"inputs": [image()], "parameters": {"timeout": 1.5}}, ["timeout", "1.5"]),
    ("id_not_string", {"id": 7, "inputs": [image()]}, ["'id'", "string"]),
    ("batch_over_max", {"inputs": [image(dims=(MAX_BATCH + 1, 1, 8, 8))]},
     [f"{MAX_BATCH + 1} rows", "max_batch_size", str(MAX_BATCH)]),
    ("empty_batch", {"inputs": [image(dims=(0, 1, 8, 8), data=[])]}, ["batch", "0"]),
    ("binary_size_without_header", {"inputs": [image(data=None, parameters={"binary_data_size": 256})]},
     ["input 'image'", "Inference-Header-Content-Length"]),
]


@pytest.mark.parametrize("body, fragments", [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES])
def test_bad_request_body(server, body, fragments):
    """A body the server cannot serve is a 400 whose JSON error names what is wrong."""
    r = server.infer(body, headers={"Content-Type": "application/json"})
    assert r.status == 400, r
    assert r.header("Content-Type") == "application/json"
    for fragment in fragments:
        assert fragment in r.error, (fragment, r.error)


def binary_image(rows=1, raw_extra=b"", raw_cut=0, size=None, header_length_delta=0):
    """A binary-data digits request with its bytes adjusted; (body, headers)."""
    head, raw = binary_input("image", np.zeros((rows, 1, 8, 8), np.float32))
    if size is not None:
        head["parameters"]["binary_data_size"] = size
    body, headers = binary_body({"inputs": [head]}, [raw[:len(raw) - raw_cut] + raw_extra])
    headers["Inference-Header-Content-Length"] = str(int(headers["Inference-Header-Content-Length"])
                                                     + header_length_delta)
    return body, headers


def test_binary_data_errors(server):
    """The binary extension's framing is checked: a header length beyond the body or not
    a number, truncated data, trailing bytes no input claims, a binary_data_size that does
    not fit the shape, both data and binary_data_size: 400 each, naming the problem."""
    body, headers = binary_image()
    cases = [
        ("header_longer_than_body", body, {**headers, "Inference-Header-Content-Length": str(len(body) + 1)},
         ["Inference-Header-Content-Length", str(len(body) + 1), str(len(body))]),
        ("header_length_not_a_number", body, {**headers, "Inference-Header-Content-Length": "12abc"},
         ["Inference-Header-Content-Length", "12abc"]),
        ("truncated", *binary_image(raw_cut=4), ["input 'image'", "truncated", "256", "252"]),
        ("trailing_bytes", *binary_image(raw_extra=b"\0" * 4), ["4 bytes", "no input claims"]),
        ("size_not_shape", *binary_image(size=255), ["input 'image'", "binary_data_size", "255", "256"]),
        ("header_cuts_json", *binary_image(header_length_delta=-3), ["not valid JSON"]),
    ]
    head, raw = binary_input("image", np.zeros((1, 1, 8, 8), np.float32))
    head["data"] = [0.0] * 64
    both, both_headers = binary_body({"inputs": [head]}, [raw])
    cases.append(("data_and_binary", both, both_headers, ["input 'image'", "'data'", "binary_data_size"]))
    for name, body, headers, fragments in cases:
        r = server.infer(body, headers=headers)
        assert r.status == 400, (name, r)
        for fragment in fragments:
            assert fragment in r.error, (name, fragment, r.error)


def test_raw_binary_request_is_not_implemented(server):
    """Inference-Header-Content-Length: 0 (the extension's raw request, a body of bare
    input bytes) is refused with 501 and says so."""
    r = server.infer(b"\0" * 256, headers={"Inference-Header-Content-Length": "0"})
    assert r.status == 501, r
    assert "Inference-Header-Content-Length: 0" in r.error and "not supported" in r.error


def test_unimplemented_request_is_not_a_failed_run(server):
    """The 501 above is a refusal before any run: infer_requests_total must not count it
    as outcome="failed" ("the run failed"), which operators alert on."""
    before = server.metrics().value("infer_requests_total", model="digits", outcome="failed")
    r = server.infer(b"\0" * 256, headers={"Inference-Header-Content-Length": "0"})
    assert r.status == 501, r
    assert server.metrics().value("infer_requests_total", model="digits", outcome="failed") == before


def test_uint8_json_values_are_checked(toy):
    """JSON numbers for a UINT8 input must be integers in [0, 255]: 300, -1, 1.5 and true
    are refused (400, naming the input, the element and the datatype), not wrapped or
    truncated."""
    feeds = toy_feeds(rows=1)
    for bad, shown in ((300, "300"), (-1, "-1"), (1.5, "1.5"), (True, "a boolean")):
        k = json_input("k", feeds["k"])
        k["data"][2] = bad
        body = {"inputs": [json_input("x", feeds["x"]), k, json_input("h", feeds["h"])]}
        r = toy.infer(body, model="toy")
        assert r.status == 400, (bad, r)
        for fragment in ("input 'k'", "element 2", shown, "UINT8"):
            assert fragment in r.error, (bad, fragment, r.error)
    # The edges are fine.
    k = json_input("k", feeds["k"])
    k["data"][:2] = [0, 255]
    outputs, _ = decode_outputs(toy.infer({"inputs": [json_input("x", feeds["x"]), k, json_input("h", feeds["h"])],
                                           "outputs": [{"name": "h32"}]}, model="toy"))
    assert outputs["h32"].shape == (1, 2)


def test_input_batches_must_agree(toy):
    """Without batching inputs may differ in dim 0 only as the model allows; a request
    whose inputs have a wrong shape for one input is a 400 naming that input."""
    feeds = toy_feeds(rows=2)
    body = {"inputs": [json_input("x", feeds["x"]), json_input("k", feeds["k"]),
                       json_input("h", np.zeros((2, 3), np.float16))]}
    r = toy.infer(body, model="toy")
    assert r.status == 400, r
    assert "input 'h'" in r.error and "[2,3]" in r.error


def test_unknown_model_and_version(server):
    """Unknown models and versions are 404 naming them (and the versions there are),
    for metadata, readiness and inference alike."""
    for path in ("/v2/models/nope", "/v2/models/nope/ready", "/v2/models/nope/versions/1"):
        r = server.get(path)
        assert r.status == 404, (path, r)
        assert "'nope'" in r.error
    r = server.infer(digits_request(np.zeros((1, 1, 8, 8), np.float32)), model="nope")
    assert r.status == 404 and "'nope'" in r.error
    for version in ("7", "abc", "01x"):
        for method, path in (("GET", f"/v2/models/digits/versions/{version}"),
                             ("GET", f"/v2/models/digits/versions/{version}/ready"),
                             ("POST", f"/v2/models/digits/versions/{version}/infer")):
            r = server.request(method, path, body=digits_request(np.zeros((1, 1, 8, 8), np.float32)))
            assert r.status == 404, (path, r)
            assert f"'{version}'" in r.error and "versions: 1" in r.error, r.error


@pytest.mark.parametrize("method, path, allow", [
    ("GET", "/v2/models/digits/infer", "POST"),
    ("PUT", "/v2/models/digits/versions/1/infer", "POST"),
    ("POST", "/v2/health/live", "GET"),
    ("POST", "/v2/health/ready", "GET"),
    ("POST", "/v2", "GET"),
    ("DELETE", "/v2/models/digits", "GET"),
    ("POST", "/v2/models/digits/ready", "GET"),
    ("POST", "/metrics", "GET"),
])
def test_wrong_method(server, method, path, allow):
    """A known path with the wrong method is 405 with an Allow header naming the right
    one, and the message names the method and the path."""
    r = server.request(method, path, body=b"{}" if method in ("POST", "PUT") else None)
    assert r.status == 405, r
    assert r.header("Allow") == allow
    assert method in r.error and path in r.error


@pytest.mark.parametrize("path", ["/", "/v1/models/digits", "/v2/models", "/v2/health", "/v2/health/started",
                                  "/v2/models/digits/stats", "/v2/models/digits/versions/1/infer/more",
                                  "/v2/models/digits/versions", "/metricsx"])
def test_unknown_path(server, path):
    """Paths that are no endpoint are 404, the message naming the path."""
    r = server.get(path)
    assert r.status == 404, r
    assert path.rstrip("/") in r.error or path == "/"


def test_body_over_the_limit(server):
    """A body one byte over server.max_request_mb (1 MiB) is 413 naming the limit; the
    server closes that connection (the rest of the body is never read). The client sends
    everything first, then reads."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        try:
            sock.sendall(raw_request("POST", "/v2/models/digits/infer", b"\0" * ((1 << 20) + 1)))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the answer may already be on its way
        data = recv_until_closed(sock, 30)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), data[:300]
    message = json.loads(body)["error"]
    assert "1048576 bytes" in message and "max_request_mb" in message


def test_body_over_the_limit_with_http_client(server):
    """Python's http.client, which sends the headers and then the whole body before it
    reads, also gets the 413 for a 16 MiB body (more than loopback's socket buffers hold):
    the server must not reset the connection while the client is still sending (RFC 9112
    section 9.6, "lingering close"), or the client fails with a broken pipe instead of
    reading the answer."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("POST", "/v2/models/digits/infer", body=b"\0" * (16 << 20))
        r = conn.getresponse()
        assert r.status == 413
        assert "max_request_mb" in json.loads(r.read())["error"]
    finally:
        conn.close()


def test_body_at_the_limit_is_read(server):
    """A body of exactly 1 MiB is read (and then refused as a request, not as too large)."""
    body = b'{"inputs": []}' + b" " * ((1 << 20) - 14)
    r = server.infer(body)
    assert r.status == 400, r
    assert "input 'image'" in r.error


def test_malformed_http_is_400_and_closed(server):
    """A request line that is not HTTP is answered 400 and the connection closed."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        data = recv_until_closed(sock, 30)
    assert data.startswith(b"HTTP/1.1 400"), data
    assert b"malformed HTTP request" in data


def test_errors_keep_the_connection(server, samples, reference_logits):
    """A 400, 404 or 405 leaves a keep-alive connection open: the next request on it is
    served correctly (pipelined behind, too)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("POST", "/v2/models/digits/infer", body=b"{")
        r = conn.getresponse()
        assert r.status == 400 and r.getheader("Connection", "").lower() != "close"
        r.read()
        local = conn.sock.getsockname()
        for method, path, status in (("GET", "/v2/models/nope", 404), ("GET", "/v2/models/digits/infer", 405)):
            conn.request(method, path)
            r = conn.getresponse()
            r.read()
            assert r.status == status
        conn.request("POST", "/v2/models/digits/infer", body=json.dumps(digits_request(samples[:2])))
        r = conn.getresponse()
        assert r.status == 200
        logits = np.array(json.loads(r.read())["outputs"][0]["data"], np.float32).reshape(2, 10)
        np.testing.assert_allclose(logits, reference_logits[:2], rtol=1e-5, atol=1e-5)
        assert conn.sock.getsockname() == local, "the server closed the connection after an error"
    finally:
        conn.close()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        good = json.dumps(digits_request(samples[3:4])).encode()
        sock.sendall(raw_request("POST", "/v2/models/digits/infer", b"[]")
                     + raw_request("POST", "/v2/models/digits/infer", good))
        reader = sock.makefile("rb")
        first, second = read_raw_response(reader), read_raw_response(reader)
    assert first.status == 400
    assert second.status == 200, second
    np.testing.assert_allclose(np.array(second.json()["outputs"][0]["data"], np.float32),
                               reference_logits[3], rtol=1e-5, atol=1e-5)


def test_server_unharmed_after_bad_requests(server, samples, reference_logits, torch_logits):
    """Runs last: after every refusal above, a good request is answered correctly, nothing
    is left queued or in flight, and no refusal was counted as a failed run."""
    outputs, _ = decode_outputs(server.infer(digits_request(samples[:MAX_BATCH])))
    np.testing.assert_allclose(outputs["logits"], reference_logits[:MAX_BATCH], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outputs["logits"], torch_logits[:MAX_BATCH], rtol=1e-4, atol=1e-4)
    m = server.metrics()
    assert m.value("infer_queue_depth", model="digits") == 0
    assert m.value("infer_inflight_requests", model="digits") == 0
    assert m.value("infer_requests_total", model="digits", outcome="rejected") == 0
    assert m.value("infer_requests_total", model="digits", outcome="bad_request") >= len(BAD_BODIES)
    assert server.get("/v2/health/ready").status == 200
