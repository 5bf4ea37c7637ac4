#!/usr/bin/python3
"""Runs the real-model corpus through build/bin/infer-run and compares with ORT's references.

    /usr/bin/python3 tools/realmodels/compare.py --cache DIR [--models a,b] [--build-dir build]
                     [--backends cpu] [--json]

The cases are the ones tools/realmodels/fetch.py made in DIR. Every output of infer-run
(--output-dir) is compared with the reference under the case's tolerance (case.json:
every element |got - ref| <= atol and mean |got - ref| <= mean_atol; integers and bool
exactly unless ORT's own variants differ). Prints one line per model: match, or the
worst output with its worst element (index, got, want), or infer-run's error. The ctest
suite (tests/realmodels) does the same through the C++ API; this is the CLI's view, and
the quick way to look at one model. Exit status 1 when any model does not match.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def compare_output(got, want, spec):
    """'' when got matches want under spec's tolerance, else what differs."""
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if want.size == 0:
        return ""
    g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
    nan_w, nan_g = np.isnan(w), np.isnan(g)
    d = np.where(nan_w | nan_g, np.where(nan_w == nan_g, 0.0, np.inf), np.abs(g - w))
    d = np.where(np.isinf(w) & (g == w), 0.0, d)
    bad = d > spec["atol"]
    worst = int(np.argmax(d))
    mean = float(np.mean(d[np.isfinite(d)])) if np.isfinite(d).any() else 0.0
    index = list(np.unravel_index(worst, want.shape)) if want.shape else []
    where = f"worst at {index}: got {g[worst]:.9g}, want {w[worst]:.9g}"
    if bad.any():
        return (f"{int(bad.sum())} of {want.size} elements differ by more than atol {spec['atol']:.3g}; "
                f"{where}; max |diff| {d[worst]:.3g}, mean {mean:.3g}")
    if mean > spec.get("mean_atol", np.inf):
        return f"mean |diff| {mean:.3g} exceeds mean_atol {spec['mean_atol']:.3g}; max |diff| {d[worst]:.3g}; {where}"
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", required=True)
    parser.add_argument("--models", default="")
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    parser.add_argument("--backends", default="cpu")
    parser.add_argument("--json", action="store_true", help="one JSON object per model instead of text")
    args = parser.parse_args()
    cases_dir = os.path.join(args.cache, "cases")
    ids = [m.strip() for m in args.models.split(",") if m.strip()] or sorted(os.listdir(cases_dir))
    failures = 0
    for model_id in ids:
        folder = os.path.join(cases_dir, model_id)
        try:
            with open(os.path.join(folder, "case.json")) as f:
                case = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{model_id}: no case ({e}); run tools/realmodels/fetch.py --cache {args.cache}")
            failures += 1
            continue
        with tempfile.TemporaryDirectory() as out:
            cmd = [os.path.join(args.build_dir, "bin", "infer-run"), os.path.join(args.cache, case["model"]),
                   "--backends", args.backends, "--output-dir", out]
            for i in case["inputs"]:
                cmd += ["--input", f"{i['name']}={os.path.join(folder, i['file'])}"]
            t0 = time.monotonic()
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            seconds = time.monotonic() - t0
            result = {"id": model_id, "seconds": round(seconds, 2), "outputs": {}}
            if proc.returncode != 0:
                result["error"] = (proc.stderr.strip().splitlines() or ["?"])[-1]
            else:
                for spec in case["outputs"]:
                    path = os.path.join(out, os.path.basename(spec["file"]))
                    if not os.path.isfile(path):
                        result["outputs"][spec["name"]] = "missing from infer-run's outputs"
                        continue
                    got = np.load(path)
                    want = np.load(os.path.join(folder, spec["file"]))
                    diff = compare_output(got, want, spec)
                    same = got.shape == want.shape and got.size
                    d = float(np.max(np.abs(got.astype(np.float64) - want))) if same else 0.0
                    result["outputs"][spec["name"]] = diff or f"match (max |diff| {d:.3g}, atol {spec['atol']:.3g})"
        ok = "error" not in result and all(v.startswith("match") for v in result["outputs"].values())
        failures += not ok
        if args.json:
            print(json.dumps(result | {"ok": ok}))
            continue
        print(f"{model_id}: {'match' if ok else 'FAIL'} ({seconds:.1f} s)")
        if "error" in result:
            print(f"  infer-run failed: {result['error']}")
        for name, text in result["outputs"].items():
            if not ok or not text.startswith("match"):
                print(f"  {name[:60]}: {text}")
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
