"""infer-serve as a process: SIGTERM drains (readiness turns 503, new requests get 503,
queued ones finish with correct answers, exit 0), the drain timeout cuts the queue short
with 503s, SIGINT stops it alike; bad command lines exit 2 and load failures exit 1 with
a message naming the file, key or address; the shipped deployment file serves; a model
repository serves every file in it, versions included."""
import http.client
import os
import signal
import socket

import numpy as np
import pytest

from conftest import (DIGITS_MODEL, REPO, Background, decode_outputs, digits_request, free_port_flags, http_request,
                      other_port_flags, run_cli, serve, stop_cleanly, Server, wait_for, write_deployment)

QUEUED = {"max_batch_size": 16, "preferred_batch_size": [16], "max_queue_delay_us": 2000000}


def queue_three(server, samples):
    """Three one-row requests left waiting in the queue (rows 0, 1, 2)."""
    waiting = [Background(server.infer, digits_request(samples[i:i + 1], request_id=str(i))) for i in range(3)]
    server.wait_for_metric("infer_queue_depth", 3, model="digits")
    return waiting


def test_sigterm_drains_queued_requests(infer_serve, tmp_path, samples, reference_logits):
    """SIGTERM with three requests queued (a 2 s queue delay): readiness turns 503 at once
    ("stopping") while liveness stays 200, model readiness is 503 with ready false, a new
    inference gets 503; the three queued requests still get their correct answers, then
    the process exits 0 saying it stopped, with no drain cut short."""
    s = serve(infer_serve, write_deployment(tmp_path / "digits.yaml", name="digits", batching=QUEUED))
    waiting = queue_three(s, samples)
    s.send_signal(signal.SIGTERM)
    wait_for(lambda: s.get("/v2/health/ready").status == 503, 10, "readiness to turn 503 after SIGTERM")
    r = s.get("/v2/health/ready")
    assert "stopping" in r.error
    assert s.get("/v2/health/live").json() == {"live": True}
    r = s.get("/v2/models/digits/ready")
    assert r.status == 503 and r.json() == {"name": "digits", "ready": False}
    r = s.infer(digits_request(samples[3:4]))
    assert r.status == 503, r
    assert "stopping" in r.error
    assert s.metrics().value("infer_requests_total", model="digits", outcome="rejected") == 1
    for i, w in enumerate(waiting):
        outputs, head = decode_outputs(w.result())
        assert head["id"] == str(i)
        np.testing.assert_allclose(outputs["logits"], reference_logits[i:i + 1], rtol=1e-5, atol=1e-5)
    assert s.wait() == 0, s.stderr
    assert "SIGTERM" in s.stderr and "infer-serve: stopped" in s.stderr
    assert "cut queued requests short" not in s.stderr, s.stderr


def test_second_signal_stops_at_once(infer_serve, tmp_path, samples):
    """A second SIGTERM during the drain ends the process at once with status 1 instead of
    waiting out the queue delay (30 s here)."""
    s = serve(infer_serve, write_deployment(tmp_path / "digits.yaml", name="digits",
                                            batching={**QUEUED, "max_queue_delay_us": 30000000}))
    queue_three(s, samples)
    s.send_signal(signal.SIGTERM)
    wait_for(lambda: s.get("/v2/health/ready").status == 503, 10, "readiness to turn 503 after SIGTERM")
    s.send_signal(signal.SIGTERM)
    assert s.wait(timeout=10) == 1, s.stderr
    assert "second signal" in s.stderr, s.stderr


def test_drain_timeout_cuts_the_queue_short(infer_serve, tmp_path, samples):
    """--drain-timeout 0 (the command line over the file's 30 s default): the queued
    requests are answered 503 (shutting down) rather than dropped, the process exits 0 and
    says the drain timeout cut them short."""
    s = serve(infer_serve, write_deployment(tmp_path / "digits.yaml", name="digits", batching=QUEUED),
              "--drain-timeout", "0")
    waiting = queue_three(s, samples)
    s.send_signal(signal.SIGTERM)
    for w in waiting:
        r = w.result()
        assert r.status == 503, r
        assert "shutting down" in r.error
    assert s.wait() == 0, s.stderr
    assert "cut queued requests short" in s.stderr, s.stderr


def test_sigint_stops_cleanly(infer_serve, tmp_path, samples, reference_logits):
    """SIGINT, with a client's idle keep-alive connection still open: exit 0, and stderr
    says SIGINT and stopped."""
    s = serve(infer_serve, write_deployment(tmp_path / "digits.yaml", name="digits"))
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    try:
        r = http_request(s.port, "POST", "/v2/models/digits/infer", digits_request(samples[:1]), conn=conn)
        np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[:1], rtol=1e-5, atol=1e-5)
        assert s.stop(signal.SIGINT) == 0, s.stderr
    finally:
        conn.close()
    assert "SIGINT" in s.stderr and "infer-serve: stopped" in s.stderr


