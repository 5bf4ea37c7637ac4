"""The shipped digits model quantized by infer-quantize: held-out accuracy against the
true labels within 0.5 points of FP32, the written QDQ layout and numbers, and infer's
outputs against an independent numpy evaluation of the QDQ graph."""
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import infer


def accuracy(model, images, labels):
    logits = infer.Session(model, threads=2).run({"image": images})["logits"]
    return float(np.mean(logits.argmax(axis=1) == labels)), logits


def test_int8_accuracy_within_half_a_point_of_fp32(digits, digits_int8):
    model, _, images_path, labels_path = digits
    images, labels = np.load(images_path), np.load(labels_path)
    assert images.shape == (360, 1, 8, 8) and labels.shape == (360,)
    fp32, _ = accuracy(model, images, labels)
    int8, _ = accuracy(digits_int8[0], images, labels)
    assert fp32 == pytest.approx(353 / 360)  # models/README.md: 0.9806
    assert abs(int8 - fp32) <= 0.005, (fp32, int8)


@pytest.mark.parametrize("extra", [["--method", "entropy"], ["--method", "percentile"],
                                   ["--symmetric-activations"], ["--per-tensor-weights"],
                                   ["--method", "entropy", "--symmetric-activations"]],
                         ids=["entropy", "percentile", "int8-symmetric", "per-tensor", "entropy-int8-symmetric"])
def test_other_settings_keep_the_accuracy(digits, tmp_path, run_tool, extra):
    model, calib, images_path, labels_path = digits
    out = tmp_path / "q.onnx"
    proc = run_tool(model, out, "--calibration", calib, "--no-report", "--no-progress", "--threads", "2", *extra)
    assert proc.returncode == 0, proc.stderr
    images, labels = np.load(images_path), np.load(labels_path)
    fp32, _ = accuracy(model, images, labels)
    q, _ = accuracy(str(out), images, labels)
    assert abs(q - fp32) <= 0.01, (extra, fp32, q)
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(out).graph.initializer}
    if "--symmetric-activations" in extra:
        zps = [v for k, v in inits.items() if k.endswith("_zero_point") and v.dtype != np.int32]
        assert zps and all(v.dtype == np.int8 and not v.any() for v in zps)
    if "--per-tensor-weights" in extra:
        assert inits["conv1.weight_scale"].shape == () and inits["fc1.weight_scale"].shape == ()


