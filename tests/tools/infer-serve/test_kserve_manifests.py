"""The KServe deployment files (configs/kserve/) against the server they deploy.

The manifests are parsed as YAML, and what they promise is checked on the real binary:
infer-serve is started with the ServingRuntime's own arguments (only /mnt/models, the
ports and the bind address are replaced, so the test runs unprivileged on loopback) and
the probe and metrics paths the manifests name must answer on the port they name.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
KSERVE = os.path.join(REPO, "configs", "kserve")


def server_binary():
    path = os.environ.get("INFER_SERVE")
    if not path or not os.path.isfile(path):
        pytest.fail(f"INFER_SERVE must name the infer-serve binary of this build (got {path!r}); run through ctest")
    return path


def load(name):
    with open(os.path.join(KSERVE, name)) as f:
        return yaml.safe_load(f)


def flags(args):
    """['--a=1', '--b=x'] -> {'--a': '1', '--b': 'x'}"""
    out = {}
    for arg in args:
        key, _, value = arg.partition("=")
        out[key] = value
    return out


@pytest.fixture(scope="module")
def runtime():
    doc = load("servingruntime.yaml")
    assert doc["apiVersion"] == "serving.kserve.io/v1alpha1"
    assert doc["kind"] == "ServingRuntime"
    return doc


@pytest.fixture(scope="module")
def container(runtime):
    containers = runtime["spec"]["containers"]
    assert len(containers) == 1
    # KServe finds the server container by this name.
    assert containers[0]["name"] == "kserve-container"
    return containers[0]


def test_manifests_are_consistent(runtime, container):
    """Ports, probes, metrics annotations and the InferenceService's runtime agree."""
    args = flags(container["args"])
    http_port = int(args["--http-port"])
    assert int(args["--grpc-port"]) != http_port
    assert args["--model-repository"] == "/mnt/models"  # where KServe's storage initializer puts the model
    assert [p["containerPort"] for p in container["ports"]] == [http_port]
    for probe, path in (("readinessProbe", "/v2/health/ready"), ("startupProbe", "/v2/health/ready"),
                        ("livenessProbe", "/v2/health/live")):
        assert container[probe]["httpGet"] == {"path": path, "port": http_port}, probe
    annotations = runtime["spec"]["annotations"]
    assert int(annotations["prometheus.kserve.io/port"]) == http_port
    assert annotations["prometheus.kserve.io/path"] == "/metrics"
    security = container["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] != 0
    assert security["capabilities"]["drop"] == ["ALL"]
    assert set(runtime["spec"]["protocolVersions"]) == {"v2", "grpc-v2"}

    isvc = load("inferenceservice.yaml")
    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1" and isvc["kind"] == "InferenceService"
    model = isvc["spec"]["predictor"]["model"]
    assert model["runtime"] == runtime["metadata"]["name"]
    assert model["modelFormat"]["name"] in [f["name"] for f in runtime["spec"]["supportedModelFormats"]]
    assert model["protocolVersion"] == "v2"


def test_containerfile_runs_the_server_with_known_flags(container):
    """The image's entry point is the server, and every flag the image and the runtime pass exists."""
    with open(os.path.join(KSERVE, "Containerfile")) as f:
        text = f.read()
    entrypoint = json.loads(re.search(r"^ENTRYPOINT (.*)$", text, re.M).group(1))
    cmd = json.loads(re.search(r"^CMD (.*)$", text, re.M).group(1))
    assert entrypoint == ["/opt/infer/bin/infer-serve"]
    assert re.search(r"^USER 1000$", text, re.M)
    help_text = subprocess.run([server_binary(), "--help"], capture_output=True, text=True, check=True).stdout
    for flag in list(flags(cmd)) + list(flags(container["args"])):
        assert re.search(rf"(^|\s){re.escape(flag)}\b", help_text), f"{flag} is not an infer-serve option"


def test_server_answers_probes_with_the_runtime_arguments(container, tmp_path):
    """The ServingRuntime's arguments start a server whose probe and metrics paths answer."""
    repo = tmp_path / "mnt_models"
    repo.mkdir()
    shutil.copy(os.path.join(REPO, "models", "digits_cnn.onnx"), repo / "model.onnx")
    isvc_name = load("inferenceservice.yaml")["metadata"]["name"]
    args = []
    for arg in container["args"]:
        key, _, _ = arg.partition("=")
        if key == "--model-repository":
            arg = f"--model-repository={repo}"
        elif key in ("--http-port", "--grpc-port"):
            arg = f"{key}=0"
        elif key == "--host":
            arg = "--host=127.0.0.1"
        args.append(arg.replace("{{.Name}}", isvc_name))
    proc = subprocess.Popen([server_binary()] + args, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.time() + 30
        lines = []
        while time.time() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"on http://[0-9.]+:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        assert port, "server did not start:\n" + "".join(lines)
        base = f"http://127.0.0.1:{port}"
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            with urllib.request.urlopen(base + container[probe]["httpGet"]["path"], timeout=10) as r:
                assert r.status == 200, probe
        with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
            assert b"infer_requests_total" in r.read()
        # The model is served under the InferenceService's name.
        with urllib.request.urlopen(f"{base}/v2/models/{isvc_name}", timeout=10) as r:
            assert json.load(r)["name"] == isvc_name
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
