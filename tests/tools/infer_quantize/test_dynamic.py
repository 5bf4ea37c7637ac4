"""--mode dynamic on MatMul / Gemm models built with onnx.helper: the node pattern ONNX
Runtime's quantize_dynamic writes, outputs close to the float model's, and infer's
outputs equal to a numpy evaluation of the dynamic formula."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from conftest import FLOAT, init, save_model, value


def mlp(path, rng):
    """x [batch,16] -> MatMul W1 -> Add b1 -> Relu -> Gemm(W2 [10,32], b2, transB) -> y [batch,10]."""
    w1 = (rng.standard_normal((16, 32)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(32) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((10, 32)) * 0.3).astype(np.float32)
    b2 = (rng.standard_normal(10) * 0.1).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"], name="mm1"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="add1"),
             helper.make_node("Relu", ["hb"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "W2", "b2"], ["y"], name="fc2", transB=1)]
    return save_model(path, nodes, [value("x", FLOAT, ["batch", 16])], [value("y", FLOAT, ["batch", 10])],
                      [init("W1", w1), init("b1", b1), init("W2", w2), init("b2", b2)]), (w1, b1, w2, b2)


def float_forward(x, weights):
    w1, b1, w2, b2 = weights
    return np.maximum(x @ w1 + b1, 0) @ w2.T + b2


def dynamic_quantize_linear(x):
    """ONNX DynamicQuantizeLinear, from the operator's specification."""
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = np.float32((hi - lo) / 255)
    zero = np.clip(np.round((0 - lo) / scale), 0, 255)
    q = np.clip(np.round(x / scale) + zero, 0, 255).astype(np.uint8)
    return q, scale, np.uint8(zero)


def numpy_dynamic(model, x):
    """Evaluates the dynamically quantized MLP's graph with numpy."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env["x"] = x
    for node in model.graph.node:
        ins = [env[i] for i in node.input]
        op = node.op_type
        if op == "DynamicQuantizeLinear":
            outs = dynamic_quantize_linear(ins[0])
        elif op == "MatMulInteger":
            a = ins[0].astype(np.int64) - ins[2].astype(np.int64)
            b = ins[1].astype(np.int64) - ins[3].astype(np.int64).reshape(1, -1)
            outs = [(a @ b).astype(np.int32)]
        elif op == "Cast":
            outs = [ins[0].astype(np.float32)]
        elif op == "Mul":
            outs = [(ins[0] * ins[1]).astype(np.float32)]
        elif op == "Add":
            outs = [(ins[0] + ins[1]).astype(np.float32)]
        elif op == "Relu":
            outs = [np.maximum(ins[0], 0)]
        else:
            raise AssertionError(f"unexpected op {op}")
        for name, v in zip(node.output, outs):
            env[name] = v
    return env["y"]


@pytest.mark.parametrize("extra", [[], ["--weight-type", "uint8", "--per-tensor-weights"]],
                         ids=["int8-per-column", "uint8-per-tensor"])
def test_dynamic_mlp(tmp_path, run_tool, extra):
    rng = np.random.default_rng(0)
    path, weights = mlp(tmp_path / "mlp.onnx", rng)
    x = rng.standard_normal((64, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "mlp_dynamic.onnx"
    proc = run_tool(path, out, "--mode", "dynamic", "--eval", tmp_path / "x.npy", *extra)
    assert proc.returncode == 0, proc.stderr
    assert "dynamic: 2 MatMul/Gemm node(s)" in proc.stdout and "cosine similarity" in proc.stdout
    model = onnx.load(out)
    ops = [n.op_type for n in model.graph.node]
    assert "MatMul" not in ops and "Gemm" not in ops
    assert ops.count("DynamicQuantizeLinear") == 2 and ops.count("MatMulInteger") == 2 and ops.count("Cast") == 2
    for node in model.graph.node:
        if node.op_type == "MatMulInteger":
            inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
            w = inits[node.input[1]]
            assert w.dtype == (np.uint8 if "uint8" in extra else np.int8)
            assert inits[node.input[3]].shape == (() if extra else (w.shape[1],))
        if node.op_type == "Cast":
            assert node.attribute[0].i == TensorProto.FLOAT
    ours = infer.Session(str(out), threads=2).run({"x": x})["y"]
    reference = float_forward(x.astype(np.float64), weights)
    cosine = np.sum(ours * reference) / np.sqrt(np.sum(ours ** 2) * np.sum(reference ** 2))
    assert cosine > 0.999
    assert np.max(np.abs(ours - reference)) < 0.05 * np.max(np.abs(reference))
    np.testing.assert_allclose(ours, numpy_dynamic(model, x), rtol=1e-4, atol=1e-4)


def test_dynamic_shares_one_quantizer_per_input_and_keeps_float_nodes(tmp_path, run_tool):
    rng = np.random.default_rng(1)
    ws = [(rng.standard_normal((8, 8)) * 0.5).astype(np.float32) for _ in range(3)]
    nodes = [helper.make_node("MatMul", ["x", f"W{k}"], [f"y{k}"], name=f"proj{k}") for k in range(3)]
    path = save_model(tmp_path / "qkv.onnx", nodes, [value("x", FLOAT, [4, 8])],
                      [value(f"y{k}", FLOAT, [4, 8]) for k in range(3)], [init(f"W{k}", w) for k, w in enumerate(ws)])
    out = tmp_path / "qkv_dynamic.onnx"
    proc = run_tool(path, out, "--mode", "dynamic", "--keep-float", "proj2", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "generated inputs" in proc.stdout  # the report says what it ran on
    ops = [n.op_type for n in onnx.load(out).graph.node]
    assert ops.count("DynamicQuantizeLinear") == 1 and ops.count("MatMulInteger") == 2 and ops.count("MatMul") == 1
