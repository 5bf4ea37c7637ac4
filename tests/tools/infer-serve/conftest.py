"""Fixtures and helpers for the tests of the built infer-serve, driven over loopback.

ctest runs them with Debian's Python (python3-pytest, python3-numpy, python3-onnx):
INFER_SERVE names the server binary and INFER_RUN the infer-run binary of the same build.
The clients are ones nobody here wrote: Python's http.client, raw sockets, promtool and
the Prometheus server. Each test module starts the servers it needs, one per deployment
file shared by its tests (module-scoped fixtures), on a free port (--http-port 0), and
stops them at teardown with SIGTERM, checking that they exit 0. Deployment files and
small models (written with onnx.helper) go into pytest's temp folders, with absolute
paths.
"""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DIGITS_MODEL = os.path.join(REPO, "models", "digits_cnn.onnx")
DIGITS_SAMPLES = os.path.join(REPO, "models", "digits_samples.npy")
DIGITS_TORCH_LOGITS = os.path.join(REPO, "models", "digits_samples_expected_logits.npy")
DIGITS_PREDICTIONS = [0, 7, 0, 3, 8, 5, 8, 4]

READY_LINE = re.compile(r"infer-serve: serving (\d+) models? on http://([0-9.]+):(\d+)")
START_TIMEOUT_S = 30
REQUEST_TIMEOUT_S = 30

# v2 datatype -> numpy dtype (little-endian, as the binary tensor data extension sends).
NUMPY_OF = {
    "BOOL": np.dtype(np.bool_), "UINT8": np.dtype("<u1"), "UINT16": np.dtype("<u2"),
    "UINT32": np.dtype("<u4"), "UINT64": np.dtype("<u8"), "INT8": np.dtype("<i1"),
    "INT16": np.dtype("<i2"), "INT32": np.dtype("<i4"), "INT64": np.dtype("<i8"),
    "FP16": np.dtype("<f2"), "FP32": np.dtype("<f4"), "FP64": np.dtype("<f8"),
}
V2_OF = {dtype: name for name, dtype in NUMPY_OF.items()}


# ---------------------------------------------------------------------------------------
# Binaries, the digits model and its independent references


def _binary(variable):
    path = os.environ.get(variable)
    if not path or not os.path.isfile(path):
        pytest.fail(f"{variable} must name the built binary (got {path!r}); run these through ctest")
    return path


@pytest.fixture(scope="session")
def infer_serve():
    return _binary("INFER_SERVE")


@pytest.fixture(scope="session")
def infer_run():
    return _binary("INFER_RUN")


@pytest.fixture(scope="session")
def samples():
    """The 8 digits samples, float32 [8,1,8,8]."""
    return np.load(DIGITS_SAMPLES)


@pytest.fixture(scope="session")
def torch_logits():
    """PyTorch's logits for the samples, [8,10]."""
    return np.load(DIGITS_TORCH_LOGITS)


