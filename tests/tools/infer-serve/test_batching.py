"""infer-serve's dynamic batcher seen from clients: concurrent requests are joined into
one run and every client still gets exactly its own rows; requests whose shapes differ
beyond dim 0 never share a run; models that cannot be batched are refused at load;
max_queue_size and timeouts answer 503; without a batching block every request runs
alone. The infer_batch_size histogram of /metrics shows how the runs were formed."""
import json
import socket

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import (FLOAT, Background, binary_body, binary_input, concurrently, decode_outputs, digits_request,
                      fixed_shape_model, free_port_flags, json_input, raw_request, row_sum_model, run_cli,
                      save_model, serve, stop_cleanly, value, write_deployment)


def batch_runs(server, model):
    """(runs, rows, runs of 1 row) so far, from the infer_batch_size histogram."""
    m = server.metrics()
    return (m.value("infer_batch_size_count", model=model), m.value("infer_batch_size_sum", model=model),
            m.buckets("infer_batch_size", model=model)["1"])


def delta(after, before):
    return tuple(a - b for a, b in zip(after, before))


@pytest.fixture(scope="module")
def batched(infer_serve, tmp_path_factory):
    """digits, max 16 rows, preferred [8, 16], 1 s queue delay: eight rows run at once."""
    folder = tmp_path_factory.mktemp("batching")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits", batching={
        "max_batch_size": 16, "preferred_batch_size": [8, 16], "max_queue_delay_us": 1000000}))
    yield s
    stop_cleanly(s)


def one_row(server, samples, i):
    """Row i as a request with id i: JSON both ways for even i, binary both ways for odd i."""
    if i % 2 == 0:
        return server.infer(digits_request(samples[i:i + 1], request_id=str(i)))
    head, raw = binary_input("image", samples[i:i + 1])
    body, headers = binary_body({"id": str(i), "inputs": [head], "parameters": {"binary_data_output": True}}, [raw])
    return server.infer(body, headers=headers)


def test_concurrent_single_rows_share_a_run(batched, samples, reference_logits):
    """Eight concurrent one-row requests, half JSON and half binary tensor data: each
    answer is its own sample's logits, and they ran joined: the histogram gained 8 rows in
    fewer than 8 runs, at least one of more than one row."""
    before = batch_runs(batched, "digits")
    responses = concurrently([lambda i=i: one_row(batched, samples, i) for i in range(8)])
    for i, r in enumerate(responses):
        outputs, head = decode_outputs(r)
        assert head["id"] == str(i)
        np.testing.assert_allclose(outputs["logits"], reference_logits[i:i + 1], rtol=1e-5, atol=1e-5)
    runs, rows, single = delta(batch_runs(batched, "digits"), before)
    assert rows == 8
    assert single < runs, f"{runs} runs, all of one row: nothing was batched"


def test_concurrent_multi_row_requests_get_their_rows(batched, samples, reference_logits):
    """Concurrent requests of 1, 2, 3 and 2 rows (8 in all): each answer has the request's
    row count and its own rows' logits, whatever order they were joined in."""
    slices = [(0, 1), (1, 3), (3, 6), (6, 8)]
    before = batch_runs(batched, "digits")
    responses = concurrently([lambda a=a, b=b: batched.infer(digits_request(samples[a:b])) for a, b in slices])
    for (a, b), r in zip(slices, responses):
        logits = decode_outputs(r)[0]["logits"]
        assert logits.shape == (b - a, 10)
        np.testing.assert_allclose(logits, reference_logits[a:b], rtol=1e-5, atol=1e-5)
    runs, rows, single = delta(batch_runs(batched, "digits"), before)
    assert rows == 8 and runs < 4


