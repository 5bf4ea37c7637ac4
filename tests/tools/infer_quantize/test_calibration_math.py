"""The numbers infer-quantize computes, against hand / numpy references: scales and zero
points, percentile ranges, the entropy threshold, weight and bias quantization."""
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from conftest import FLOAT, init, save_model, value
from infer_quantize import calibrate, params
from infer_quantize.data import Sample


def test_uint8_asymmetric_params_by_hand():
    scale, zero = params.activation_qparams(-1.0, 3.0)
    assert scale == np.float32(4.0 / 255) and zero.dtype == np.uint8 and int(zero) == round(1.0 / (4.0 / 255))
    # the range is widened to include 0
    scale, zero = params.activation_qparams(0.5, 2.0)
    assert scale == np.float32(2.0 / 255) and int(zero) == 0
    scale, zero = params.activation_qparams(-2.0, -0.5)
    assert scale == np.float32(2.0 / 255) and int(zero) == 255


def test_int8_params_by_hand():
    scale, zero = params.activation_qparams(-1.0, 3.0, "int8", symmetric=True)
    assert scale == np.float32(3.0 / 127) and zero.dtype == np.int8 and int(zero) == 0
    scale, zero = params.activation_qparams(-1.0, 3.0, "int8", symmetric=False)
    assert scale == np.float32(4.0 / 255) and int(zero) == round(-128 + 1.0 / (4.0 / 255))


def test_all_zero_tensor_gets_a_usable_scale():
    scale, zero = params.activation_qparams(0.0, 0.0)
    assert scale == 1.0 and int(zero) == 0


@pytest.mark.parametrize("axis", [0, 1, None])
def test_weights_round_trip_within_half_a_step_per_channel(axis):
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((6, 5, 3, 3)) * rng.uniform(0.01, 3, size=(6, 1, 1, 1))).astype(np.float32)
    q, scale = params.quantize_weight(w, axis)
    assert q.dtype == np.int8 and q.min() >= -127
    if axis is None:
        assert scale.shape == () and scale == np.float32(np.abs(w).max() / 127)
        restored = q.astype(np.float32) * scale
        assert np.all(np.abs(restored - w) <= scale / 2 * (1 + 1e-5))
        return
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    np.testing.assert_array_equal(scale, (np.abs(moved).max(axis=1) / 127.0).astype(np.float32))
    shape = [1] * 4
    shape[axis] = -1
    restored = q.astype(np.float32) * scale.reshape(shape)
    error = np.moveaxis(np.abs(restored - w), axis, 0).reshape(w.shape[axis], -1).max(axis=1)
    assert np.all(error <= scale / 2 * (1 + 1e-5))
    # each channel's largest weight is exactly +-127 steps
    assert np.all(np.moveaxis(np.abs(q), axis, 0).reshape(w.shape[axis], -1).max(axis=1) == 127)


def test_percentile_range_matches_numpy_within_a_bin():
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.standard_normal(200_000), [40.0, -25.0, 60.0]])
    lo, hi = x.min(), x.max()
    bins = 2048
    hist = np.histogram(x, bins=bins, range=(lo, hi))[0]
    for p in (99.0, 99.9, 99.99):
        got = calibrate.percentile_range(hist, lo, hi, p)
        width = (hi - lo) / bins
        assert abs(got[1] - np.percentile(x, p)) <= width * 1.001
        assert abs(got[0] - np.percentile(x, 100 - p)) <= width * 1.001
    assert calibrate.percentile_range(hist, lo, hi, 100.0) == (pytest.approx(lo), pytest.approx(hi))


def test_entropy_threshold_clips_outliers():
    rng = np.random.default_rng(5)
    x = np.abs(np.concatenate([rng.standard_normal(500_000), np.full(20, 100.0)]))
    hist = np.histogram(x, bins=2048, range=(0, x.max()))[0]
    t = calibrate.entropy_threshold(hist, x.max(), 127)
    assert 2.5 < t < 20.0  # well below the max (100), above the bulk of a unit normal
    # without outliers the threshold stays close to the data's own extent
    y = np.abs(rng.uniform(-1, 1, 200_000))
    t_uniform = calibrate.entropy_threshold(np.histogram(y, bins=2048, range=(0, y.max()))[0], y.max(), 127)
    assert t_uniform > 0.9 * y.max()


def test_kl_divergence_of_identical_distributions_is_zero():
    p = np.array([1.0, 2.0, 3.0, 0.0])
    assert calibrate.kl_divergence(p, p.copy()) == pytest.approx(0.0, abs=1e-3)  # smoothing only
    assert calibrate.kl_divergence(p, np.array([3.0, 2.0, 1.0, 0.0])) > 0


def add_model(path, c):
    """y = x + c for x [batch, 8]."""
    return save_model(path, [helper.make_node("Add", ["x", "c"], ["y"], name="add")],
                      [value("x", FLOAT, ["batch", 8])], [value("y", FLOAT, ["batch", 8])], [init("c", c)])


