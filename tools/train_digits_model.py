#!/usr/bin/python3
"""Train and export the demo model shipped in models/: a small CNN on scikit-learn's
digits data set (1797 8x8 grey images, bundled with scikit-learn, no download).

Run from the repository root:

    /usr/bin/python3 tools/train_digits_model.py

Writes models/digits_cnn.onnx (opset 13, input "image" [batch,1,8,8], output "logits"
[batch,10], raw logits, no Softmax), held-out samples with PyTorch's own logits as an
independent reference for the C++ tests, models/digits_cnn.json (metadata) and
models/README.md. Everything is seeded, so re-running reproduces the same files.
"""

import json
import os
import random
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 1234
EPOCHS = 60
BATCH = 32
LR = 3e-3
OPSET = 13
NUM_SAMPLES = 8
NUM_SINGLE = 4
ALLOWED_OPS = {"Conv", "Relu", "MaxPool", "Flatten", "Reshape", "Gemm"}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "models")


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.pool2 = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool1(torch.relu(self.conv1(x)))   # [N,8,4,4]
        x = self.pool2(torch.relu(self.conv2(x)))   # [N,16,2,2]
        x = torch.flatten(x, 1)                     # [N,64]
        x = torch.relu(self.fc1(x))                 # [N,32]
        return self.fc2(x)                          # [N,10] raw logits


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


def load_data():
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=0.2, stratify=y, random_state=SEED)
    return (np.ascontiguousarray(x_tr), np.ascontiguousarray(y_tr),
            np.ascontiguousarray(x_te), np.ascontiguousarray(y_te))


def train(model, x_tr, y_tr):
    xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    n = xt.shape[0]
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(n, generator=gen)
        total = 0.0
        for i in range(0, n, BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * idx.numel()
        if (epoch + 1) % 10 == 0:
            print(f"epoch {epoch + 1:3d}  train loss {total / n:.4f}")


def export(model, path):
    model.eval()
    dummy = torch.zeros(1, 1, 8, 8, dtype=torch.float32)
    torch.onnx.export(
        model, dummy, path,
        export_params=True,
        opset_version=OPSET,
        do_constant_folding=True,
        input_names=["image"],
        output_names=["logits"],
        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
        training=torch.onnx.TrainingMode.EVAL,
        keep_initializers_as_inputs=False,
    )
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    ops = [n.op_type for n in m.graph.node]
    print("op types:", ops)
    bad = [op for op in ops if op not in ALLOWED_OPS]
    if bad:
        sys.exit(f"error: exported graph uses unexpected ops {bad}")
    if any(d.data_location == onnx.TensorProto.EXTERNAL for d in m.graph.initializer):
        sys.exit("error: initializers were stored externally")
    init_names = {t.name for t in m.graph.initializer}
    if any(i.name in init_names for i in m.graph.input):
        sys.exit("error: initializers are listed as graph inputs")

    inferred = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)

    def dims(vi):
        return [d.dim_param if d.HasField("dim_param") else d.dim_value
                for d in vi.type.tensor_type.shape.dim]

    for vi in inferred.graph.input:
        print(f"input  {vi.name}: {dims(vi)}")
    for vi in inferred.graph.output:
        print(f"output {vi.name}: {dims(vi)}")
    for vi in inferred.graph.value_info:
        print(f"  value {vi.name}: {dims(vi)}")
    assert [vi.name for vi in inferred.graph.input] == ["image"]
    assert [vi.name for vi in inferred.graph.output] == ["logits"]
    assert dims(inferred.graph.input[0]) == ["batch", 1, 8, 8]
    assert dims(inferred.graph.output[0]) == ["batch", 10]
    return ops


