"""infer-serve's HTTP/1.1 transport as real clients use it: keep-alive, pipelining
(answers in request order), HTTP/1.0 and Connection: close, chunked request bodies, many
connections at once, and server.idle_timeout_s closing a client that stops sending
while everyone else is served."""
import http.client
import json
import socket
import time

import numpy as np
import pytest

from conftest import (Background, concurrently, decode_outputs, digits_request, http_request, raw_request,
                      read_raw_response, recv_until_closed, serve, stop_cleanly, write_deployment)

IDLE_TIMEOUT_S = 1


@pytest.fixture(scope="module")
def server(infer_serve, tmp_path_factory):
    """digits, batching off, the default idle timeout (60 s)."""
    folder = tmp_path_factory.mktemp("http")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits"))
    yield s
    stop_cleanly(s)


@pytest.fixture(scope="module")
def impatient(infer_serve, tmp_path_factory):
    """digits, batching off, connections closed after 1 s of silence."""
    folder = tmp_path_factory.mktemp("http_impatient")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits",
                                            server={"idle_timeout_s": IDLE_TIMEOUT_S}))
    yield s
    stop_cleanly(s)


def logits_of(response):
    return decode_outputs(response)[0]["logits"]


def test_keep_alive(server, samples, reference_logits):
    """Several requests of every kind on one http.client connection: all answered, the
    connection (its local port) never changes and no answer says Connection: close."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.connect()
        local = conn.sock.getsockname()
        for i in range(8):
            r = http_request(server.port, "POST", "/v2/models/digits/infer", digits_request(samples[i:i + 1]),
                             conn=conn)
            np.testing.assert_allclose(logits_of(r), reference_logits[i:i + 1], rtol=1e-5, atol=1e-5)
            assert (r.header("Connection") or "").lower() != "close"
            for path in ("/v2/health/ready", "/v2/models/digits", "/metrics"):
                assert http_request(server.port, "GET", path, conn=conn).status == 200
            assert conn.sock is not None and conn.sock.getsockname() == local
    finally:
        conn.close()


def test_pipelining(server, samples, reference_logits):
    """Four requests sent in one sendall on a raw socket (GET, POST, POST, GET): four
    answers in request order, each inference with its own rows."""
    bodies = [json.dumps(digits_request(samples[i:i + 2])).encode() for i in (0, 5)]
    data = (raw_request("GET", "/v2/health/live") + raw_request("POST", "/v2/models/digits/infer", bodies[0])
            + raw_request("POST", "/v2/models/digits/infer", bodies[1]) + raw_request("GET", "/v2/models/digits"))
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(data)
        reader = sock.makefile("rb")
        answers = [read_raw_response(reader) for _ in range(4)]
    assert [a.status for a in answers] == [200] * 4, answers
    assert answers[0].json() == {"live": True}
    for answer, first in zip(answers[1:3], (0, 5)):
        logits = np.array(answer.json()["outputs"][0]["data"], np.float32).reshape(2, 10)
        np.testing.assert_allclose(logits, reference_logits[first:first + 2], rtol=1e-5, atol=1e-5)
    assert answers[3].json()["name"] == "digits"


def test_http10_and_connection_close(server):
    """An HTTP/1.0 request without keep-alive, and an HTTP/1.1 one with Connection: close,
    are answered and then the server closes the connection."""
    for request in (b"GET /v2/health/ready HTTP/1.0\r\n\r\n",
                    b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(request)
            data = recv_until_closed(sock, 30)
        assert data.startswith(b"HTTP/1.1 200"), data
        assert data.endswith(b'{"ready":true}'), data


def test_chunked_request_body(server, samples, reference_logits):
    """A body sent with Transfer-Encoding: chunked (http.client, encode_chunked) is read
    whole."""
    body = json.dumps(digits_request(samples[6:8])).encode()
    pieces = [body[i:i + 100] for i in range(0, len(body), 100)]
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("POST", "/v2/models/digits/infer", body=iter(pieces), encode_chunked=True,
                     headers={"Transfer-Encoding": "chunked", "Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 200
        logits = np.array(json.loads(r.read())["outputs"][0]["data"], np.float32).reshape(2, 10)
        np.testing.assert_allclose(logits, reference_logits[6:8], rtol=1e-5, atol=1e-5)
    finally:
        conn.close()


def test_many_connections_at_once(server, samples, reference_logits):
    """Sixteen clients, each on its own keep-alive connection, five inferences each, all at
    once: every answer is that client's rows."""
    def client(c):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        try:
            for j in range(5):
                i = (c + j) % 8
                r = http_request(server.port, "POST", "/v2/models/digits/infer",
                                 digits_request(samples[i:i + 1], request_id=f"{c}-{j}"), conn=conn)
                outputs, head = decode_outputs(r)
                assert head["id"] == f"{c}-{j}"
                np.testing.assert_allclose(outputs["logits"], reference_logits[i:i + 1], rtol=1e-5, atol=1e-5)
        finally:
            conn.close()
        return True

    assert all(concurrently([lambda c=c: client(c) for c in range(16)]))