@pytest.fixture(scope="session")
def reference_logits(infer_run, samples, tmp_path_factory):
    """infer-run's logits for the 8 samples, [8,10]: what the server must answer."""
    folder = tmp_path_factory.mktemp("infer_run_reference")
    done = subprocess.run([infer_run, DIGITS_MODEL, "--input", f"image={DIGITS_SAMPLES}",
                           "--output-dir", str(folder)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    logits = np.load(folder / "logits.npy")
    assert logits.shape == (8, 10) and logits.dtype == np.float32
    return logits


def assert_logits(got, want):
    """Logits from the server against infer-run's for the same rows: same runtime, same
    kernels, so only the batch's blocking may differ."""
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------
# Deployment files and models


def _yaml_scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(str(value))  # a JSON string is a YAML string


def _yaml_lines(mapping, indent):
    lines = []
    for key, value in mapping.items():
        if isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines += _yaml_lines(value, indent + "  ")
        elif isinstance(value, (list, tuple)):
            lines.append(f"{indent}{key}: [{', '.join(_yaml_scalar(v) for v in value)}]")
        else:
            lines.append(f"{indent}{key}: {_yaml_scalar(value)}")
    return lines


def write_deployment(path, model=DIGITS_MODEL, **keys):
    """Writes a deployment file: `model` (absolute path), backends [cpu], threads 1 and
    the serving keys given (nested dicts for server: and batching:). Returns its path."""
    mapping = {"model": str(model), "backends": ["cpu"], "threads": 1}
    mapping.update(keys)
    with open(path, "w") as f:
        f.write("\n".join(_yaml_lines(mapping, "")) + "\n")
    return str(path)


def save_model(path, nodes, inputs, outputs, initializers=(), opset=17):
    """Writes a checked ONNX model made with onnx.helper; returns its path."""
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def value(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


FLOAT = TensorProto.FLOAT


def row_sum_model(path):
    """x FP32 [batch, n] -> y FP32 [batch] = x.sum(axis 1): rows of any width n."""
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    return save_model(path, [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
                      [value("x", FLOAT, ["batch", "n"])], [value("y", FLOAT, ["batch"])], [axes])


def toy_model(path):
    """Inputs x FP32 [batch,3], k UINT8 [batch,3], h FP16 [batch,2]; outputs
    sum = x + k, sqrt = sqrt(x) (NaN below 0), is_neg = x < 0 (BOOL), h32 = h as FP32."""
    zero = helper.make_tensor("zero", FLOAT, [], [0.0])
    return save_model(path, [
        helper.make_node("Cast", ["k"], ["kf"], to=FLOAT),
        helper.make_node("Add", ["x", "kf"], ["sum"]),
        helper.make_node("Sqrt", ["x"], ["sqrt"]),
        helper.make_node("Less", ["x", "zero"], ["is_neg"]),
        helper.make_node("Cast", ["h"], ["h32"], to=FLOAT),
    ], [value("x", FLOAT, ["batch", 3]), value("k", TensorProto.UINT8, ["batch", 3]),
        value("h", TensorProto.FLOAT16, ["batch", 2])],
        [value("sum", FLOAT, ["batch", 3]), value("sqrt", FLOAT, ["batch", 3]),
         value("is_neg", TensorProto.BOOL, ["batch", 3]), value("h32", FLOAT, ["batch", 2])], [zero])


def toy_feeds(rows=2, seed=0):
    """Inputs for toy_model: x has negatives and non-negatives, h exact in FP16."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, (rows, 3)).astype(np.float32)
    x[:, 0] = np.abs(x[:, 0])
    k = rng.integers(0, 256, (rows, 3)).astype(np.uint8)
    h = (rng.integers(-64, 64, (rows, 2)) / 8).astype(np.float16)
    return {"x": x, "k": k, "h": h}


def toy_expected(feeds):
    x = feeds["x"]
    with np.errstate(invalid="ignore"):
        return {"sum": x + feeds["k"].astype(np.float32), "sqrt": np.sqrt(x), "is_neg": x < 0,
                "h32": feeds["h"].astype(np.float32)}


def fixed_shape_model(path):
    """x FP32 [2, 3] (no symbolic dim) -> y = -x."""
    return save_model(path, [helper.make_node("Neg", ["x"], ["y"])],
                      [value("x", FLOAT, [2, 3])], [value("y", FLOAT, [2, 3])])


# ---------------------------------------------------------------------------------------
# The server process


class Response:
    """An HTTP response: status, headers (case-insensitive), body bytes."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.body = body

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        return json.loads(self.body)

    @property
    def error(self):
        """The message of an {"error": ...} body (the only key there)."""
        doc = self.json()
        assert set(doc) == {"error"}, doc
        return doc["error"]

    def __repr__(self):
        return f"<{self.status} {self.body[:300]!r}>"


def http_request(port, method, path, body=None, headers=None, timeout=REQUEST_TIMEOUT_S, conn=None):
    """One request with http.client (on `conn` when given, kept open); a Response."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return Response(r.status, r.headers, r.read())
    finally:
        if own:
            conn.close()


_help_text = {}
_started = []  # every Server, for reap_servers


@pytest.fixture(autouse=True)
def reap_servers():
    """Kills the servers a test started and left running (an assertion failed before its
    own stop), so that no server outlives its test. Module fixtures stop their own."""
    first = len(_started)
    yield
    for server in _started[first:]:
        server.kill()


def other_port_flags(binary):
    """--grpc-port 0 when this build serves gRPC too (else nothing), so that servers
    started side by side never contend for its default port."""
    if binary not in _help_text:
        _help_text[binary] = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60).stdout
    return ["--grpc-port", "0"] if "--grpc-port" in _help_text[binary] else []


def free_port_flags(binary):
    """--http-port 0 and other_port_flags: for run_cli."""
    return ["--http-port", "0"] + other_port_flags(binary)


class Server:
    """A running infer-serve: started with `args` (plus free ports unless the args name an
    HTTP port), ready once it prints its address."""

    def __init__(self, binary, *args, must_start=True):
        """With must_start=False a process that exits before it is ready is no failure:
        then `port` is None and `exit_code` holds its status."""
        args = [str(a) for a in args]
        self.exit_code = None
        self.args = [binary, *args] + ([] if "--http-port" in args else ["--http-port", "0"])
        if "--grpc-port" not in args:
            self.args += other_port_flags(binary)
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self._lines = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._eof = threading.Event()
        self.port = None
        _started.append(self)
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._ready.is_set() and not self._eof.is_set() and time.monotonic() < deadline:
            self._ready.wait(0.05)
        if not self._ready.is_set() and not must_start and self._eof.is_set():
            self.exit_code = self.proc.wait(START_TIMEOUT_S)
            return
        if not self._ready.is_set():
            rc = self.proc.poll()
            if rc is None:
                self.proc.kill()
                self.proc.wait()
            self._eof.wait(5)
            pytest.fail(f"infer-serve did not start (exit {rc}; {' '.join(self.args)}):\n{self.stderr}")

    def _read_stderr(self):
        for line in self.proc.stderr:
            with self._lock:
                self._lines.append(line)
            m = READY_LINE.search(line)
            if m and not self._ready.is_set():
                self.models = int(m.group(1))
                self.host = m.group(2)
                self.port = int(m.group(3))
                self._ready.set()
        self._eof.set()

    @property
    def stderr(self):
        with self._lock:
            return "".join(self._lines)

    def request(self, method, path, body=None, headers=None, timeout=REQUEST_TIMEOUT_S):
        return http_request(self.port, method, path, body, headers, timeout)

    def get(self, path):
        return self.request("GET", path)

    def post(self, path, body, headers=None):
        return self.request("POST", path, body, headers)

    def infer(self, body, model="digits", version=None, headers=None):
        path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
        return self.post(path, body, headers)

    def metrics(self):
        r = self.get("/metrics")
        assert r.status == 200, r
        return Metrics(r.body.decode())

    def wait_for_metric(self, name, want, timeout=REQUEST_TIMEOUT_S, **labels):
        """Polls /metrics until sample `name{labels}` equals `want`."""
        wait_for(lambda: self.metrics().value(name, **labels) == want, timeout,
                 f"{name}{labels} == {want}")

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=REQUEST_TIMEOUT_S):
        """The exit status; kills the process if it has not exited after `timeout`."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"infer-serve did not exit within {timeout} s:\n{self.stderr}")
        self._eof.wait(5)
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, sig=signal.SIGTERM, timeout=REQUEST_TIMEOUT_S):
        """SIGTERM (or `sig`), then the exit status (kill after `timeout`)."""
        if self.proc.poll() is None:
            self.send_signal(sig)
        return self.wait(timeout)


def serve(binary, config, *extra, must_start=True):
    """Starts infer-serve on `config` (a deployment file) on a free port."""
    return Server(binary, "--config", config, *extra, must_start=must_start)


def stop_cleanly(server):
    """Fixture teardown: SIGTERM, and the server must exit 0 saying it stopped."""
    rc = server.stop()
    assert rc == 0, server.stderr
    assert "infer-serve: stopped" in server.stderr, server.stderr


def run_cli(binary, *args, timeout=60):
    """Runs infer-serve to completion (bad command lines, load failures)."""
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------------------------------
# KServe v2 request and response bodies


def json_input(name, array, datatype=None, nested=False):
    """A v2 input with JSON data: flat (row-major) or nested like the array."""
    array = np.asarray(array)
    data = array.tolist() if nested else array.reshape(-1).tolist()
    return {"name": name, "shape": list(array.shape), "datatype": datatype or V2_OF[array.dtype], "data": data}


def binary_input(name, array, datatype=None):
    """(v2 input with parameters.binary_data_size, its bytes)."""
    array = np.ascontiguousarray(array)
    raw = array.astype(array.dtype.newbyteorder("<")).tobytes()
    return ({"name": name, "shape": list(array.shape), "datatype": datatype or V2_OF[array.dtype],
             "parameters": {"binary_data_size": len(raw)}}, raw)


def binary_body(header, blobs=()):
    """(body, headers) of a binary tensor data request: the JSON header, then the blobs."""
    head = json.dumps(header).encode()
    body = head + b"".join(blobs)
    return body, {"Inference-Header-Content-Length": str(len(head)),
                  "Content-Type": "application/octet-stream"}


def digits_request(rows, request_id=None, **extra):
    body = {"inputs": [json_input("image", rows)], **extra}
    if request_id is not None:
        body["id"] = request_id
    return body


def decode_outputs(response):
    """{name: numpy array} of a 200 inference response, JSON or binary outputs, checked
    against the shape and datatype it declares; also returns the JSON header."""
    assert response.status == 200, response
    header_length = response.header("Inference-Header-Content-Length")
    if header_length is None:
        head, binary = json.loads(response.body), b""
    else:
        n = int(header_length)
        head, binary = json.loads(response.body[:n]), response.body[n:]
    outputs, offset = {}, 0
    for out in head["outputs"]:
        dtype = NUMPY_OF[out["datatype"]]
        count = int(np.prod(out["shape"], dtype=np.int64))
        size = (out.get("parameters") or {}).get("binary_data_size")
        if size is not None:
            assert "data" not in out, out
            assert size == count * dtype.itemsize, out
            array = np.frombuffer(binary[offset:offset + size], dtype=dtype)
            assert array.size == count, (out, len(binary), offset)
            offset += size
        else:
            array = np.array(out["data"], dtype=dtype)
            assert array.size == count, out
        outputs[out["name"]] = array.reshape(out["shape"])
    assert offset == len(binary), f"{len(binary) - offset} binary bytes that no output claims"
    return outputs, head


# ---------------------------------------------------------------------------------------
# The Prometheus text format


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


class Metrics:
    """The samples of a /metrics page: value(name, **labels) is the one sample whose
    labels include `labels`."""

    def __init__(self, text):
        self.text = text
        self.samples = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            assert m, f"not a sample line: {line!r}"
            labels = dict(LABEL.findall(m.group(2) or ""))
            self.samples.append((m.group(1), labels, float(m.group(3))))

    def find(self, name, **labels):
        return [(l, v) for n, l, v in self.samples
                if n == name and all(l.get(k) == str(w) for k, w in labels.items())]

    def value(self, name, **labels):
        found = self.find(name, **labels)
        assert len(found) == 1, f"{len(found)} samples of {name}{labels}"
        return found[0][1]

    def buckets(self, name, **labels):
        """{le: cumulative count} of histogram `name`."""
        return {l["le"]: v for l, v in self.find(name + "_bucket", **labels)}


# ---------------------------------------------------------------------------------------
# Concurrency and waiting


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


class Background:
    """Runs `fn` on a thread; result() joins it and returns its value or raises."""

    def __init__(self, fn, *args):
        self._value = self._error = None
        self._thread = threading.Thread(target=self._run, args=(fn, *args), daemon=True)
        self._thread.start()

    def _run(self, fn, *args):
        try:
            self._value = fn(*args)
        except BaseException as e:  # re-raised in result()
            self._error = e

    def result(self, timeout=REQUEST_TIMEOUT_S * 2):
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "a background request did not finish"
        if self._error is not None:
            raise self._error
        return self._value


def concurrently(calls):
    """Runs the callables at once (released together by a barrier); their results in order."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait(REQUEST_TIMEOUT_S)
        return call()

    tasks = [Background(run, call) for call in calls]
    return [t.result() for t in tasks]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------
# Raw HTTP/1.1 over a socket (pipelining, slow clients)


def raw_request(method, path, body=b"", headers=None):
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_raw_response(reader):
    """One response from a socket's makefile('rb'): a Response; None at end of stream."""
    status_line = reader.readline()
    if not status_line:
        return None
    version, status = status_line.split(b" ", 2)[:2]
    assert version == b"HTTP/1.1", status_line
    headers = {}
    while True:
        line = reader.readline()
        assert line, "the connection closed inside the headers"
        if line == b"\r\n":
            break
        k, v = line.decode().split(":", 1)
        headers[k.strip().lower()] = v.strip()
    body = reader.read(int(headers.get("content-length", "0")))
    return Response(int(status), headers, body)


def recv_until_closed(sock, timeout):
    """Reads until the peer closes (b"" or a reset); returns what came. Fails when the
    connection is still open after `timeout` seconds."""
    sock.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        except socket.timeout:
            pytest.fail(f"the server kept the connection open for more than {timeout} s")
        if not chunk:
            return data
        data += chunk