def numpy_reference(path, x):
    """Evaluate the exported graph's weights with plain float64 NumPy (independent of torch)."""
    from onnx import numpy_helper
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in onnx.load(path).graph.initializer}

    def conv_pad1(h, k, b):
        n, _, hh, ww = h.shape
        hp = np.pad(h, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((n, k.shape[0], hh, ww))
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", hp[:, :, i:i + hh, j:j + ww], k[:, :, i, j])
        return out + b[None, :, None, None]

    def pool2(h):
        n, c, hh, ww = h.shape
        return h.reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))

    h = x.astype(np.float64)
    h = pool2(np.maximum(conv_pad1(h, w["conv1.weight"], w["conv1.bias"]), 0))
    h = pool2(np.maximum(conv_pad1(h, w["conv2.weight"], w["conv2.bias"]), 0))
    h = h.reshape(h.shape[0], -1)
    h = np.maximum(h @ w["fc1.weight"].T + w["fc1.bias"], 0)
    return h @ w["fc2.weight"].T + w["fc2.bias"]


def write_readme(meta, ops, files, meta_check):
    lines = [
        "# models/",
        "",
        "The demo model the product ships: a small CNN classifying scikit-learn's `digits`",
        "data set (1797 grey 8x8 images of hand-written digits, bundled with scikit-learn).",
        "",
        "## How it was made",
        "",
        "From the repository root:",
        "",
        "```",
        "/usr/bin/python3 tools/train_digits_model.py",
        "```",
        "",
        "(Debian's python with torch, scikit-learn, numpy and onnx.) Pixels are scaled to",
        "[0,1] (divided by 16), float32, layout N x 1 x 8 x 8. Stratified 80/20 train/test",
        f"split with seed {meta['seed']}; torch and numpy seeded with the same value, Adam,",
        f"{EPOCHS} epochs, batch {BATCH}, lr {LR}. Re-running reproduces the files.",
        "",
        "## Architecture",
        "",
        "```",
        "image [batch,1,8,8]",
        "  Conv 1->8, 3x3, pad 1 + Relu + MaxPool 2x2   -> [batch,8,4,4]",
        "  Conv 8->16, 3x3, pad 1 + Relu + MaxPool 2x2  -> [batch,16,2,2]",
        "  Flatten                                      -> [batch,64]",
        "  Gemm 64->32 + Relu                           -> [batch,32]",
        "  Gemm 32->10                                  -> logits [batch,10]",
        "```",
        "",
        f"ONNX opset {meta['opset']}; nodes in order: {', '.join(ops)}.",
        "Outputs are raw logits (no Softmax). Weights are stored inside the file.",
        "",
        f"Held-out accuracy: **{meta['test_accuracy']:.4f}** on {meta['test_size']} test images",
        f"(trained on {meta['train_size']}).",
        "",
        "## Files",
        "",
    ]
    desc = {
        "digits_cnn.onnx": "the model (input `image` [batch,1,8,8] float32, output `logits` [batch,10])",
        "digits_samples.npy": "the first 8 images of the test split, float32, shape (8,1,8,8)",
        "digits_samples_labels.npy": "their true labels, int64, shape (8,)",
        "digits_samples_expected_logits.npy":
            "PyTorch's own logits for those 8 images (eval mode), float32, shape (8,10): "
            "the independent reference the C++ tests compare against",
        "digits_cnn.json": "metadata: opset, names, split sizes, accuracy, sample labels and predictions, seed",
    }
    for i in range(NUM_SINGLE):
        desc[f"digit_{i}.npy"] = (f"sample {i} of the 8 alone, shape (1,1,8,8) "
                                  f"(label {meta['sample_labels'][i]})")
    desc["README.md"] = "this file"
    for f in files + ["README.md"]:
        lines.append(f"- `{f}`: {desc[f]}")
    lines += [
        "",
        f"Sample labels:      {meta['sample_labels']}",
        f"PyTorch predictions: {meta['sample_predictions']}",
        "",
    ]
    wrong = [i for i, (l, p) in enumerate(zip(meta["sample_labels"], meta["sample_predictions"]))
             if l != p]
    if wrong:
        lines += [
            ("Sample " if len(wrong) == 1 else "Samples ") + ", ".join(str(i) for i in wrong)
            + (" is" if len(wrong) == 1 else " are") + " misclassified by the model itself; "
            "a runtime should reproduce PyTorch's prediction there, not the label.",
            "",
        ]
    lines += [
        f"Checked against an independent float64 NumPy evaluation of the exported weights: "
        f"max abs logit difference {meta_check['max_abs_diff']:.1e} (logits reach "
        f"{meta_check['max_abs_logit']:.1f}), so a float32 runtime should match the expected "
        "logits within about 1e-4 absolute.",
        "",
    ]
    # The quantization section is measured with infer-quantize, not here: keep it as it is.
    readme = os.path.join(OUT, "README.md")
    if os.path.isfile(readme):
        with open(readme) as fh:
            old = fh.read()
        start = old.find("\n## Quantization (infer-quantize)\n")
        if start >= 0:
            lines += [old[start + 1:].rstrip("\n"), ""]
    with open(readme, "w") as fh:
        fh.write("\n".join(lines))


