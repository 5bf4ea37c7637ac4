"""infer.Session from Python against independent references: PyTorch's logits for the
digits model, infer-run's own outputs, numpy for the per-dtype and symbolic-shape models."""
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import infer
from conftest import FLOAT, value

# numpy dtype -> ONNX element type: every dtype the module feeds.
DTYPES = {
    np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16,
    np.int8: TensorProto.INT8, np.int16: TensorProto.INT16, np.int32: TensorProto.INT32,
    np.int64: TensorProto.INT64, np.uint8: TensorProto.UINT8, np.uint16: TensorProto.UINT16,
    np.uint32: TensorProto.UINT32, np.uint64: TensorProto.UINT64, np.bool_: TensorProto.BOOL,
}


def test_digits_logits_match_pytorch_and_infer_run(digits, infer_run, tmp_path):
    model, samples, expected, predictions = digits
    session = infer.Session(model, threads=2)
    logits = session.run({"image": samples})["logits"]
    assert logits.dtype == np.float32 and logits.shape == (8, 10)
    assert np.max(np.abs(logits - expected)) <= 1e-4  # models/README.md: float32 within ~1e-4
    assert list(logits.argmax(axis=1)) == predictions
    # infer-run on the same file with the same threads computes the same bytes.
    out_dir = tmp_path / "out"
    subprocess.run([infer_run, model, "--threads", "2", "--input",
                    "image=" + digits_samples_path(model), "--output-dir", str(out_dir)],
                   check=True, stdout=subprocess.DEVNULL)
    with open(out_dir / "outputs.json") as f:
        files = json.load(f)
    np.testing.assert_array_equal(logits, np.load(out_dir / files["logits"]))


def digits_samples_path(model):
    return os.path.join(os.path.dirname(model), "digits_samples.npy")


def test_signature(digits):
    session = infer.Session(digits[0])
    (image,) = session.inputs
    assert image.name == "image" and image.dtype == np.dtype(np.float32) and image.type == "float32"
    assert image.shape == ["batch", 1, 8, 8]
    (logits,) = session.get_outputs()
    assert logits.name == "logits" and logits.shape == ["batch", 10]
    assert repr(image) == "ValueInfo(name='image', dtype=float32, shape=['batch', 1, 8, 8])"
    assert session.backends == ["cpu"]
    assert session.model_path == digits[0]


def test_run_with_output_names_as_onnxruntime_spells_it(make_model):
    x = value("x", FLOAT, [2, 3])
    model = make_model("two.onnx", [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["x"], ["n"])],
                       [x], [value("r", FLOAT, [2, 3]), value("n", FLOAT, [2, 3])])
    session = infer.Session(model)
    a = np.array([[1.5, -2, 3], [-4, 5, -6]], np.float32)
    n, r = session.run(["n", "r"], {"x": a})
    np.testing.assert_array_equal(n, -a)
    np.testing.assert_array_equal(r, np.maximum(a, 0))
    assert [o.shape for o in session.run(None, {"x": a})] == [(2, 3), (2, 3)]
    assert sorted(session.run({"x": a})) == ["n", "r"]


@pytest.mark.parametrize("dtype", list(DTYPES), ids=lambda d: np.dtype(d).name)
def test_every_input_dtype(make_model, dtype):
    # Transpose runs on the cpu backend for every dtype; numpy gives the expected order.
    elem = DTYPES[dtype]
    model = make_model(f"t_{np.dtype(dtype).name}.onnx", [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])],
                       [value("x", elem, [2, 3, 4])], [value("y", elem, [4, 2, 3])])
    session = infer.Session(model)
    assert session.inputs[0].dtype == np.dtype(dtype)
    rng = np.random.default_rng(7)
    if dtype == np.bool_:
        a = rng.random((2, 3, 4)) > 0.5
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=(2, 3, 4), dtype=dtype, endpoint=True)
    else:
        a = (rng.standard_normal((2, 3, 4)) * 100).astype(dtype)
    (y,) = session.run(None, {"x": a})
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, a.transpose(2, 0, 1))


