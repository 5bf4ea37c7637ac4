#!/usr/bin/python3
"""Exports the benchmark models and their inputs into a cache folder.

    /usr/bin/python3 tools/bench/export_models.py [--out build/bench_cache] [--build-dir build]

Writes <out>/<name>/model.onnx and one <input>.npy per input for every model in MODELS,
and <out>/manifest.json: per model the files, the input names, the batch, a description
and the FLOPs (2 x the multiply-accumulates of Conv/Gemm/MatMul, see flops.py). Weights
and inputs are random from fixed seeds (nothing is downloaded), every model is exported
with opset 17 and static shapes (batch 1 and batch 32 of ResNet-50 are two files with the
same weights), so both engines see exactly the same graph. resnet50_int8_b1 is not
exported but derived: resnet50_b1's file statically quantized into QDQ form by
quantize_qdq.py, calibrated with BUILD/bin/infer-run (--build-dir) on synthetic images.

The export is skipped when <out>/stamp.txt holds the hash of this script, flops.py,
quantize_qdq.py, tools/models/torch_models.py (whose BERT layer and BatchNorm calibration
it reuses) and the versions of torch, torchvision, onnx and numpy. Needs Debian's
python3-torch, python3-torchvision, python3-onnx and python3-numpy. Exit status 0 on
success, 1 with one line on stderr on failure.
"""

import argparse
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TORCH_MODELS_DIR = os.path.join(REPO, "tools", "models")
REQUIRED = [("numpy", "python3-numpy"), ("onnx", "python3-onnx"), ("torch", "python3-torch"),
            ("torchvision", "python3-torchvision")]
QUANTIZE_DIR = os.path.join(REPO, "tools", "infer-quantize", "infer_quantize")
STAMPED_FILES = [os.path.join(REPO, "tools", "infer-quantize", "infer-quantize"),
                 os.path.join(HERE, "export_models.py"), os.path.join(HERE, "flops.py"),
                 os.path.join(HERE, "quantize_qdq.py"), os.path.join(TORCH_MODELS_DIR, "torch_models.py")] + \
    sorted(os.path.join(QUANTIZE_DIR, f) for f in os.listdir(QUANTIZE_DIR) if f.endswith(".py"))
OPSET = 17

# The models, in export order (EXPORTERS below says how each is made; DERIVED models are
# made from an earlier one's files). Listed here so that an up-to-date cache is recognised
# without importing torch.
MODELS = [
    "resnet50_b1", "resnet50_int8_b1", "resnet50_b32", "mobilenet_v2_b1", "mobilenet_v2_int8_b1",
    "bert_base_b1", "bert_base_int8_b1", "mlp_b1", "mlp_b256", "call_overhead", "vad_b1",
]