@pytest.mark.parametrize("args, fragment", [
    ([], "give exactly one of --config FILE and --model-repository DIR"),
    (["--no-such-flag"], "--no-such-flag"),
    (["--config", "x.yaml", "--http-port", "70000"], "--http-port"),
    (["--config", "x.yaml", "--threads", "0"], "--threads"),
    (["--config", "x.yaml", "--drain-timeout", "-1"], "--drain-timeout"),
    (["--config"], "--config"),
], ids=["nothing", "unknown_flag", "port_out_of_range", "zero_threads", "negative_drain", "config_without_file"])
def test_bad_command_line_exits_2(infer_serve, args, fragment):
    """A command line the server cannot use: exit 2 with a message naming what is wrong."""
    done = run_cli(infer_serve, *args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert fragment in done.stderr, done.stderr


def test_config_and_repository_together_exits_2(infer_serve, tmp_path):
    """--config and --model-repository together are a bad command line: exit 2 (the help's
    "2 for a bad command line"), saying to give exactly one."""
    config = write_deployment(tmp_path / "digits.yaml", name="digits")
    done = run_cli(infer_serve, "--config", config, "--model-repository", tmp_path)
    assert "exactly one" in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)


def test_help_and_version(infer_serve):
    """--help lists the endpoints and exit statuses; --version names the server. Both exit 0."""
    done = run_cli(infer_serve, "--help")
    assert done.returncode == 0
    for text in ("--config", "--model-repository", "--http-port", "/v2/models/NAME", "/metrics", "SIGTERM"):
        assert text in done.stdout, text
    done = run_cli(infer_serve, "--version")
    assert done.returncode == 0 and done.stdout.startswith("infer-serve ")


def test_missing_config_file_exits_1(infer_serve, tmp_path):
    """A deployment file that does not exist: exit 1 naming it."""
    missing = tmp_path / "nowhere.yaml"
    done = run_cli(infer_serve, "--config", missing, *free_port_flags(infer_serve))
    assert done.returncode == 1, done.stderr
    assert str(missing) in done.stderr


def test_bad_deployment_files_exit_1(infer_serve, tmp_path):
    """Deployment files that cannot be served exit 1 naming the file and what is wrong: an
    unknown key (with its line), a bad serving value, a model file that does not exist, a
    model file that is not ONNX."""
    bad_key = tmp_path / "bad_key.yaml"
    bad_key.write_text(f"model: {DIGITS_MODEL}\nname: digits\nbatching:\n  max_batch: 4\n")
    bad_value = tmp_path / "bad_value.yaml"
    bad_value.write_text(f"model: {DIGITS_MODEL}\nserver:\n  idle_timeout_s: 0\n")
    no_model = write_deployment(tmp_path / "no_model.yaml", tmp_path / "absent.onnx", name="absent")
    (tmp_path / "garbage.onnx").write_bytes(b"this is not a protobuf")
    garbage = write_deployment(tmp_path / "garbage.yaml", tmp_path / "garbage.onnx", name="garbage")
    for config, fragments in ((bad_key, ["bad_key.yaml:4", "max_batch"]),
                              (bad_value, ["bad_value.yaml:3", "idle_timeout_s"]),
                              (no_model, ["absent.onnx"]),
                              (garbage, ["garbage"])):
        done = run_cli(infer_serve, "--config", config, *free_port_flags(infer_serve))
        assert done.returncode == 1, (config, done.returncode, done.stderr)
        for fragment in fragments:
            assert fragment in done.stderr, (fragment, done.stderr)


def test_port_in_use_exits_1(infer_serve, tmp_path):
    """An HTTP port another process listens on: exit 1 naming the address."""
    config = write_deployment(tmp_path / "digits.yaml", name="digits")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        done = run_cli(infer_serve, "--config", config, "--http-port", port, *other_port_flags(infer_serve))
    assert done.returncode == 1, done.stderr
    assert f"127.0.0.1:{port}" in done.stderr


def test_host_that_is_not_an_address_exits_1(infer_serve, tmp_path):
    """--host that is not an IP address: exit 1 naming it."""
    config = write_deployment(tmp_path / "digits.yaml", name="digits")
    done = run_cli(infer_serve, "--config", config, "--host", "not-an-address", *free_port_flags(infer_serve))
    assert done.returncode == 1, done.stderr
    assert "not-an-address" in done.stderr


