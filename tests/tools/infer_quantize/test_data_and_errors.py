"""Calibration folder layouts, and every bad input's one-line error with exit status 1."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import FLOAT, init, save_model, value
from infer_quantize import data
from infer_quantize.errors import QuantizeError
from infer_quantize.model import InputSpec

SPECS = [InputSpec("input_ids", np.dtype(np.float32), ["batch", 4]),
         InputSpec("mask:0", np.dtype(np.float32), ["batch", 4])]


def test_sample_folders(tmp_path):
    for k in range(3):
        d = tmp_path / f"sample_{k}"
        d.mkdir()
        np.save(d / "input_ids.npy", np.full((2, 4), k, np.float32))
        np.save(d / "mask_0.npy", np.ones((2, 4), np.float32))  # ':' written as '_'
    samples = data.load_folder(str(tmp_path), SPECS)
    assert [int(s.feeds["input_ids"][0, 0]) for s in samples] == [0, 1, 2]
    assert samples[0].feeds["mask:0"].shape == (2, 4)


def test_flat_files_per_input_in_natural_order(tmp_path):
    for k in (10, 2, 1):
        np.save(tmp_path / f"input_ids_{k}.npy", np.full((1, 4), k, np.float32))
        np.save(tmp_path / f"mask_0_{k}.npy", np.zeros((1, 4), np.float32))
    samples = data.load_folder(str(tmp_path), SPECS)
    assert [int(s.feeds["input_ids"][0, 0]) for s in samples] == [1, 2, 10]


def test_missing_input_file(tmp_path):
    np.save(tmp_path / "input_ids_0.npy", np.zeros((1, 4), np.float32))
    with pytest.raises(QuantizeError, match="sample '0' has no file for input 'mask:0'"):
        data.load_folder(str(tmp_path), SPECS)


def test_batches_split_into_runs(tmp_path):
    spec = [InputSpec("x", np.dtype(np.float32), ["n", 3])]
    np.save(tmp_path / "a.npy", np.arange(30, dtype=np.float32).reshape(10, 3))
    samples = data.split_rows(data.load_folder(str(tmp_path), spec), spec, 4)
    assert [s.feeds["x"].shape[0] for s in samples] == [4, 4, 2]
    fixed = [InputSpec("x", np.dtype(np.float32), [1, 3])]
    assert len(data.load_folder(str(tmp_path), fixed)) == 10


# ---- the command's errors -------------------------------------------------------------

def one_line_error(proc, *fragments):
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("infer-quantize: error: "), lines[0]
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A one-Conv model with input x [batch,2,4,4] float32, and a folder of good inputs."""
    tmp = tmp_path_factory.mktemp("small")
    w = np.random.default_rng(0).standard_normal((3, 2, 1, 1)).astype(np.float32)
    path = save_model(tmp / "conv.onnx", [helper.make_node("Conv", ["x", "w"], ["y"], name="the_conv")],
                      [value("x", FLOAT, ["batch", 2, 4, 4])], [value("y", FLOAT, ["batch", 3, 4, 4])], [init("w", w)])
    good = tmp / "good"
    good.mkdir()
    np.save(good / "a.npy", np.ones((2, 2, 4, 4), np.float32))
    return path, str(good), tmp


def test_missing_calibration_folder(run_tool, small, tmp_path):
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", tmp_path / "nope"),
                   str(tmp_path / "nope"), "no such folder")


def test_empty_calibration_folder(run_tool, small, tmp_path):
    (tmp_path / "empty").mkdir()
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", tmp_path / "empty"),
                   str(tmp_path / "empty"), "no .npy files")


def test_wrong_dtype(run_tool, small, tmp_path):
    np.save(tmp_path / "a.npy", np.ones((1, 2, 4, 4), np.float64))
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", tmp_path),
                   str(tmp_path / "a.npy"), "'x' is float32", "float64")


def test_wrong_shape(run_tool, small, tmp_path):
    np.save(tmp_path / "a.npy", np.ones((1, 3, 4, 4), np.float32))
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", tmp_path),
                   str(tmp_path / "a.npy"), "(1, 3, 4, 4)", "'x'", "dimension 1 is 3, wanted 2")


def test_wrong_rank(run_tool, small, tmp_path):
    np.save(tmp_path / "a.npy", np.ones((2, 4, 4), np.float32))
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", tmp_path), "a.npy", "rank 3, wanted 4")


def test_file_naming_no_input(run_tool, small, tmp_path):
    (tmp_path / "s0").mkdir()
    np.save(tmp_path / "s0" / "x.npy", np.ones((1, 2, 4, 4), np.float32))
    np.save(tmp_path / "s0" / "image.npy", np.ones((1, 2, 4, 4), np.float32))
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", tmp_path),
                   os.path.join(str(tmp_path / "s0"), "image.npy"), "names no input")


def test_unreadable_npy(run_tool, small, tmp_path):
    (tmp_path / "a.npy").write_text("not numpy")
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", tmp_path), "a.npy", "not a readable .npy")


def test_bad_eval_file(run_tool, small, tmp_path):
    np.save(tmp_path / "e.npy", np.ones((1, 2, 4, 4), np.int32))
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", small[1], "--eval", tmp_path / "e.npy"),
                   "e.npy", "int32")


