#!/usr/bin/python3
"""Exports the real-model conformance set (tests/models) into a cache folder.

    /usr/bin/python3 tools/models/export_models.py --out build/models_cache

For every model it writes <out>/<name>/ with model.onnx, the inputs and the reference
outputs as .npy, and manifest.json (see model_writer.py). PyTorch's own outputs are the
reference for the exported PyTorch models (torch_models.py); numpy/PyTorch computations
written from the ONNX specification are the reference for the graphs built with
onnx.helper (onnx_graphs.py). Weights are random with fixed seeds; nothing is downloaded.

The export is skipped when <out>/stamp.txt holds the hash of these scripts and of the
versions of torch, torchvision, onnx and numpy: the ctest fixture runs this before every
test_models run, and an unchanged export costs nothing.

Needs Debian's python3-numpy, python3-onnx, python3-torch and python3-torchvision
(tools/install-deps.sh installs them). Exit status: 0 on success, 1 on failure, with one
line on stderr that says what is wrong.
"""

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIRED = [("numpy", "python3-numpy"), ("onnx", "python3-onnx"), ("torch", "python3-torch"),
            ("torchvision", "python3-torchvision")]
# The models torch_models.EXPORTERS and onnx_graphs.EXPORTERS write, in that order; listed
# here too so that an up-to-date cache is recognised without importing torch.
MODEL_NAMES = ["resnet18", "resnet50", "mobilenet_v2", "bert_tiny", "bert_tiny_opset13",
               "lstm_bidirectional", "control_flow",
               "opset9_cnn", "opset11_resize_pad", "fp16_weights", "nhwc_conv", "int8_dynamic",
               "scalar_inputs", "multi_output", "symbolic_dims"]


def fail(message):
    print(f"export_models.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def find_dependencies():
    """Returns {module: version} for the packages this needs, or fails saying which Debian
    package to install. It only looks the packages up: importing torch takes seconds, and
    an up-to-date cache needs none of them."""
    versions = {}
    missing = []
    for module, package in REQUIRED:
        if importlib.util.find_spec(module) is None:
            missing.append(package)
            continue
        try:
            versions[module] = importlib.metadata.version(module)
        except importlib.metadata.PackageNotFoundError:
            versions[module] = "unknown"
    if missing:
        fail(f"{sys.executable} lacks the Debian package(s) {' '.join(missing)}. "
             f"Install them with: sudo apt-get install {' '.join(missing)} "
             "(tools/install-deps.sh installs everything the tests need)")
    return versions


def stamp_of(versions):
    digest = hashlib.sha256()
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".py"):
            digest.update(name.encode())
            with open(os.path.join(HERE, name), "rb") as f:
                digest.update(f.read())
    for module, _ in REQUIRED:
        digest.update(f"{module}={versions[module]}".encode())
    return digest.hexdigest()


def up_to_date(out, stamp, names):
    try:
        with open(os.path.join(out, "stamp.txt")) as f:
            if f.read().strip() != stamp:
                return False
    except OSError:
        return False
    return all(os.path.isfile(os.path.join(out, n, "manifest.json")) for n in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="cache folder (created if missing)")
    parser.add_argument("--force", action="store_true", help="export even when the stamp matches")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="export only these models (for development; writes no stamp)")
    args = parser.parse_args()

    versions = find_dependencies()
    out = os.path.abspath(args.out)
    stamp = stamp_of(versions)
    if not args.only and not args.force and up_to_date(out, stamp, MODEL_NAMES):
        print(f"export_models.py: {out} is up to date ({len(MODEL_NAMES)} models)")
        return

    # The source tree may be read-only (and stays clean): no __pycache__ next to the scripts.
    sys.dont_write_bytecode = True
    # torch.onnx warns about every scripted construct it exports (shape inference of
    # prim::Constant, tracer notes); in a test log those pages hide the lines that matter.
    warnings.filterwarnings("ignore", module=r"torch(\.|$)")
    sys.path.insert(0, HERE)
    try:
        import onnx_graphs
        import torch
        import torch_models
    except ImportError as error:
        fail(f"{sys.executable}: import failed ({error}); reinstall python3-numpy python3-onnx "
             "python3-torch python3-torchvision")

    exporters = torch_models.EXPORTERS + onnx_graphs.EXPORTERS
    names = [n for n, _ in exporters]
    if names != MODEL_NAMES:
        fail(f"MODEL_NAMES {MODEL_NAMES} does not list the exporters' models {names}")
    unknown = sorted(set(args.only) - set(names))
    if unknown:
        fail(f"unknown model(s) {unknown}; known: {names}")

    os.makedirs(out, exist_ok=True)
    stamp_path = os.path.join(out, "stamp.txt")
    if os.path.exists(stamp_path):
        os.remove(stamp_path)  # an interrupted export must not look complete
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))

    started, cpu_started = time.monotonic(), time.process_time()
    for name, export in exporters:
        if args.only and name not in args.only:
            continue
        folder = os.path.join(out, name)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        t0, cpu0 = time.monotonic(), time.process_time()
        try:
            export(out)
        except Exception as error:  # name the model; the traceback is of no use to a test log
            fail(f"exporting {name}: {type(error).__name__}: {error}")
        print(f"export_models.py: {name}: {time.monotonic() - t0:.1f} s "
              f"({time.process_time() - cpu0:.1f} s CPU)", flush=True)

    if not args.only:
        with open(os.path.join(out, "models.json"), "w") as f:
            json.dump({"models": names}, f, indent=1)
        with open(stamp_path, "w") as f:
            f.write(stamp + "\n")
    print(f"export_models.py: wrote {out} in {time.monotonic() - started:.1f} s "
          f"({time.process_time() - cpu_started:.1f} s CPU)")


if __name__ == "__main__":
    main()