def test_shipped_deployment_file(infer_serve, samples, reference_logits):
    """configs/serve_digits.yaml (relative model path, batching, server block) serves
    "digits" v1 with --http-port 0 overriding its port."""
    s = serve(infer_serve, os.path.join(REPO, "configs", "serve_digits.yaml"))
    try:
        doc = s.get("/v2/models/digits").json()
        assert doc["versions"] == ["1"] and doc["parameters"]["max_batch_size"] == 16
        outputs, head = decode_outputs(s.infer(digits_request(samples)))
        assert head["model_version"] == "1"
        np.testing.assert_allclose(outputs["logits"], reference_logits, rtol=1e-5, atol=1e-5)
    finally:
        stop_cleanly(s)


def test_model_repository(infer_serve, tmp_path, samples, reference_logits):
    """--model-repository DIR serves every *.yaml there: "a" (named by its file), and
    "digits" at versions 1 and 2 (by `version:`); other files and folders are ignored. The
    plain path is the highest version; each version answers as itself, and /metrics
    counts each apart."""
    repo = tmp_path / "repo"
    repo.mkdir()
    write_deployment(repo / "a.yaml")
    write_deployment(repo / "digits_v1.yaml", name="digits", version=1)
    write_deployment(repo / "digits_v2.yaml", name="digits", version=2, batching={"max_batch_size": 4})
    (repo / "notes.txt").write_text("not a deployment file\n")
    (repo / "old.yaml.bak").write_text("model: nothing\n")
    (repo / "sub").mkdir()
    write_deployment(repo / "sub" / "c.yaml", name="c")
    s = Server(infer_serve, "--model-repository", repo)
    try:
        assert s.models == 3, s.stderr
        assert s.get("/v2/models/a").json()["versions"] == ["1"]
        assert s.get("/v2/models/c").status == 404
        assert s.get("/v2/models/digits").json()["versions"] == ["1", "2"]
        assert s.get("/v2/models/digits/versions/1").json().get("parameters") is None
        assert s.get("/v2/models/digits/versions/2").json()["parameters"] == {"max_batch_size": 4}
        assert s.get("/v2/models/digits/versions/2/ready").json() == {"name": "digits", "ready": True}
        r = s.get("/v2/models/digits/versions/3")
        assert r.status == 404 and "versions: 1, 2" in r.error
        for model, version, want in (("a", None, "1"), ("digits", None, "2"), ("digits", 1, "1"), ("digits", 2, "2")):
            outputs, head = decode_outputs(s.infer(digits_request(samples[:4]), model=model, version=version))
            assert (head["model_name"], head["model_version"]) == (model, want)
            np.testing.assert_allclose(outputs["logits"], reference_logits[:4], rtol=1e-5, atol=1e-5)
        m = s.metrics()
        assert m.value("infer_requests_total", model="digits", version="2", outcome="success") == 2
        assert m.value("infer_requests_total", model="digits", version="1", outcome="success") == 1
        assert m.value("infer_requests_total", model="a", version="1", outcome="success") == 1
    finally:
        stop_cleanly(s)


def test_repository_refusals_exit_1(infer_serve, tmp_path):
    """A repository file with a server: block, two files serving the same model version,
    an empty folder and a folder that does not exist: exit 1 naming the file(s) or folder."""
    with_server = tmp_path / "with_server"
    with_server.mkdir()
    write_deployment(with_server / "a.yaml")
    write_deployment(with_server / "b.yaml", server={"http_port": 9000})
    twice = tmp_path / "twice"
    twice.mkdir()
    write_deployment(twice / "one.yaml", name="digits", version=3)
    write_deployment(twice / "two.yaml", name="digits", version=3)
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder, fragments in ((with_server, [str(with_server / "b.yaml"), "server"]),
                              (twice, ["one.yaml", "two.yaml", "'digits' version 3"]),
                              (empty, [str(empty), "no deployment files"]),
                              (tmp_path / "absent", [str(tmp_path / "absent"), "not a folder"])):
        done = run_cli(infer_serve, "--model-repository", folder, *free_port_flags(infer_serve))
        assert done.returncode == 1, (folder, done.returncode, done.stderr)
        for fragment in fragments:
            assert fragment in done.stderr, (fragment, done.stderr)


def test_repository_file_name_must_be_a_model_name(infer_serve, tmp_path, samples):
    """A repository file without `name:` is served under its file name, which must then
    follow the rule for `name:` (letters, digits, '_', '-', '.'): a file "my model.yaml"
    must either be refused at load (exit 1 naming it) or be reachable, at
    /v2/models/my%20model. It must not be served under a name no URL can reach."""
    repo = tmp_path / "repo"
    repo.mkdir()
    write_deployment(repo / "my model.yaml")
    s = Server(infer_serve, "--model-repository", repo, must_start=False)
    if s.port is None:
        assert s.exit_code == 1 and "my model.yaml" in s.stderr, s.stderr
        return
    try:
        r = s.get("/v2/models/my%20model")
        assert r.status == 200, f"the model 'my model' is served but unreachable: {r}"
    finally:
        stop_cleanly(s)