def test_bfloat16_output_comes_back_as_float32(make_model):
    # Cast to bfloat16 rounds to nearest even; numpy does the same on the bits.
    model = make_model("bf16.onnx", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
                       [value("x", FLOAT, [5])], [value("y", TensorProto.BFLOAT16, [5])])
    session = infer.Session(model)
    assert session.outputs[0].dtype is None and session.outputs[0].type == "bfloat16"
    a = np.array([1.0, 3.14159, -2.71828, 65504.0, 1e-3], np.float32)
    (y,) = session.run(None, {"x": a})
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    expected = rounded.astype(np.uint32).view(np.float32)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, expected)


def test_symbolic_and_unknown_dims(make_model):
    model = make_model("sym.onnx", [helper.make_node("Add", ["x", "b"], ["y"])],
                       [value("x", FLOAT, ["batch", None, 3])], [value("y", FLOAT, ["batch", None, 3])],
                       [numpy_helper.from_array(np.array([1, 2, 3], np.float32), "b")])
    session = infer.Session(model)
    assert session.inputs[0].shape == ["batch", None, 3]
    for batch, middle in ((1, 1), (5, 2), (17, 4)):
        a = np.arange(batch * middle * 3, dtype=np.float32).reshape(batch, middle, 3)
        np.testing.assert_array_equal(session.run({"x": a})["y"], a + np.array([1, 2, 3], np.float32))


def test_inputs_are_read_in_place_when_the_layout_allows(digits):
    _, samples, expected, _ = digits
    contiguous = np.ascontiguousarray(samples)
    tensor = infer._as_tensor(contiguous, "float32")
    assert tensor.address == contiguous.ctypes.data and tensor.nbytes == contiguous.nbytes and tensor.borrowed
    readonly = contiguous.copy()
    readonly.flags.writeable = False
    assert infer._as_tensor(readonly, "float32").address == readonly.ctypes.data
    # Not C-contiguous: a copy in C order is what gets passed (and the values are right).
    strided = np.asfortranarray(samples)
    assert infer._as_tensor(strided, "float32").address != strided.ctypes.data
    session = infer.Session(digits[0])
    np.testing.assert_allclose(session.run({"image": strided})["logits"], expected, atol=1e-4)
    # A list is converted to the declared dtype.
    np.testing.assert_allclose(session.run({"image": samples.tolist()})["logits"], expected, atol=1e-4)
    # The run leaves its input as it was.
    before = contiguous.copy()
    session.run({"image": contiguous})
    np.testing.assert_array_equal(contiguous, before)


def test_outputs_own_their_memory(digits):
    model, samples, expected, _ = digits
    session = infer.Session(model)
    logits = session.run({"image": samples})["logits"]
    assert isinstance(logits.base, infer._Storage)
    assert logits.base.address == logits.ctypes.data and logits.base.nbytes == logits.nbytes
    assert logits.flags.c_contiguous and logits.flags.writeable and not logits.flags.owndata
    del session
    import gc
    gc.collect()
    np.testing.assert_allclose(logits, expected, atol=1e-4)  # still valid without the session
    logits[0, 0] = 42.0  # and the caller's to change
    assert logits[0, 0] == 42.0


def test_concurrent_runs_from_8_threads(digits):
    model, samples, _, _ = digits
    session = infer.Session(model, threads=2)
    single = [session.run({"image": samples[i:i + 1]})["logits"] for i in range(8)]

    def work(worker):
        for k in range(40):
            i = (worker + k) % 8
            got = session.run({"image": samples[i:i + 1]})["logits"]
            if not np.array_equal(got, single[i]):
                return f"thread {worker} run {k}: sample {i} differs"
        return None

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert [r for r in pool.map(work, range(8)) if r] == []


def test_the_gil_is_released_during_run(make_model):
    # Four chained 512x1024 @ 1024x1024 MatMuls: long enough that a Python thread that
    # ticks every millisecond gets many ticks in, which it cannot while run holds the GIL.
    rng = np.random.default_rng(1)
    weights = [numpy_helper.from_array((rng.standard_normal((1024, 1024)) / 32).astype(np.float32), f"w{i}")
               for i in range(4)]
    names = ["x", "h0", "h1", "h2", "y"]
    nodes = [helper.make_node("MatMul", [names[i], f"w{i}"], [names[i + 1]]) for i in range(4)]
    model = make_model("mm.onnx", nodes, [value("x", FLOAT, [512, 1024])], [value("y", FLOAT, [512, 1024])], weights)
    session = infer.Session(model, threads=1)
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    session.run({"x": x})
    ticks, done = [0], threading.Event()

    def ticker():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    time.sleep(0.02)
    before, start = ticks[0], time.perf_counter()
    for _ in range(3):
        session.run({"x": x})
    elapsed, during = time.perf_counter() - start, ticks[0] - before
    done.set()
    thread.join()
    assert elapsed > 0.02, f"the runs took {elapsed * 1e3:.1f} ms: too short to tell"
    assert during >= 5, f"the ticker ran {during} times in {elapsed * 1e3:.0f} ms of run: the GIL was held"


