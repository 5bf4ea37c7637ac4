#!/usr/bin/python3
"""Load benchmarks of infer-serve over loopback, with wrk (Debian's HTTP load generator).

    /usr/bin/python3 tools/bench/serve_bench.py [--build-dir build] [--quick]
                     [--only relu,mlp,resnet,soak] [--soak-minutes 10] [--markdown]

Scenarios (the targets of README "Serving"):
  relu    a one-Relu model ([batch,16] float32, JSON body), batching off: HTTP/1.1
          keep-alive at concurrency 64 (wrk -t2 -c64) and at concurrency 1, next to the
          in-process run of the same model (infer-run --benchmark, median per run).
  mlp     an MLP 784-512-512-10 (random weights), binary request bodies, at concurrency
          32 with batching off and with batching on (max_batch_size 32).
  resnet  ResNet-50 (the bench cache's export, batch dim made symbolic), concurrency 1
          with batching off and on (the p99 difference against max_queue_delay_us), then
          the throughput curve over concurrency 1..64 with batching on.
  soak    the MLP load with batching on at concurrency 64 for --soak-minutes, the server's resident
          memory sampled every 10 s.

Each scenario starts its own server (ports picked by the kernel) from a deployment file
written into the cache folder (BUILD/serve_bench_cache). Progress goes to stderr, the
tables to stdout (--markdown: a section for tools/bench/SERVE_RESULTS.md).
"""

import argparse
import json
import os
import platform
import re
import signal
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def fail(message):
    print(f"serve_bench.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def log(message):
    print(f"[serve-bench] {message}", file=sys.stderr, flush=True)


# ---- models -----------------------------------------------------------------------------

def make_models(cache, build):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    os.makedirs(cache, exist_ok=True)
    relu = os.path.join(cache, "relu.onnx")
    if not os.path.exists(relu):
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, relu)
    mlp = os.path.join(cache, "mlp.onnx")
    if not os.path.exists(mlp):
        rng = np.random.default_rng(784)
        sizes = [784, 512, 512, 10]
        nodes, inits, prev = [], [], "x"
        for i in range(3):
            w = (rng.standard_normal((sizes[i], sizes[i + 1])) / np.sqrt(sizes[i])).astype(np.float32)
            b = (rng.standard_normal(sizes[i + 1]) * 0.01).astype(np.float32)
            inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
            out = "logits" if i == 2 else f"h{i}"
            nodes.append(helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [out if i == 2 else f"g{i}"]))
            if i < 2:
                nodes.append(helper.make_node("Relu", [f"g{i}"], [out]))
            prev = out
        g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 784])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, mlp)
    resnet = os.path.join(cache, "resnet50.onnx")
    source = os.path.join(build, "bench_cache", "resnet50_b1", "model.onnx")
    if not os.path.exists(resnet):
        if not os.path.exists(source):
            log(f"exporting the bench models first ({source} is missing)")
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export_models.py"), "--out",
                            os.path.join(build, "bench_cache")], check=True)
        m = onnx.load(source)
        for value in list(m.graph.input) + list(m.graph.output):
            value.type.tensor_type.shape.dim[0].dim_param = "batch"
        del m.graph.value_info[:]
        onnx.save(m, resnet)
    return {"relu": relu, "mlp": mlp, "resnet": resnet}


# ---- the server and the load ------------------------------------------------------------

class Server:
    def __init__(self, binary, config_text, cache, name):
        self.config = os.path.join(cache, f"{name}.yaml")
        with open(self.config, "w") as f:
            f.write(config_text)
        self.proc = subprocess.Popen([binary, "--config", self.config, "--http-port", "0", "--grpc-port", "0"],
                                     stderr=subprocess.PIPE, text=True)
        self.port = None
        lines = []
        deadline = time.time() + 120
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"on http://[0-9.]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if not self.port:
            self.proc.kill()
            fail(f"infer-serve did not start with {self.config}:\n" + "".join(lines))
        self.startup = "".join(lines)
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # keep the pipe drained

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def metrics(self):
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as r:
            return r.read().decode()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def lua_script(cache, name, header, payload):
    """A wrk script posting one fixed body (JSON header, then binary payload if any)."""
    body = header.encode() + payload
    path = os.path.join(cache, f"{name}.lua")
    escaped = "".join(f"\\{b}" for b in body)  # Lua decimal escapes: any byte
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\n')
        f.write(f'wrk.body = "{escaped}"\n')
        if payload:
            f.write(f'wrk.headers["Inference-Header-Content-Length"] = "{len(header.encode())}"\n')
            f.write('wrk.headers["Content-Type"] = "application/octet-stream"\n')
        else:
            f.write('wrk.headers["Content-Type"] = "application/json"\n')
    return path