def read_inits(path):
    return {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}


def test_minmax_scales_in_the_written_model(tmp_path, run_tool):
    rng = np.random.default_rng(1)
    c = np.linspace(-0.5, 1.5, 8).astype(np.float32)
    model = add_model(tmp_path / "add.onnx", c)
    calib = tmp_path / "calib"
    calib.mkdir()
    xs = [rng.uniform(-2, 5, (4, 8)).astype(np.float32) for _ in range(3)]
    for k, x in enumerate(xs):
        np.save(calib / f"x_{k}.npy", x)
    out = tmp_path / "q.onnx"
    proc = run_tool(model, out, "--calibration", calib, "--method", "minmax", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    inits = read_inits(out)
    x_all = np.concatenate(xs)
    for name, data in (("x", x_all), ("y", x_all + c)):
        lo, hi = min(float(data.min()), 0.0), max(float(data.max()), 0.0)
        scale = np.float32((hi - lo) / 255)
        assert inits[f"{name}_scale"] == scale
        assert inits[f"{name}_zero_point"].dtype == np.uint8
        assert int(inits[f"{name}_zero_point"]) == int(np.round(-lo / scale))
    # the constant is stored quantized with its own range
    lo, hi = min(c.min(), 0), max(c.max(), 0)
    assert inits["c_scale"] == np.float32((hi - lo) / 255)


def test_percentile_scales_in_the_written_model(tmp_path, run_tool):
    rng = np.random.default_rng(2)
    model = add_model(tmp_path / "add.onnx", np.zeros(8, np.float32))
    x = rng.standard_normal((4000, 8)).astype(np.float32)
    x[0, 0], x[1, 3] = 80.0, -50.0  # outliers the percentile drops
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "q.onnx"
    proc = run_tool(model, out, "--calibration", tmp_path / "x.npy", "--method", "percentile", "--percentile", "99.9",
                    "--batch-size", "1000", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    inits = read_inits(out)
    lo_ref, hi_ref = np.percentile(x, 100 - 99.9), np.percentile(x, 99.9)
    width = (x.max() - x.min()) / 2048
    expected = (hi_ref - lo_ref) / 255
    assert abs(float(inits["x_scale"]) - expected) <= 2 * width / 255 + 1e-7
    assert float(inits["x_scale"]) < (x.max() - x.min()) / 255 / 10  # the outliers are clipped
    zero = int(inits["x_zero_point"])
    assert abs(zero - round(-lo_ref / expected)) <= 2


def test_entropy_calibration_clips_an_outlier_tensor(tmp_path, run_tool):
    rng = np.random.default_rng(4)
    model = add_model(tmp_path / "add.onnx", np.zeros(8, np.float32))
    x = rng.standard_normal((4000, 8)).astype(np.float32)
    x[5, 5] = 200.0
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "q.onnx"
    proc = run_tool(model, out, "--calibration", tmp_path / "x.npy", "--method", "entropy", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    inits = read_inits(out)
    scale = float(inits["y_scale"])  # y = x + 0, an inner tensor
    assert scale * 255 < 0.2 * (x.max() - x.min())  # the range is well inside [min, max]
    assert scale * 255 > 4.0  # and still covers the bulk of the unit normal
    # the graph input keeps its min-max range under entropy
    assert float(inits["x_scale"]) == np.float32((x.max() - x.min()) / 255)


class FakeRunner:
    """A runner computing y = 2x with numpy (to test the Calibrator alone)."""
    def open(self, path, what):
        return lambda feeds, label="": {"y": feeds["x"] * 2}


def test_calibrator_minmax_over_samples(tmp_path):
    model = onnx.helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["y"])], "g", [value("x", FLOAT, [2])], [value("y", FLOAT, [2])]))
    samples = [Sample("a", {"x": np.array([-1.0, 2.0], np.float32)}), Sample("b", {"x": np.array([0.5, 4.0], np.float32)})]
    cal = calibrate.Calibrator(FakeRunner(), model, {}, str(tmp_path), show_progress=False)
    assert cal.ranges(["x", "y"], samples) == {"x": (-1.0, 4.0), "y": (-2.0, 8.0)}


class Stream:
    def __init__(self, tty):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_bar_redraws_on_a_terminal_and_prints_lines_otherwise():
    from infer_quantize.progress import Progress
    tty = Stream(True)
    bar = Progress(4, "calibrating", stream=tty)
    for _ in range(4):
        bar.step()
    bar.done()
    assert tty.text.count("\r") == 6 and tty.text.endswith("\n") and "4/4" in tty.text
    log = Stream(False)
    bar = Progress(100, "calibrating", stream=log)
    for _ in range(100):
        bar.step()
    bar.done()
    lines = log.text.splitlines()
    assert len(lines) == 10 and "\r" not in log.text and lines[-1].endswith("100/100 (100%)")