def test_more_rows_than_a_batch(batched, samples, reference_logits):
    """Twenty concurrent one-row requests (more than max_batch_size 16) all come back
    right: the batcher cuts them into several runs, none over 16 rows."""
    before = batch_runs(batched, "digits")
    responses = concurrently([lambda i=i: batched.infer(digits_request(samples[i % 8:i % 8 + 1]))
                              for i in range(20)])
    for i, r in enumerate(responses):
        np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[i % 8:i % 8 + 1],
                                   rtol=1e-5, atol=1e-5)
    runs, rows, _ = delta(batch_runs(batched, "digits"), before)
    assert rows == 20 and runs >= 2
    buckets = batched.metrics().buckets("infer_batch_size", model="digits")
    assert buckets["16"] == buckets["+Inf"], "a run had more rows than max_batch_size"


def test_fewer_rows_than_preferred_run_after_the_delay(batched, samples, reference_logits):
    """Three concurrent rows never reach a preferred size (8, 16): they still run, once
    the oldest has waited max_queue_delay, and come back right."""
    responses = concurrently([lambda i=i: batched.infer(digits_request(samples[i:i + 1])) for i in (2, 4, 6)])
    for i, r in zip((2, 4, 6), responses):
        np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[i:i + 1], rtol=1e-5, atol=1e-5)


def test_requests_of_different_widths_never_mix(infer_serve, tmp_path):
    """A model with input [batch, n] (n symbolic; output = each row's sum): concurrent
    requests with n = 3 and n = 5, of 1 to 3 rows, each answered with numpy's row sums of
    its own data; runs only ever join requests of one width."""
    model = row_sum_model(tmp_path / "row_sum.onnx")
    s = serve(infer_serve, write_deployment(tmp_path / "row_sum.yaml", model, name="row_sum", batching={
        "max_batch_size": 16, "preferred_batch_size": [16], "max_queue_delay_us": 300000}))
    try:
        rng = np.random.default_rng(7)
        requests = [rng.uniform(-10, 10, (1 + i % 3, 3 if i % 2 else 5)).astype(np.float32) for i in range(10)]
        responses = concurrently([lambda x=x: s.infer({"inputs": [json_input("x", x)]}, model="row_sum")
                                  for x in requests])
        for x, r in zip(requests, responses):
            y = decode_outputs(r)[0]["y"]
            assert y.shape == (x.shape[0],)
            np.testing.assert_allclose(y, x.sum(axis=1), rtol=1e-5, atol=1e-5)
        m = s.metrics()
        assert m.value("infer_batch_size_sum", model="row_sum") == sum(x.shape[0] for x in requests)
    finally:
        stop_cleanly(s)


def test_model_without_batch_dim_refuses_batching(infer_serve, tmp_path):
    """A model whose input has no symbolic dim 0 ([2,3]) with batching.max_batch_size > 0:
    the server exits 1 at load naming the input and its shape. Without batching it serves
    the model."""
    model = fixed_shape_model(tmp_path / "fixed.onnx")
    config = write_deployment(tmp_path / "fixed.yaml", model, name="fixed", batching={"max_batch_size": 4})
    done = run_cli(infer_serve, "--config", config, *free_port_flags(infer_serve))
    assert done.returncode == 1, done.stderr
    assert "input 'x'" in done.stderr and "[2,3]" in done.stderr and "max_batch_size" in done.stderr
    assert "fixed.yaml" in done.stderr
    s = serve(infer_serve, write_deployment(tmp_path / "fixed_off.yaml", model, name="fixed"))
    try:
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        outputs, _ = decode_outputs(s.infer({"inputs": [json_input("x", x)]}, model="fixed"))
        np.testing.assert_array_equal(outputs["y"], -x)
    finally:
        stop_cleanly(s)


