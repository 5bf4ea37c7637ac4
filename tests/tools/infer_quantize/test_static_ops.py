"""Static quantization of a model using every op infer-quantize handles (Conv, Relu,
MaxPool, AveragePool, Concat, Mul, Add, Transpose, Reshape, GlobalAveragePool, Flatten,
MatMul): where the Q/DQ pairs go, shared scales, keep-float, and closeness to float."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from conftest import FLOAT, init, save_model, value


@pytest.fixture(scope="module")
def ops_model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ops")
    rng = np.random.default_rng(7)
    inits = [init("W1", (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)),
             init("b1", (rng.standard_normal(8) * 0.1).astype(np.float32)),
             init("s", rng.uniform(0.5, 1.5, (1, 16, 1, 1)).astype(np.float32)),
             init("shape", np.array([1, 256], np.int64)),
             init("Wm", (rng.standard_normal((256, 10)) * 0.1).astype(np.float32)),
             init("Wf", (rng.standard_normal((16, 10)) * 0.3).astype(np.float32))]
    nodes = [helper.make_node("Conv", ["x", "W1", "b1"], ["c1"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
             helper.make_node("MaxPool", ["r1"], ["p1"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["r1"], ["a1"], name="avgpool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Concat", ["p1", "a1"], ["cat"], name="concat", axis=1),
             helper.make_node("Mul", ["cat", "s"], ["m"], name="mul"),
             helper.make_node("Add", ["m", "cat"], ["add"], name="add"),
             helper.make_node("Transpose", ["add"], ["t"], name="transpose", perm=[0, 2, 3, 1]),
             helper.make_node("Reshape", ["t", "shape"], ["rs"], name="reshape"),
             helper.make_node("GlobalAveragePool", ["add"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["rs", "Wm"], ["mm"], name="matmul"),
             helper.make_node("MatMul", ["f", "Wf"], ["mm2"], name="matmul2"),
             helper.make_node("Add", ["mm", "mm2"], ["y"], name="sum")]
    path = save_model(tmp / "ops.onnx", nodes, [value("x", FLOAT, [1, 3, 8, 8])], [value("y", FLOAT, [1, 10])], inits)
    calib = rng.uniform(0, 1, (6, 3, 8, 8)).astype(np.float32)  # 6 samples of the fixed batch 1
    np.save(tmp / "calib.npy", calib)
    return path, tmp / "calib.npy", calib, tmp


def quantize(run_tool, ops_model, name, *extra):
    path, calib_path, _, tmp = ops_model
    out = tmp / name
    proc = run_tool(path, out, "--calibration", calib_path, "--no-progress", *extra)
    assert proc.returncode == 0, proc.stderr
    return onnx.load(out), str(out), proc


def test_qdq_placement_and_shared_scales(run_tool, ops_model):
    model, out, proc = quantize(run_tool, ops_model, "ops_q.onnx")
    assert "calibration on 6 run(s)" in proc.stdout  # the [6,...] file split along the fixed batch
    producers = {o: n for n in model.graph.node for o in n.output}
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    by_name = {n.name: n for n in model.graph.node}
    for name in ("conv", "maxpool", "avgpool", "concat", "mul", "add", "transpose", "reshape", "gap", "flatten",
                 "matmul", "matmul2", "sum"):
        node = by_name[name]
        float_inputs = [i for i in node.input if i != "shape"]
        assert all(producers[i].op_type == "DequantizeLinear" for i in float_inputs), name
    # Relu after Conv: the Relu's output is quantized, the Conv's is not
    assert producers[by_name["relu"].input[0]].op_type == "Conv"
    assert "r1_scale" in inits and "c1_scale" not in inits
    # pass-through and MaxPool outputs take their input's scale and zero point
    for out_name, in_name in (("p1", "r1"), ("t", "add"), ("rs", "add"), ("f", "g")):
        assert inits[f"{out_name}_scale"] == inits[f"{in_name}_scale"], out_name
        assert inits[f"{out_name}_zero_point"] == inits[f"{in_name}_zero_point"], out_name
    # AveragePool and Concat have scales of their own; Mul's constant is stored quantized
    assert "a1_scale" in inits and "cat_scale" in inits and inits["s_quantized"].dtype == np.uint8
    # MatMul weights per output column (axis 1), Conv per output channel
    assert inits["Wm_scale"].shape == (10,) and inits["W1_scale"].shape == (8,)
    dq_wm = next(n for n in model.graph.node if n.output[0] == "Wm_DequantizeLinear_Output")
    assert helper.get_attribute_value(dq_wm.attribute[0]) == 1
    assert inits["b1_quantized"].dtype == np.int32


def test_close_to_float(run_tool, ops_model):
    path, _, calib, _ = ops_model
    _, out, proc = quantize(run_tool, ops_model, "ops_close.onnx")
    ref_session, q_session = infer.Session(path, threads=2), infer.Session(out, threads=2)
    for x in calib:
        a = ref_session.run({"x": x[None]})["y"]
        b = q_session.run({"x": x[None]})["y"]
        cosine = np.sum(a * b) / np.sqrt(np.sum(a * a) * np.sum(b * b))
        assert cosine > 0.995
    assert "not held out" in proc.stdout  # no --eval: the report says it used the calibration inputs


def test_keep_float(run_tool, ops_model):
    model, _, _ = quantize(run_tool, ops_model, "ops_keep.onnx", "--keep-float", "conv,matmul2",
                           "--keep-float-op", "Concat")
    by_name = {n.name: n for n in model.graph.node}
    names = {n.name for n in model.graph.node}
    assert list(by_name["conv"].input) == ["x", "W1", "b1"]  # float input, weight and bias
    assert "x_QuantizeLinear" not in names
    assert by_name["matmul2"].input[1] == "Wf"
    producers = {o: n for n in model.graph.node for o in n.output}
    # Concat reads float tensors; its output is still quantized for the Mul and Add reading it
    assert all(producers[i].op_type in ("MaxPool", "AveragePool") for i in by_name["concat"].input)
    assert producers[by_name["mul"].input[0]].op_type == "DequantizeLinear"