def test_plan_as_text_and_dict(digits):
    session = infer.Session(digits[0], optimization_level=3)
    plan = session.plan
    assert plan.text.startswith("nodes (") and str(plan) == plan.text
    d = plan.to_dict()
    assert {n["backend"] for n in d["nodes"]} == {"cpu"}
    assert d["optimizer"]["level"] == 3
    assert any(n["op_type"] == "FusedConv" for n in d["nodes"])
    assert d["totals"]["partitions"] == len(d["partitions"]) >= 1
    assert infer.Session(digits[0], optimization_level=0).plan.to_dict()["optimizer"]["level"] == 0


def cpu_has_bf16_gemm():
    """AVX-512F and AVX512_BF16 in /proc/cpuinfo: where the cpu plugin computes in bf16."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx512f" in flags and "avx512_bf16" in flags


def test_bf16_precision_against_pytorchs_logits(digits):
    model, samples, expected, predictions = digits
    session = infer.Session(model, threads=2, precision="bf16")
    logits = session.run({"image": samples})["logits"]
    reduced = session.plan.to_dict()["compute_precision"]
    assert reduced["requested"] == "bf16"
    if cpu_has_bf16_gemm():
        # The convolutions and the classifier compute from bfloat16-rounded inputs: logits
        # of magnitude up to ~20 move by up to a few tenths, never the predicted class here.
        assert len(reduced["reduced_nodes"]) >= 2, reduced
        assert all(n.endswith(": bfloat16 on cpu") for n in reduced["reduced_nodes"])
        assert 1e-4 < np.max(np.abs(logits - expected)) <= 0.5
    else:
        assert reduced["reduced_nodes"] == []
        assert np.max(np.abs(logits - expected)) <= 1e-4
    assert list(logits.argmax(axis=1)) == predictions


def test_deployment_file_and_overrides(repo, digits):
    config = os.path.join(repo, "configs", "example_split.yaml")
    split = infer.Session(config=config)
    assert split.backends == ["example", "cpu"]
    np.testing.assert_allclose(split.run({"image": digits[1]})["logits"], digits[2], atol=1e-4)
    # Arguments win over the file's values.
    only_cpu = infer.Session(config=config, backends=["cpu"])
    assert only_cpu.backends == ["cpu"]
    assert only_cpu.plan.to_dict()["optimizer"]["level"] == 1  # the file's level stays


def test_list_devices():
    backends = {b["backend"]: b for b in infer.list_devices()}
    cpu = backends["cpu"]
    assert cpu["unavailable"] is None and cpu["plugin_path"].endswith("libinfer_plugin_cpu.so")
    (device,) = cpu["devices"]
    assert device["kind"] == "cpu" and device["host_addressable"] and device["compute_units"] >= 1
    assert backends["example"]["devices"][0]["kind"] == "accelerator"


def test_no_reference_or_memory_growth_over_10000_runs(digits):
    import gc
    import resource
    model, samples, _, _ = digits
    session = infer.Session(model, threads=1)
    x = np.ascontiguousarray(samples[:1])
    feeds = {"image": x}
    for _ in range(200):
        session.run(feeds)
    gc.collect()
    refs = (sys.getrefcount(x), sys.getrefcount(feeds), sys.getrefcount(session))
    objects = len(gc.get_objects())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(10000):
        out = session.run(feeds)["logits"]
    del out
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(feeds), sys.getrefcount(session)) == refs
    assert len(gc.get_objects()) <= objects + 10
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss
    assert grown_kb < 8 * 1024, f"peak RSS grew by {grown_kb} KiB over 10000 runs"