def to_ms(text):
    m = re.match(r"([0-9.]+)(us|ms|s|m)$", text)
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}[unit]


def run_wrk(port, model, script, connections, seconds):
    threads = min(2, connections)
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "30s", "--latency", "-s", script,
           f"http://127.0.0.1:{port}/v2/models/{model}/infer"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    result = {"connections": connections, "seconds": seconds}
    result["rps"] = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))
    result["requests"] = int(re.search(r"(\d+) requests in", out).group(1))
    for pct in ("50", "75", "90", "99"):
        result[f"p{pct}_ms"] = to_ms(re.search(rf"^\s+{pct}%\s+(\S+)", out, re.M).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    result["errors"] = (int(non2xx.group(1)) if non2xx else 0) + (sum(int(x) for x in socket.groups()) if socket else 0)
    return result


def batch_totals(server, model):
    """(rows, runs) so far, from the server's infer_batch_size histogram."""
    text = server.metrics()
    total = float(re.search(rf'infer_batch_size_sum{{model="{model}",version="1"}} (\S+)', text).group(1))
    count = float(re.search(rf'infer_batch_size_count{{model="{model}",version="1"}} (\S+)', text).group(1))
    return total, count


def measure(server, model, script, connections, seconds):
    """run_wrk, plus the mean rows per run of the runs made during it."""
    rows0, runs0 = batch_totals(server, model)
    result = run_wrk(server.port, model, script, connections, seconds)
    rows1, runs1 = batch_totals(server, model)
    result["batch_mean"] = (rows1 - rows0) / (runs1 - runs0) if runs1 > runs0 else 0.0
    return result


def in_process_ms(build, model, threads, iterations):
    out = subprocess.run([os.path.join(build, "bin", "infer-run"), model, "--threads", str(threads), "--benchmark",
                          "--warmup", "200", "--iterations", str(iterations), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["latency_ms"]["p50"]


# ---- scenarios --------------------------------------------------------------------------

def relu_json_header():
    data = ",".join(str(v) for v in [1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16])
    return '{"inputs":[{"name":"x","shape":[1,16],"datatype":"FP32","data":[' + data + ']}]}'


def scenario_relu(ctx):
    server = Server(ctx.binary, f"model: {ctx.models['relu']}\nname: relu\nthreads: 1\n", ctx.cache, "relu")
    try:
        script = lua_script(ctx.cache, "relu", relu_json_header(), b"")
        log("relu: concurrency 64")
        c64 = run_wrk(server.port, "relu", script, 64, ctx.long_seconds)
        log("relu: concurrency 1")
        c1 = run_wrk(server.port, "relu", script, 1, ctx.short_seconds)
    finally:
        server.stop()
    inproc = in_process_ms(ctx.build, ctx.models["relu"], 1, 5000)
    return {"c64": c64, "c1": c1, "in_process_ms": inproc}


def mlp_binary(ctx):
    import numpy as np
    x = np.random.default_rng(1).random((1, 784), dtype=np.float32)
    header = json.dumps({"inputs": [{"name": "x", "shape": [1, 784], "datatype": "FP32",
                                     "parameters": {"binary_data_size": x.nbytes}}]}, separators=(",", ":"))
    return lua_script(ctx.cache, "mlp", header, x.tobytes())


def scenario_mlp(ctx):
    script = mlp_binary(ctx)
    servers = {}
    rounds = {"off": [], "on": []}
    try:
        for mode, batching in (("off", ""), ("on", "batching:\n  max_batch_size: 32\n  max_queue_delay_us: 500\n")):
            servers[mode] = Server(ctx.binary, f"model: {ctx.models['mlp']}\nname: mlp\nthreads: 1\n{batching}",
                                   ctx.cache, f"mlp_{mode}")
        # The two servers alternate round by round; each figure is the median round.
        for r in range(ctx.rounds):
            for mode in ("off", "on"):
                log(f"mlp: batching {mode}, concurrency 32, round {r + 1}/{ctx.rounds}")
                rounds[mode].append(measure(servers[mode], "mlp", script, 32, ctx.short_seconds))
    finally:
        for server in servers.values():
            server.stop()
    results = {}
    for mode in ("off", "on"):
        runs = sorted(rounds[mode], key=lambda x: x["rps"])
        results[mode] = dict(runs[len(runs) // 2])
        results[mode]["errors"] = sum(x["errors"] for x in runs)
        results[mode]["rounds"] = len(runs)
    return results


def scenario_resnet(ctx):
    import numpy as np
    image = np.load(os.path.join(ctx.build, "bench_cache", "resnet50_b1", "image.npy")).astype(np.float32)
    header = json.dumps({"inputs": [{"name": "image", "shape": list(image.shape), "datatype": "FP32",
                                     "parameters": {"binary_data_size": image.nbytes}}],
                         "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]},
                        separators=(",", ":"))
    script = lua_script(ctx.cache, "resnet", header, image.tobytes())
    delay_us = 2000
    results = {"delay_us": delay_us, "curve": []}
    servers = {}
    try:
        for mode, batching in (("off", ""),
                               ("on", f"batching:\n  max_batch_size: 8\n  max_queue_delay_us: {delay_us}\n")):
            servers[mode] = Server(ctx.binary, f"model: {ctx.models['resnet']}\nname: resnet50\nthreads: 2\n{batching}",
                                   ctx.cache, f"resnet_{mode}")
        # Concurrency 1, the two servers alternating round by round (the VM's speed drifts
        # by 10-30 % within minutes): the median of the rounds' p50 and p99.
        rounds = {"off": [], "on": []}
        for r in range(ctx.rounds):
            for mode in ("off", "on"):
                log(f"resnet50: batching {mode}, concurrency 1, round {r + 1}/{ctx.rounds}")
                rounds[mode].append(run_wrk(servers[mode].port, "resnet50", script, 1, ctx.short_seconds))
        for mode in ("off", "on"):
            runs = rounds[mode]
            median = lambda key: sorted(x[key] for x in runs)[len(runs) // 2]
            results[f"c1_{mode}"] = {"rps": median("rps"), "p50_ms": median("p50_ms"), "p99_ms": median("p99_ms"),
                                     "errors": sum(x["errors"] for x in runs), "rounds": len(runs)}
        for c in ctx.curve:
            log(f"resnet50: batching on, concurrency {c}")
            results["curve"].append(measure(servers["on"], "resnet50", script, c, ctx.curve_seconds))
    finally:
        for server in servers.values():
            server.stop()
    return results


def scenario_soak(ctx):
    # The batching path: it allocates the most per request (queue items, joined and split
    # tensors, completions handed between threads).
    server = Server(ctx.binary, f"model: {ctx.models['mlp']}\nname: mlp\nthreads: 1\n"
                    "batching:\n  max_batch_size: 32\n  max_queue_delay_us: 500\n", ctx.cache, "mlp_soak")
    samples = []
    try:
        script = mlp_binary(ctx)
        seconds = int(ctx.soak_minutes * 60)
        load = threading.Thread(target=lambda: samples.append(("wrk", run_wrk(server.port, "mlp", script, 64,
                                                                                 seconds))))
        start = time.time()
        samples.append((0.0, server.rss_kib()))
        load.start()
        while load.is_alive():
            time.sleep(10)
            samples.append((time.time() - start, server.rss_kib()))
        load.join()
    finally:
        server.stop()
    wrk = [s[1] for s in samples if s[0] == "wrk"][0]
    rss = [s for s in samples if s[0] != "wrk"]
    return {"wrk": wrk, "rss": rss}


# ---- report -----------------------------------------------------------------------------

def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return re.search(r"Model name:\s+(.*)", out).group(1).strip()
    except (OSError, AttributeError):
        return platform.processor() or "unknown CPU"


def report(results, ctx, markdown):
    lines = []
    h = "### " if markdown else ""
    lines.append(f"{h}infer-serve over loopback, wrk 4.1, {cpu_name()}, {os.cpu_count()} CPUs "
                 f"({time.strftime('%Y-%m-%d')})")
    lines.append("")
    if "relu" in results:
        r = results["relu"]
        c64, c1 = r["c64"], r["c1"]
        lines.append("One Relu [1,16] float32, JSON body, batching off, HTTP/1.1 keep-alive:")
        lines.append("")
        lines.append("| concurrency | seconds | requests/s | p50 ms | p99 ms | errors |")
        lines.append("|---|---|---|---|---|---|")
        for c in (c64, c1):
            lines.append(f"| {c['connections']} | {c['seconds']} | {c['rps']:.0f} | {c['p50_ms']:.3f} | "
                         f"{c['p99_ms']:.3f} | {c['errors']} |")
        lines.append("")
        lines.append(f"In-process run of the same model (infer-run --benchmark, median): {r['in_process_ms']:.4f} ms; "
                     f"concurrency 1 p50 over HTTP is {c1['p50_ms'] - r['in_process_ms']:.3f} ms above it.")
        lines.append("")
    if "mlp" in results:
        m = results["mlp"]
        lines.append(f"MLP 784-512-512-10, binary body, concurrency 32, 1 thread per run; the median of "
                     f"{m['off']['rounds']} alternating rounds (batching on = max_batch_size 32, "
                     f"max_queue_delay_us 500):")
        lines.append("")
        lines.append("| batching | requests/s | p50 ms | p99 ms | mean rows per run | errors |")
        lines.append("|---|---|---|---|---|---|")
        for mode in ("off", "on"):
            x = m[mode]
            lines.append(f"| {mode} | {x['rps']:.0f} | {x['p50_ms']:.2f} | {x['p99_ms']:.2f} | "
                         f"{x['batch_mean']:.1f} | {x['errors']} |")
        lines.append("")
        lines.append(f"Throughput with batching / without: {m['on']['rps'] / m['off']['rps']:.2f}x")
        lines.append("")
    if "resnet" in results:
        r = results["resnet"]
        lines.append(f"ResNet-50, binary body and output, 2 threads; batching on = max_batch_size 8, "
                     f"max_queue_delay_us {r['delay_us']}:")
        lines.append("")
        lines.append("| batching | concurrency | requests/s | p50 ms | p99 ms | mean rows per run | errors |")
        lines.append("|---|---|---|---|---|---|---|")
        for mode in ("off", "on"):
            x = r[f"c1_{mode}"]
            lines.append(f"| {mode} (median of {x['rounds']} alternating rounds) | 1 | {x['rps']:.1f} | "
                         f"{x['p50_ms']:.2f} | {x['p99_ms']:.2f} | | {x['errors']} |")
        for x in r["curve"]:
            lines.append(f"| on | {x['connections']} | {x['rps']:.1f} | {x['p50_ms']:.1f} | {x['p99_ms']:.1f} | "
                         f"{x['batch_mean']:.2f} | {x['errors']} |")
        lines.append("")
        diff = r["c1_on"]["p99_ms"] - r["c1_off"]["p99_ms"]
        lines.append(f"Concurrency 1: p99 with batching - p99 without = {diff:.2f} ms "
                     f"(max_queue_delay_us = {r['delay_us'] / 1000:.1f} ms)")
        lines.append("")
    if "soak" in results:
        s = results["soak"]
        rss = s["rss"]
        first, peak, last = rss[0][1], max(v for _, v in rss), rss[-1][1]
        after_minute = [v for t, v in rss if t >= 60]
        lines.append(f"Soak: the MLP load (batching on, binary body) at concurrency 64 for {ctx.soak_minutes:g} min: "
                     f"{s['wrk']['requests']} requests, {s['wrk']['errors']} errors, p99 {s['wrk']['p99_ms']:.2f} ms; "
                     f"resident memory {first / 1024:.1f} MiB at start, {after_minute[0] / 1024 if after_minute else 0:.1f} MiB "
                     f"after 1 min, peak {peak / 1024:.1f} MiB, {last / 1024:.1f} MiB at the end.")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--quick", action="store_true", help="short runs (10 s at concurrency 64, 5 s others)")
    parser.add_argument("--only", default="relu,mlp,resnet", help="scenarios (relu, mlp, resnet, soak)")
    parser.add_argument("--soak-minutes", type=float, default=10)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        fail("wrk is not installed (apt-get install wrk)")
    ctx = argparse.Namespace()
    ctx.build = os.path.abspath(args.build_dir)
    ctx.binary = os.path.join(ctx.build, "bin", "infer-serve")
    if not os.path.exists(ctx.binary):
        fail(f"{ctx.binary} is missing: cmake --build {args.build_dir} --target infer-serve infer_plugin_cpu")
    ctx.cache = os.path.join(ctx.build, "serve_bench_cache")
    ctx.models = make_models(ctx.cache, ctx.build)
    ctx.long_seconds = 10 if args.quick else 60
    ctx.short_seconds = 5 if args.quick else 20
    ctx.curve_seconds = 5 if args.quick else 10
    ctx.curve = [1, 2, 4, 8, 16, 32, 64]
    ctx.rounds = 2 if args.quick else 3
    ctx.soak_minutes = args.soak_minutes
    scenarios = {"relu": scenario_relu, "mlp": scenario_mlp, "resnet": scenario_resnet, "soak": scenario_soak}
    results = {}
    for name in args.only.split(","):
        if name not in scenarios:
            fail(f"unknown scenario '{name}' (relu, mlp, resnet, soak)")
        results[name] = scenarios[name](ctx)
    print(report(results, ctx, args.markdown))


if __name__ == "__main__":
    main()