def test_layout_follows_onnx_runtime_conventions(digits, digits_int8):
    model = onnx.load(digits_int8[0])
    float_inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(digits[0]).graph.initializer}
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("QuantizeLinear") == 8 and "Conv" in ops and "Relu" in ops
    # every Conv/Gemm reads DequantizeLinear outputs only: activation, weight, bias
    for node in model.graph.node:
        if node.op_type in ("Conv", "Gemm", "MaxPool", "Flatten"):
            assert all(producers[i].op_type == "DequantizeLinear" for i in node.input), node.name
        if node.op_type == "Relu":  # Relu after Conv/Gemm: its output is quantized, the Conv's is not
            assert producers[node.input[0]].op_type in ("Conv", "Gemm")
    for w in ("conv1.weight", "conv2.weight", "fc1.weight", "fc2.weight"):
        q, scale, zero = inits[f"{w}_quantized"], inits[f"{w}_scale"], inits[f"{w}_zero_point"]
        assert q.dtype == np.int8 and zero.dtype == np.int8 and not zero.any()
        assert scale.shape == (q.shape[0],)  # per output channel (Gemm has transB=1)
        f = float_inits[w]
        restored = q.astype(np.float32) * scale.reshape((-1,) + (1,) * (q.ndim - 1))
        assert np.all(np.abs(restored - f) <= scale.reshape((-1,) + (1,) * (q.ndim - 1)) / 2 * (1 + 1e-5))
    # int32 bias with scale x_scale * w_scale
    x_of = {"conv1": "image", "conv2": "/pool1/MaxPool_output_0", "fc1": "/Flatten_output_0", "fc2": "/Relu_2_output_0"}
    for layer, x in x_of.items():
        b = inits[f"{layer}.bias_quantized"]
        assert b.dtype == np.int32
        expected = (np.float64(inits[f"{x}_scale"]) * inits[f"{layer}.weight_scale"].astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(inits[f"{layer}.bias_scale"], expected)
        assert np.all(np.abs(b * expected.astype(np.float64) - float_inits[f"{layer}.bias"]) <= expected / 2 * 1.0001)
    # MaxPool and Flatten pass their input's scale and zero point through
    assert inits["/pool1/MaxPool_output_0_scale"] == inits["/Relu_output_0_scale"]
    assert inits["/Flatten_output_0_scale"] == inits["/pool2/MaxPool_output_0_scale"]
    assert inits["/Flatten_output_0_zero_point"] == inits["/pool2/MaxPool_output_0_zero_point"]
    # activations: uint8; the graph's input and output stay float under their names
    assert inits["image_zero_point"].dtype == np.uint8
    assert [i.name for i in model.graph.input] == ["image"] and [o.name for o in model.graph.output] == ["logits"]


# ---- an independent numpy evaluation of the QDQ graph ----------------------------------

def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _conv(x, w, b, pads):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    out = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def numpy_qdq_eval(model, x):
    """Evaluates the QDQ digits graph with numpy (float64 math, ONNX's rounding rules)."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env["image"] = x
    for node in model.graph.node:
        ins = [env[i] for i in node.input]
        op = node.op_type
        if op == "QuantizeLinear":
            dtype = ins[2].dtype
            info = np.iinfo(dtype)
            y = np.clip(np.round(ins[0].astype(np.float32) / ins[1]) + ins[2].astype(np.int32), info.min, info.max)
            out = y.astype(dtype)
        elif op == "DequantizeLinear":
            axis = _attr(node, "axis", 1)
            scale, zero = ins[1].astype(np.float64), ins[2].astype(np.float64)
            if scale.ndim == 1:
                shape = [1] * ins[0].ndim
                shape[axis] = -1
                scale, zero = scale.reshape(shape), zero.reshape(shape)
            out = ((ins[0].astype(np.float64) - zero) * scale).astype(np.float32)
        elif op == "Conv":
            out = _conv(ins[0].astype(np.float64), ins[1], ins[2], _attr(node, "pads", [0, 0, 0, 0])).astype(np.float32)
        elif op == "Relu":
            out = np.maximum(ins[0], 0)
        elif op == "MaxPool":
            n, c, h, w = ins[0].shape
            out = ins[0].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        elif op == "Flatten":
            out = ins[0].reshape(ins[0].shape[0], -1)
        elif op == "Gemm":
            b = ins[1].T if _attr(node, "transB", 0) else ins[1]
            out = (ins[0].astype(np.float64) @ b + ins[2]).astype(np.float32)
        else:
            raise AssertionError(f"unexpected op {op}")
        env[node.output[0]] = out
    return env["logits"]


def test_infer_matches_a_numpy_evaluation_of_the_qdq_graph(digits, digits_int8):
    images = np.load(digits[2])[:120]
    model = onnx.load(digits_int8[0])
    reference = numpy_qdq_eval(model, images)
    ours = infer.Session(digits_int8[0], threads=2).run({"image": images})["logits"]
    step = float(numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == "logits_scale")))
    diff = np.abs(ours - reference)
    # the same quantized arithmetic: equal up to a rare one-step rounding flip inside
    assert np.mean(diff <= step * 0.01 + 1e-5) > 0.97
    assert diff.max() <= 4 * step
    assert np.all(ours.argmax(axis=1) == reference.argmax(axis=1)) or np.mean(
        ours.argmax(axis=1) == reference.argmax(axis=1)) > 0.99


def test_report_and_progress(digits_int8):
    proc = digits_int8[1]
    out = proc.stdout
    assert "wrote" in out and "static QDQ" in out and "minmax calibration" in out
    assert "accuracy against the float model on --eval" in out
    for column in ("max abs error", "mean abs error", "cosine similarity", "top-1 agreement"):
        assert column in out
    row = next(line for line in out.splitlines() if line.strip().startswith("logits"))
    cells = row.split()
    assert float(cells[3]) > 0.999  # cosine
    same, rows = map(int, cells[4].split("/"))
    assert rows == 360 and same >= 354
    # stderr is not a terminal here: periodic progress lines, ending at 100%
    lines = proc.stderr.splitlines()
    assert any(line.startswith("infer-quantize: calibrating [") for line in lines)
    assert any("calibrating" in line and "(100%)" in line for line in lines)
    assert "\r" not in proc.stderr and "Traceback" not in proc.stderr
