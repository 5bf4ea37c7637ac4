"""GET /metrics of infer-serve in the Prometheus text format: Debian's promtool finds
nothing to lint; the counters and histograms count exactly the requests this module made;
and the real Prometheus server scrapes the page and reads back the success count."""
import json
import os
import subprocess
import urllib.parse
import urllib.request

import numpy as np
import pytest

from conftest import Metrics, decode_outputs, digits_request, free_port, serve, stop_cleanly, wait_for, write_deployment

PROMTOOL = "/usr/bin/promtool"
PROMETHEUS = "/usr/bin/prometheus"
ROWS = (1, 2, 3)  # one successful request of each size


@pytest.fixture(scope="module")
def server(infer_serve, tmp_path_factory):
    """A fresh digits server (batching max 8, no delay), so that its counts are this module's."""
    folder = tmp_path_factory.mktemp("metrics")
    s = serve(infer_serve, write_deployment(folder / "digits.yaml", name="digits", batching={"max_batch_size": 8}))
    yield s
    stop_cleanly(s)


@pytest.fixture(scope="module")
def traffic(server, samples, reference_logits):
    """Sends, one after another, 3 good requests (1, 2 and 3 rows), 2 bad ones (not JSON;
    a wrong shape) and one to an unknown model, counted under no model. Returns the page."""
    first = 0
    for rows in ROWS:
        r = server.infer(digits_request(samples[first:first + rows]))
        np.testing.assert_allclose(decode_outputs(r)[0]["logits"], reference_logits[first:first + rows],
                                   rtol=1e-5, atol=1e-5)
        first += rows
    assert server.infer(b"{not json").status == 400
    assert server.infer(digits_request(np.zeros((1, 1, 4, 16), np.float32))).status == 400
    assert server.infer(digits_request(samples[:1]), model="unknown").status == 404
    r = server.get("/metrics")
    assert r.status == 200, r
    return r


def test_content_type_and_layout(traffic):
    """Text format 0.0.4: its Content-Type, a final newline, HELP and TYPE before each
    family's samples, every sample in one uninterrupted group per name."""
    assert traffic.header("Content-Type").startswith("text/plain; version=0.0.4")
    text = traffic.body.decode()
    assert text.endswith("\n")
    typed, seen_families, current = {}, [], None
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name not in typed, f"two TYPE lines for {name}"
            typed[name] = kind
        if line.startswith("#"):
            continue
        name = line.split("{")[0].split(" ")[0]
        family = next((f for f in typed if name == f or (typed[f] == "histogram" and name in
                                                          (f + "_bucket", f + "_sum", f + "_count"))), None)
        assert family is not None, f"sample before its TYPE: {line}"
        if family != current:
            assert family not in seen_families, f"{family}'s samples are split"
            seen_families.append(family)
            current = family
    assert typed["infer_requests_total"] == "counter"
    for name in ("infer_request_duration_seconds", "infer_queue_duration_seconds",
                 "infer_compute_duration_seconds", "infer_batch_size"):
        assert typed[name] == "histogram"


def test_promtool_finds_nothing(traffic):
    """`promtool check metrics` (Debian's prometheus package) reads the page on stdin and
    prints nothing: the names, types, units and help texts pass its lint."""
    if not os.path.isfile(PROMTOOL):
        pytest.fail(f"{PROMTOOL} is missing: install Debian's 'prometheus' package (scripts/install-deps)")
    done = subprocess.run([PROMTOOL, "check", "metrics"], input=traffic.body, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == b"" and done.stderr == b"", done.stdout + done.stderr


def test_requests_counted_by_outcome(traffic):
    """infer_requests_total{outcome}: 3 success, 2 bad_request, 0 rejected, 0 failed."""
    m = Metrics(traffic.body.decode())
    counts = {labels["outcome"]: v for labels, v in m.find("infer_requests_total", model="digits", version="1")}
    assert counts == {"success": 3, "bad_request": 2, "rejected": 0, "failed": 0}
    assert not m.find("infer_requests_total", model="unknown")


def test_histograms_count_the_requests(traffic):
    """Request, queue and compute durations have one observation per successful request,
    with cumulative buckets ending in +Inf = count; the batch size histogram has one run
    per request (they came one at a time) and 1 + 2 + 3 rows."""
    m = Metrics(traffic.body.decode())
    for name in ("infer_request_duration_seconds", "infer_queue_duration_seconds",
                 "infer_compute_duration_seconds", "infer_batch_size"):
        buckets = m.buckets(name, model="digits", version="1")
        counts = [buckets[le] for le in sorted(buckets, key=lambda le: float(le))]
        assert counts == sorted(counts), f"{name}: buckets are not cumulative"
        assert buckets["+Inf"] == m.value(name + "_count", model="digits") == len(ROWS), name
        assert m.value(name + "_sum", model="digits") >= 0
    assert m.value("infer_request_duration_seconds_sum", model="digits") > 0
    assert m.value("infer_compute_duration_seconds_sum", model="digits") > 0
    assert m.value("infer_batch_size_sum", model="digits") == sum(ROWS)
    batch = m.buckets("infer_batch_size", model="digits")
    assert (batch["1"], batch["2"], batch["4"]) == (1, 2, 3)


def test_gauges(traffic):
    """The model's load time and the process's resident memory are positive; nothing is
    queued or in flight once every answer is back."""
    m = Metrics(traffic.body.decode())
    assert m.value("infer_model_load_duration_seconds", model="digits", version="1") > 0
    assert m.value("process_resident_memory_bytes") > 1 << 20
    assert m.value("infer_queue_depth", model="digits") == 0
    assert m.value("infer_inflight_requests", model="digits") == 0


def query(port, expression):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            doc = json.loads(r.read())
    except OSError:
        return None  # not up yet
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def test_prometheus_scrapes_the_server(server, traffic, tmp_path):
    """The real Prometheus server (Debian's, scrape_interval 1s) scrapes /metrics: its
    query API reads infer_requests_total{outcome="success"} = 3, the requests this
    module made, labelled with the model and version, and up = 1."""
    if not os.path.isfile(PROMETHEUS):
        pytest.fail(f"{PROMETHEUS} is missing: install Debian's 'prometheus' package (scripts/install-deps)")
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                      "scrape_configs:\n  - job_name: infer\n    metrics_path: /metrics\n"
                      f"    static_configs:\n      - targets: ['127.0.0.1:{server.port}']\n")
    port = free_port()
    log = open(tmp_path / "prometheus.log", "wb")
    prometheus = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        def scraped():
            assert prometheus.poll() is None, (tmp_path / "prometheus.log").read_text()
            result = query(port, 'infer_requests_total{outcome="success"}')
            return bool(result) and float(result[0]["value"][1]) == 3

        wait_for(scraped, 60, "Prometheus to scrape infer_requests_total{outcome=\"success\"} = 3")
        result = query(port, 'infer_requests_total{outcome="success"}')
        assert len(result) == 1
        labels = result[0]["metric"]
        assert (labels["model"], labels["version"], labels["job"]) == ("digits", "1", "infer")
        up = query(port, 'up{job="infer"}')
        assert up and float(up[0]["value"][1]) == 1
        bad = query(port, 'infer_requests_total{outcome="bad_request"}')
        assert bad and float(bad[0]["value"][1]) == 2
    finally:
        prometheus.terminate()
        try:
            prometheus.wait(30)
        except subprocess.TimeoutExpired:
            prometheus.kill()
            prometheus.wait()
        log.close()