def test_model_not_float(run_tool, tmp_path):
    path = save_model(tmp_path / "int.onnx", [helper.make_node("Add", ["a", "b"], ["c"])],
                      [value("a", TensorProto.INT32, [4])], [value("c", TensorProto.INT32, [4])],
                      [init("b", np.arange(4, dtype=np.int32))])
    one_line_error(run_tool(path, tmp_path / "o.onnx"), "int.onnx", "not a float32 model")


def test_generated_inputs_out_of_the_models_range_say_so(run_tool, tmp_path):
    # Token ids into an embedding of 2 rows: the generated integers (in [0, 10)) are out
    # of range, and the error says that they were generated and how to give real ones.
    table = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.ones((3, 3), np.float32)
    path = save_model(tmp_path / "emb.onnx",
                      [helper.make_node("Gather", ["table", "ids"], ["e"], axis=0),
                       helper.make_node("MatMul", ["e", "w"], ["y"])],
                      [value("ids", TensorProto.INT64, [1, 4])], [value("y", FLOAT, [1, 4, 3])],
                      [init("table", table), init("w", w)])
    one_line_error(run_tool(path, tmp_path / "o.onnx", "--mode", "dynamic"),
                   "generated sample", "out of range",
                   "on generated inputs: give real ones with --calibration or --eval")


def test_model_already_quantized(run_tool, digits, tmp_path, digits_int8):
    one_line_error(run_tool(digits_int8[0], tmp_path / "o.onnx"), "already quantized", "QuantizeLinear")


def test_missing_and_unreadable_model(run_tool, tmp_path):
    one_line_error(run_tool(tmp_path / "none.onnx", tmp_path / "o.onnx"), "none.onnx", "no such file")
    (tmp_path / "bad.onnx").write_bytes(b"\x00garbage\xff" * 10)
    one_line_error(run_tool(tmp_path / "bad.onnx", tmp_path / "o.onnx"), "bad.onnx", "not a readable ONNX model")


def test_unknown_keep_float_node_and_op(run_tool, small, tmp_path):
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", small[1], "--keep-float", "the_conv,ghost"),
                   "--keep-float", "'ghost'")
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", small[1], "--keep-float-op", "Softmax"),
                   "--keep-float-op", "Softmax")


def test_everything_kept_float(run_tool, small, tmp_path):
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", small[1], "--keep-float", "the_conv"),
                   "nothing to quantize")


@pytest.mark.parametrize("args,fragments", [
    (["--percentile", "120"], ["--percentile 120", "(50, 100]"]),
    (["--percentile", "abc"], ["--percentile", "invalid float value"]),
    (["--bins", "10"], ["--bins 10"]),
    (["--method", "kl"], ["--method", "invalid choice: 'kl'"]),
    (["--mode", "weird"], ["--mode", "invalid choice"]),
    (["--samples", "0"], ["--samples 0"]),
    (["--threads", "-1"], ["--threads -1"]),
    (["--activation-type", "uint8", "--symmetric-activations"], ["--symmetric-activations", "int8"]),
    (["--weight-type", "uint8"], ["--weight-type uint8", "--mode dynamic"]),
    (["--no-such-flag"], ["unrecognized arguments: --no-such-flag"]),
], ids=lambda v: "_".join(v) if isinstance(v, list) and v and v[0].startswith("--") else None)
def test_bad_option_values(run_tool, small, tmp_path, args, fragments):
    one_line_error(run_tool(small[0], tmp_path / "o.onnx", "--calibration", small[1], *args), *fragments)


def test_missing_arguments(run_tool):
    one_line_error(run_tool(), "required")


def test_output_over_model(run_tool, small):
    one_line_error(run_tool(small[0], small[0], "--calibration", small[1]), "overwrite the float model")


def test_generated_inputs_warn(run_tool, small, tmp_path):
    proc = run_tool(small[0], tmp_path / "o.onnx", "--samples", "3", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "infer-quantize: warning: no --calibration folder: calibrating on 3 generated inputs" in proc.stderr
    assert "3 generated inputs" in proc.stdout
    onnx.checker.check_model(onnx.load(tmp_path / "o.onnx"))


def test_help_documents_the_options(run_tool):
    proc = run_tool("--help")
    assert proc.returncode == 0
    for option in ("--calibration", "--eval", "--method", "--percentile", "--bins", "--per-tensor-weights",
                   "--activation-type", "--symmetric-activations", "--weight-type", "--keep-float", "--keep-float-op",
                   "--mode", "--samples", "--infer-run", "--no-report", "entropy", "DIR/<sample>/<input>.npy"):
        assert option in proc.stdout, option


def test_infer_run_backend(run_tool, small, tmp_path):
    infer_run = os.environ.get("INFER_RUN") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "build", "bin",
                                                            "infer-run")
    if not os.path.isfile(infer_run):
        pytest.skip("no infer-run binary")
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    assert run_tool(small[0], a, "--calibration", small[1], "--no-progress").returncode == 0
    proc = run_tool(small[0], b, "--calibration", small[1], "--no-progress", "--infer-run", infer_run)
    assert proc.returncode == 0, proc.stderr
    assert a.read_bytes() == b.read_bytes()  # the same ranges through either way of running infer