def test_output_without_batch_dim_refuses_batching(infer_serve, tmp_path):
    """An output with a fixed dim 0 (a sum over the batch, [1,3]) cannot be split back to
    the requests: with batching the server exits 1 naming the output."""
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [0])
    model = save_model(tmp_path / "batch_sum.onnx", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1)],
                       [value("x", FLOAT, ["batch", 3])], [value("y", FLOAT, [1, 3])], [axes])
    config = write_deployment(tmp_path / "batch_sum.yaml", model, name="batch_sum", batching={"max_batch_size": 4})
    done = run_cli(infer_serve, "--config", config, *free_port_flags(infer_serve))
    assert done.returncode == 1, done.stderr
    assert "output 'y'" in done.stderr and "[1,3]" in done.stderr


def test_output_dim0_that_is_not_the_batch(infer_serve, tmp_path):
    """A model whose output's dim 0 is symbolic but another symbol than the inputs' batch
    (x [batch, n] -> Transpose -> y [n, batch]) cannot be split by rows. With batching on,
    the server must either refuse it at load (exit 1 naming the output) or answer each
    request correctly (y = x.T) or with an error, never with rows of other requests' data.
    Two concurrent [1,2] requests make a [2,2] batch whose transposed output has 2 rows, the
    batch's row count."""
    model = save_model(tmp_path / "transpose.onnx", [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
                       [value("x", FLOAT, ["batch", "n"])], [value("y", FLOAT, ["n", "batch"])])
    config = write_deployment(tmp_path / "transpose.yaml", model, name="transpose", batching={
        "max_batch_size": 2, "preferred_batch_size": [2], "max_queue_delay_us": 2000000})
    s = serve(infer_serve, config, must_start=False)
    if s.port is None:
        assert s.exit_code == 1 and "output 'y'" in s.stderr, s.stderr
        return
    try:
        xs = [np.array([[1, 2]], np.float32), np.array([[3, 4]], np.float32)]
        responses = concurrently([lambda x=x: s.infer({"inputs": [json_input("x", x)]}, model="transpose")
                                  for x in xs])
        for x, r in zip(xs, responses):
            if r.status == 200:
                y = decode_outputs(r)[0]["y"]
                assert y.shape == (2, 1) and np.array_equal(y, x.T), (
                    f"request {x.tolist()} got {y.tolist()} (shape {list(y.shape)}); want {x.T.tolist()}")
    finally:
        stop_cleanly(s)


def test_two_instances(infer_serve, tmp_path, samples, reference_logits):
    """instances: 2 (two sessions, a batch on each): sixteen concurrent requests of one or
    two rows, each answered with its own rows."""
    s = serve(infer_serve, write_deployment(tmp_path / "digits.yaml", name="digits", instances=2,
                                            batching={"max_batch_size": 4, "preferred_batch_size": [4]}))
    try:
        assert "2 instances" in s.stderr, s.stderr
        slices = [(i % 7, i % 7 + 1 + i % 2) for i in range(16)]
        responses = concurrently([lambda a=a, b=b: s.infer(digits_request(samples[a:b])) for a, b in slices])
        for (a, b), r in zip(slices, responses):
            np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[a:b], rtol=1e-5, atol=1e-5)
        assert s.metrics().value("infer_batch_size_sum", model="digits") == sum(b - a for a, b in slices)
    finally:
        stop_cleanly(s)


@pytest.fixture(scope="module")
def queue(infer_serve, tmp_path_factory):
    """digits, one queued request at most, preferred [16], 1 s queue delay: a lone request
    waits 1 s in the queue."""
    folder = tmp_path_factory.mktemp("queue")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits", batching={
        "max_batch_size": 16, "preferred_batch_size": [16], "max_queue_delay_us": 1000000, "max_queue_size": 1}))
    yield s
    stop_cleanly(s)