def fail(message):
    print(f"export_models.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def find_dependencies():
    versions, missing = {}, []
    for module, package in REQUIRED:
        if importlib.util.find_spec(module) is None:
            missing.append(package)
            continue
        try:
            versions[module] = importlib.metadata.version(module)
        except importlib.metadata.PackageNotFoundError:
            versions[module] = "unknown"
    if missing:
        fail(f"{sys.executable} lacks the Debian package(s) {' '.join(missing)}: "
             f"sudo apt-get install {' '.join(missing)} (run this script with /usr/bin/python3)")
    return versions


def stamp_of(versions):
    digest = hashlib.sha256()
    for path in STAMPED_FILES:
        digest.update(os.path.basename(path).encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    for module, _ in REQUIRED:
        digest.update(f"{module}={versions[module]}".encode())
    return digest.hexdigest()


def up_to_date(out, stamp):
    try:
        with open(os.path.join(out, "stamp.txt")) as f:
            if f.read().strip() != stamp:
                return False
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return False
    entries = manifest.get("models", {})
    return all(name in entries and os.path.isfile(os.path.join(out, entries[name]["model"]))
               for name in MODELS)


# ---- the exporters (torch is imported lazily in main) -------------------------------

def _export(module, args, input_names, output_names):
    import torch
    buffer = io.BytesIO()
    torch.onnx.export(module, args, buffer, opset_version=OPSET, input_names=input_names,
                      output_names=output_names, do_constant_folding=True,
                      training=torch.onnx.TrainingMode.EVAL)
    return buffer.getvalue()


def _resnet50(batch):
    import torch
    import torch_models
    import torchvision
    torch.manual_seed(50)
    model = torchvision.models.resnet50()
    # Random BatchNorm statistics of a real image keep activations O(1) through the 50
    # layers, as in a trained network (see torch_models._calibrate_batchnorm).
    torch_models._calibrate_batchnorm(model, 51)
    image = torch.randn((batch, 3, 224, 224), generator=torch.Generator().manual_seed(52))
    return model, (image,), ["image"], ["logits"], \
        f"torchvision resnet50, random weights (seed 50), batch {batch}, 224x224"


def _mobilenet_v2(batch):
    import torch
    import torch_models
    import torchvision
    torch.manual_seed(2)
    model = torchvision.models.mobilenet_v2()
    torch_models._calibrate_batchnorm(model, 3)
    image = torch.randn((batch, 3, 224, 224), generator=torch.Generator().manual_seed(4))
    return model, (image,), ["image"], ["logits"], \
        f"torchvision mobilenet_v2, random weights (seed 2), batch {batch}, 224x224"


def _bert_base(batch, seq=128):
    import torch
    import torch_models
    torch.manual_seed(110)
    # The same module structure as the conformance set's bert_tiny (HuggingFace BERT's
    # layout), whose export infer's optimizer fuses into Attention/LayerNorm/FusedMatMul;
    # here at BERT-base size with its vocabulary and 512 positions.
    model = torch_models._BertEncoder(vocab=30522, hidden=768, heads=12, intermediate=3072, layers=12,
                                      max_positions=512).eval()
    generator = torch.Generator().manual_seed(111)
    ids = torch.randint(1, 30522, (batch, seq), generator=generator)
    types = torch.zeros((batch, seq), dtype=torch.long)
    types[:, seq // 2:] = 1
    mask = torch.ones((batch, seq), dtype=torch.long)  # no padding: every token attends
    return model, (ids, types, mask), ["input_ids", "token_type_ids", "attention_mask"], \
        ["last_hidden_state", "pooler_output"], \
        f"BERT-base encoder (12 layers, hidden 768, 12 heads, FFN 3072, erf GELU), random weights " \
        f"(seed 110), batch {batch}, sequence {seq}, mask all ones"


def _mlp(batch):
    import torch
    from torch import nn
    torch.manual_seed(784)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10)).eval()
    x = torch.rand((batch, 784), generator=torch.Generator().manual_seed(785))
    return model, (x,), ["x"], ["logits"], f"MLP 784-512-512-10 (Linear+ReLU), random weights (seed 784), batch {batch}"


def _call_overhead(batch):
    import torch
    from torch import nn
    # One Relu on an MLP-sized input: its latency is the per-call cost of each API
    # (infer's C++ Session::run in-process; ONNX Runtime's through Node's N-API).
    x = torch.rand((batch, 784), generator=torch.Generator().manual_seed(1))
    return nn.ReLU(), (x,), ["x"], ["y"], f"a single Relu on [{batch}, 784]: per-call overhead"


def _vad(batch):
    import torch
    from torch import nn
    torch.manual_seed(16000)

    def encoder(bins):
        return nn.Sequential(nn.Conv1d(bins, 128, 3, padding=1), nn.ReLU(),
                             nn.Conv1d(128, 64, 3, stride=2, padding=1), nn.ReLU(),
                             nn.Conv1d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
                             nn.Conv1d(64, 64, 3, padding=1), nn.ReLU())

    # Scripted, so that the sample-rate test stays in the graph as an ONNX If whose
    # branches (an STFT as a strided Conv1d, its magnitude, a Conv1d encoder) are
    # subgraphs, as in Silero VAD v4.
    class Front(nn.Module):
        def __init__(self):
            super().__init__()
            self.stft16 = nn.Conv1d(1, 258, 256, stride=128, bias=False)
            self.stft8 = nn.Conv1d(1, 130, 128, stride=64, bias=False)
            self.enc16 = encoder(129)
            self.enc8 = encoder(65)

        def forward(self, x, sr):
            if bool(sr == 16000):
                s = self.stft16(x.unsqueeze(1))
                re, im = s[:, :129], s[:, 129:]
                return self.enc16(torch.sqrt(re * re + im * im + 1e-9))
            s = self.stft8(x.unsqueeze(1))
            re, im = s[:, :65], s[:, 65:]
            return self.enc8(torch.sqrt(re * re + im * im + 1e-9))

    class Vad(nn.Module):
        def __init__(self):
            super().__init__()
            self.front = Front()
            self.lstm = nn.LSTM(64, 64, batch_first=True)
            self.dec = nn.Sequential(nn.ReLU(), nn.Conv1d(64, 1, 1), nn.Sigmoid())

        def forward(self, x, sr, h, c):
            f = self.front(x, sr)
            y, (h2, c2) = self.lstm(f.transpose(1, 2), (h, c))
            return self.dec(y.transpose(1, 2)).mean(2), h2, c2

    generator = torch.Generator().manual_seed(16001)
    x = torch.randn((batch, 576), generator=generator) * 0.1
    sr = torch.tensor(16000, dtype=torch.int64)
    h = torch.zeros((1, batch, 64))
    c = torch.zeros((1, batch, 64))
    return torch.jit.script(Vad().eval()), (x, sr, h, c), ["x", "sr", "h", "c"], ["prob", "hn", "cn"], \
        f"VAD in the style of Silero VAD v4 (a scripted If on the sample rate choosing an " \
        f"STFT-as-Conv1d + Conv1d encoder, then an LSTM of 64 and a Conv1d decoder), random " \
        f"weights (seed 16000), batch {batch}, 576 samples per call"


# name -> (factory, batch, run by run_bench.py --quick: recorded in the manifest).
EXPORTERS = {
    "resnet50_b1": (_resnet50, 1, True),
    "resnet50_b32": (_resnet50, 32, False),
    "mobilenet_v2_b1": (_mobilenet_v2, 1, True),
    "bert_base_b1": (_bert_base, 1, True),
    "mlp_b1": (_mlp, 1, True),
    "mlp_b256": (_mlp, 256, True),
    "call_overhead": (_call_overhead, 1, True),
    "vad_b1": (_vad, 1, True),
}


def export_one(out, name):
    import numpy as np
    import torch
    import flops
    factory, batch, quick = EXPORTERS[name]
    module, args, input_names, output_names, description = factory(batch)
    with torch.no_grad():
        data = _export(module, args, input_names, output_names)
    folder = os.path.join(out, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(data)
    inputs = {}
    for input_name, tensor in zip(input_names, args):
        np.save(os.path.join(folder, f"{input_name}.npy"), tensor.numpy())
        inputs[input_name] = f"{name}/{input_name}.npy"
    import onnx
    try:
        total, per_op = flops.model_flops(onnx.load_from_string(data))
    except flops.FlopError:
        # Shape inference does not see through If branches: such models get no FLOPs
        # (and no GFLOP/s in the table); they are about per-run overhead, not throughput.
        if "If" not in {n.op_type for n in onnx.load_from_string(data).graph.node}:
            raise
        total, per_op = None, {}
    return {"model": f"{name}/model.onnx", "inputs": inputs, "outputs": output_names, "batch": batch,
            "flops": total, "flops_by_op": per_op, "description": description + f", opset {OPSET}",
            "quick": quick}


# name -> (source model, number of synthetic calibration images, their seed, run by
# run_bench.py --quick). The source's model.onnx is quantized by quantize_qdq.py; the
# calibration images are standard normal like the source's input (seed fixed, kept in the
# folder as calibration_<i>.npy), and the source's own input, copied, is the benchmark input
# and the held-out input of quantize_qdq.py's accuracy report.
DERIVED = {
    "resnet50_int8_b1": ("resnet50_b1", 4, 53, True),
    "mobilenet_v2_int8_b1": ("mobilenet_v2_b1", 4, 54, True),
}


# name -> source: the source's model.onnx quantized dynamically by infer-quantize
# (--mode dynamic: DynamicQuantizeLinear + MatMulInteger with int8 per-column weights, as
# ONNX Runtime's quantize_dynamic writes it); inputs and outputs are the source's.
DYNAMIC = {
    "bert_base_int8_b1": "bert_base_b1",
}


def derive_dynamic(out, name, manifest, build_dir):
    import onnx
    import flops
    source = DYNAMIC[name]
    infer_run = os.path.join(build_dir, "bin", "infer-run")
    if not os.path.isfile(infer_run):
        raise RuntimeError(f"{infer_run} is missing (infer-quantize runs the model with it): build it or pass --build-dir")
    entry = manifest["models"][source]
    folder = os.path.join(out, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    inputs = {}
    for input_name, file in entry["inputs"].items():
        shutil.copyfile(os.path.join(out, file), os.path.join(folder, os.path.basename(file)))
        inputs[input_name] = f"{name}/{os.path.basename(file)}"
    model = os.path.join(folder, "model.onnx")
    tool = os.path.join(REPO, "tools", "infer-quantize", "infer-quantize")
    proc = subprocess.run([sys.executable, tool, os.path.join(out, entry["model"]), model, "--mode", "dynamic",
                           "--infer-run", infer_run, "--no-report", "--no-progress"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or [f"infer-quantize exit {proc.returncode}"])[-1])
    total, per_op = flops.model_flops(onnx.load(model))
    description = (f"{source} quantized dynamically by infer-quantize --mode dynamic (MatMul/Gemm with "
                   f"constant weights -> DynamicQuantizeLinear + MatMulInteger, int8 per-column "
                   f"weights): {entry['description']}")
    return {"model": f"{name}/model.onnx", "inputs": inputs, "outputs": entry["outputs"], "batch": entry["batch"],
            "flops": total, "flops_by_op": per_op, "description": description, "quick": False}, proc.stdout + proc.stderr


def derive_quantized(out, name, manifest, build_dir):
    import numpy as np
    import onnx
    import flops
    source, count, seed, quick = DERIVED[name]
    infer_run = os.path.join(build_dir, "bin", "infer-run")
    if not os.path.isfile(infer_run):
        raise RuntimeError(f"{infer_run} is missing (it calibrates the quantization): build it or pass --build-dir")
    entry = manifest["models"][source]
    if len(entry["inputs"]) != 1:
        raise RuntimeError(f"{source} has {len(entry['inputs'])} inputs; quantize_qdq.py feeds one")
    (input_name, input_file), = entry["inputs"].items()
    folder = os.path.join(out, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    held_out = os.path.join(folder, os.path.basename(input_file))
    shutil.copyfile(os.path.join(out, input_file), held_out)
    shape = np.load(held_out).shape
    rng = np.random.default_rng(seed)
    calibration = []
    for i in range(count):
        path = os.path.join(folder, f"calibration_{i}.npy")
        np.save(path, rng.standard_normal(shape).astype(np.float32))
        calibration.append(path)
    model = os.path.join(folder, "model.onnx")
    proc = subprocess.run([sys.executable, os.path.join(HERE, "quantize_qdq.py"), os.path.join(out, entry["model"]),
                           model, "--infer-run", infer_run, "--calibration", ",".join(calibration),
                           "--held-out", held_out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr.strip().splitlines() or [f"quantize_qdq.py exit {proc.returncode}"])[-1])
    total, per_op = flops.model_flops(onnx.load(model))
    description = (f"{source} statically quantized in QDQ form by quantize_qdq.py (uint8 per-tensor "
                   f"activations, int8 per-channel weights, int32 bias; MinMax calibration on {count} "
                   f"standard-normal images, seed {seed}): {entry['description']}")
    return {"model": f"{name}/model.onnx", "inputs": {input_name: f"{name}/{os.path.basename(input_file)}"},
            "outputs": entry["outputs"], "batch": entry["batch"], "flops": total, "flops_by_op": per_op,
            "description": description, "quick": quick,
            "calibration": [f"{name}/{os.path.basename(p)}" for p in calibration]}, proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("build", "bench_cache"),
                        help="cache folder (created if missing; default build/bench_cache)")
    parser.add_argument("--build-dir", default="build",
                        help="the infer build whose bin/infer-run calibrates resnet50_int8_b1 (default build)")
    parser.add_argument("--force", action="store_true", help="export even when the stamp matches")
    args = parser.parse_args()

    versions = find_dependencies()
    out = os.path.abspath(args.out)
    stamp = stamp_of(versions)
    if not args.force and up_to_date(out, stamp):
        print(f"export_models.py: {out} is up to date ({len(MODELS)} models)")
        return

    sys.dont_write_bytecode = True  # keep the source tree clean
    warnings.filterwarnings("ignore", module=r"torch(\.|$)")
    warnings.filterwarnings("ignore", category=UserWarning)
    sys.path.insert(0, HERE)
    sys.path.insert(0, TORCH_MODELS_DIR)
    try:
        import torch
    except ImportError as error:
        fail(f"{sys.executable}: import failed ({error}); reinstall python3-torch python3-torchvision")

    os.makedirs(out, exist_ok=True)
    stamp_path = os.path.join(out, "stamp.txt")
    if os.path.exists(stamp_path):
        os.remove(stamp_path)  # an interrupted export must not look complete
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    manifest = {"opset": OPSET, "versions": versions, "models": {}}
    started = time.monotonic()
    for name in MODELS:
        t0 = time.monotonic()
        report = ""
        try:
            if name in DERIVED:
                manifest["models"][name], report = derive_quantized(out, name, manifest,
                                                                    os.path.abspath(args.build_dir))
            elif name in DYNAMIC:
                manifest["models"][name], report = derive_dynamic(out, name, manifest,
                                                                  os.path.abspath(args.build_dir))
            else:
                manifest["models"][name] = export_one(out, name)
        except Exception as error:  # name the model; a traceback helps no one here
            fail(f"exporting {name}: {type(error).__name__}: {error}")
        for line in report.splitlines():
            print(f"export_models.py: {name}: {line.strip()}", flush=True)
        flops = manifest["models"][name]["flops"]
        work = f"{flops / 1e9:.3f} GFLOP" if flops is not None else "FLOPs not counted"
        print(f"export_models.py: {name}: {work}, {time.monotonic() - t0:.1f} s", flush=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")
    print(f"export_models.py: wrote {out} in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