def test_slow_client_is_closed_others_served(impatient, samples, reference_logits):
    """A client that sends half a request header and then nothing is disconnected after
    server.idle_timeout_s (1 s) without an answer, while other clients are served as
    usual meanwhile."""
    with socket.create_connection(("127.0.0.1", impatient.port), timeout=30) as slow:
        slow.sendall(b"POST /v2/models/digits/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        closed = Background(recv_until_closed, slow, 20)
        for i in range(8):
            r = impatient.infer(digits_request(samples[i:i + 1]))
            np.testing.assert_allclose(logits_of(r), reference_logits[i:i + 1], rtol=1e-5, atol=1e-5)
        assert closed.result() == b"", "the server answered a request it never fully received"


def test_idle_keep_alive_connection_is_closed(impatient):
    """After an answer, a keep-alive connection left silent is closed by the server once
    the idle timeout passes; a fresh connection is served."""
    with socket.create_connection(("127.0.0.1", impatient.port), timeout=30) as sock:
        sock.sendall(raw_request("GET", "/v2/health/live"))
        reader = sock.makefile("rb")
        assert read_raw_response(reader).status == 200
        assert reader.read() == b""  # blocks until the server closes (the socket's timeout: 30 s)
    assert impatient.get("/v2/health/live").status == 200


def test_trickling_client_is_not_idle(impatient, samples, reference_logits):
    """server.idle_timeout_s closes a connection *silent* that long (configs/README.md): a
    client that sends its request in pieces 0.25 s apart, never silent for 1 s but taking
    about 2 s in all, must be served."""
    body = json.dumps(digits_request(samples[:1])).encode()
    data = raw_request("POST", "/v2/models/digits/infer", body)
    pieces = [data[i * len(data) // 8:(i + 1) * len(data) // 8] for i in range(8)]
    with socket.create_connection(("127.0.0.1", impatient.port), timeout=30) as sock:
        try:
            for piece in pieces:
                sock.sendall(piece)
                time.sleep(0.25)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed it: no answer below
        try:
            answer = read_raw_response(sock.makefile("rb"))
        except ConnectionResetError:
            answer = None
    assert answer is not None, "the server closed a connection that was never silent for idle_timeout_s"
    assert answer.status == 200, answer
    np.testing.assert_allclose(np.array(answer.json()["outputs"][0]["data"], np.float32),
                               reference_logits[0], rtol=1e-5, atol=1e-5)


def test_head_request(server):
    """HEAD, which every general-purpose server must support (RFC 9110 section 9.1), on
    /v2/health/live: 200 with the GET's headers and no content (RFC 9112 section 6.3), so
    that the GET pipelined behind it on the same connection is read intact."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(raw_request("HEAD", "/v2/health/live") + raw_request("GET", "/v2/health/ready"))
        reader = sock.makefile("rb")
        head_status = reader.readline()
        while reader.readline() not in (b"\r\n", b""):
            pass  # a HEAD answer ends with its headers, whatever Content-Length says
        next_line = reader.readline()
    assert next_line.startswith(b"HTTP/1.1 200"), (
        f"HEAD answered {head_status!r}; the pipelined GET's answer starts {next_line[:80]!r}")
    assert head_status.startswith(b"HTTP/1.1 200"), head_status


def test_expect_100_continue(impatient, samples, reference_logits):
    """A client that sends Expect: 100-continue (curl does for bodies over 1 MiB) waits for
    "100 Continue" or a final answer before sending the body (RFC 9110 section 10.1.1: the
    server must send one of them at once). Here it sends only the headers: the server
    must answer them, not wait silently until its idle timeout closes the connection; then
    the body is sent and the inference answered."""
    body = json.dumps(digits_request(samples[:1])).encode()
    with socket.create_connection(("127.0.0.1", impatient.port), timeout=30) as sock:
        sock.sendall(raw_request("POST", "/v2/models/digits/infer", body, {"Expect": "100-continue"})[:-len(body)])
        reader = sock.makefile("rb")
        interim = reader.readline()
        assert interim.startswith(b"HTTP/1.1 100"), f"no 100 Continue, got {interim!r}"
        assert reader.readline() == b"\r\n"
        sock.sendall(body)
        answer = read_raw_response(reader)
    assert answer.status == 200, answer
    np.testing.assert_allclose(np.array(answer.json()["outputs"][0]["data"], np.float32),
                               reference_logits[0], rtol=1e-5, atol=1e-5)