def test_queue_full(queue, samples, reference_logits):
    """While one request waits in a queue of size 1, a second gets 503 saying the queue is
    full (naming max_queue_size); the first is then answered correctly. Both are counted."""
    m = queue.metrics()
    rejected = m.value("infer_requests_total", model="digits", outcome="rejected")
    success = m.value("infer_requests_total", model="digits", outcome="success")
    waiting = Background(queue.infer, digits_request(samples[5:6]))
    queue.wait_for_metric("infer_queue_depth", 1, model="digits")
    assert queue.metrics().value("infer_inflight_requests", model="digits") == 1
    r = queue.infer(digits_request(samples[6:7]))
    assert r.status == 503, r
    assert "queue is full" in r.error and "max_queue_size 1" in r.error and "digits" in r.error
    np.testing.assert_allclose(decode_outputs(waiting.result())[0]["logits"], reference_logits[5:6],
                               rtol=1e-5, atol=1e-5)
    m = queue.metrics()
    assert m.value("infer_requests_total", model="digits", outcome="rejected") == rejected + 1
    assert m.value("infer_requests_total", model="digits", outcome="success") == success + 1
    assert m.value("infer_queue_depth", model="digits") == 0
    assert m.value("infer_inflight_requests", model="digits") == 0


def test_request_timeout(queue, samples, reference_logits):
    """parameters.timeout (1000 us) shorter than the queue delay (1 s): 503 saying the
    request timed out in the queue; the next request is served."""
    r = queue.infer(digits_request(samples[:1], parameters={"timeout": 1000}))
    assert r.status == 503, r
    assert "timed out" in r.error
    r = queue.infer(digits_request(samples[1:2], parameters={"timeout": 30000000}))
    np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[1:2], rtol=1e-5, atol=1e-5)


def test_client_gone_while_queued(queue, samples, reference_logits):
    """A client that closes its connection while its request waits in the queue: the
    request still leaves the queue and flight (its answer has nowhere to go), and the
    next client is served."""
    body = json.dumps(digits_request(samples[:1])).encode()
    with socket.create_connection(("127.0.0.1", queue.port), timeout=30) as sock:
        sock.sendall(raw_request("POST", "/v2/models/digits/infer", body))
        queue.wait_for_metric("infer_queue_depth", 1, model="digits")
    queue.wait_for_metric("infer_inflight_requests", 0, model="digits")
    r = queue.infer(digits_request(samples[2:3]))
    np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[2:3], rtol=1e-5, atol=1e-5)


def test_default_timeout_from_the_deployment_file(infer_serve, tmp_path, samples):
    """batching.timeout_us (200 ms) under a 3 s queue delay: a lone request gets 503 timed
    out; its own longer parameters.timeout cannot lengthen it."""
    s = serve(infer_serve, write_deployment(tmp_path / "digits.yaml", name="digits", batching={
        "max_batch_size": 4, "preferred_batch_size": [4], "max_queue_delay_us": 3000000, "timeout_us": 200000}))
    try:
        for params in ({}, {"parameters": {"timeout": 60000000}}):
            r = s.infer(digits_request(samples[:1], **params))
            assert r.status == 503, r
            assert "timed out" in r.error
        assert s.metrics().value("infer_requests_total", model="digits", outcome="rejected") == 2
    finally:
        stop_cleanly(s)


def test_batching_off(infer_serve, tmp_path, samples, reference_logits):
    """No batching block: every request runs alone (the histogram counts one row per run,
    one run per request), requests of any size are accepted, and the metadata has no
    max_batch_size."""
    s = serve(infer_serve, write_deployment(tmp_path / "digits.yaml", name="digits"))
    try:
        assert "max_batch_size" not in (s.get("/v2/models/digits").json().get("parameters") or {})
        responses = concurrently([lambda i=i: s.infer(digits_request(samples[i:i + 1])) for i in range(6)])
        for i, r in enumerate(responses):
            np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[i:i + 1],
                                       rtol=1e-5, atol=1e-5)
        big = np.concatenate([samples] * 3)
        np.testing.assert_allclose(decode_outputs(s.infer(digits_request(big)))[0]["logits"],
                                   np.concatenate([reference_logits] * 3), rtol=1e-5, atol=1e-5)
        runs, _, single = batch_runs(s, "digits")
        assert runs == 7 and single == 7
    finally:
        stop_cleanly(s)