def main():
    torch.set_num_threads(2)
    seed_everything(SEED)
    os.makedirs(OUT, exist_ok=True)

    x_tr, y_tr, x_te, y_te = load_data()
    print(f"train {x_tr.shape}  test {x_te.shape}")

    model = DigitsCNN()
    train(model, x_tr, y_tr)

    model.eval()
    with torch.no_grad():
        test_logits = model(torch.from_numpy(x_te)).numpy()
    acc = float((test_logits.argmax(1) == y_te).mean())
    if acc < 0.95:
        sys.exit(f"error: held-out accuracy {acc:.4f} is below 0.95")

    onnx_path = os.path.join(OUT, "digits_cnn.onnx")
    ops = export(model, onnx_path)

    samples = np.ascontiguousarray(x_te[:NUM_SAMPLES], dtype=np.float32)
    labels = np.ascontiguousarray(y_te[:NUM_SAMPLES], dtype=np.int64)
    with torch.no_grad():
        expected = model(torch.from_numpy(samples)).numpy().astype(np.float32)
    preds = expected.argmax(1).astype(np.int64)

    files = ["digits_cnn.onnx"]

    def save(name, arr):
        np.save(os.path.join(OUT, name), arr)
        files.append(name)

    save("digits_samples.npy", samples)
    save("digits_samples_labels.npy", labels)
    save("digits_samples_expected_logits.npy", expected)
    for i in range(NUM_SINGLE):
        save(f"digit_{i}.npy", samples[i:i + 1].copy())

    meta = {
        "opset": OPSET,
        "input": "image",
        "output": "logits",
        "train_size": int(x_tr.shape[0]),
        "test_size": int(x_te.shape[0]),
        "test_accuracy": round(acc, 4),
        "sample_labels": [int(v) for v in labels],
        "sample_predictions": [int(v) for v in preds],
        "seed": SEED,
    }
    with open(os.path.join(OUT, "digits_cnn.json"), "w") as fh:
        json.dump(meta, fh, indent=2)
        fh.write("\n")
    files.append("digits_cnn.json")

    meta_check = {
        "max_abs_diff": float(np.abs(numpy_reference(onnx_path, samples) - expected).max()),
        "max_abs_logit": float(np.abs(expected).max()),
    }
    if meta_check["max_abs_diff"] > 1e-4:
        sys.exit(f"error: exported weights disagree with PyTorch ({meta_check['max_abs_diff']})")
    write_readme(meta, ops, files, meta_check)

    print("sample labels:      ", meta["sample_labels"])
    print("sample predictions: ", meta["sample_predictions"])
    print(f"held-out accuracy: {acc:.4f} ({int(round(acc * len(y_te)))}/{len(y_te)})")


if __name__ == "__main__":
    main()
