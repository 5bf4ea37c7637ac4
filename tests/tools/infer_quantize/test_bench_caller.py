"""tools/bench/quantize_qdq.py, now a thin caller of the library, keeps the narrower
layout of the resnet50_int8_b1 bench model (checked here on the digits model)."""
import os
import subprocess
import sys

import onnx
import pytest
from onnx import numpy_helper


def test_bench_layout(repo, digits, tmp_path):
    infer_run = os.environ.get("INFER_RUN") or os.path.join(repo, "build", "bin", "infer-run")
    if not os.path.isfile(infer_run):
        pytest.skip("no infer-run binary")
    calib = [os.path.join(digits[1], f) for f in sorted(os.listdir(digits[1]))][:2]
    out = tmp_path / "bench.onnx"
    proc = subprocess.run([sys.executable, os.path.join(repo, "tools", "bench", "quantize_qdq.py"), digits[0], str(out),
                           "--infer-run", infer_run, "--calibration", ",".join(calib), "--threads", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "activation Q/DQ pairs" in proc.stdout and "top-1 agreement over all 2 input(s)" in proc.stdout
    model = onnx.load(out)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    assert model.producer_name == "infer tools/bench/quantize_qdq.py"
    # Conv + Relu: the Relu's output quantized; Gemm + Relu: the Gemm's output quantized too
    assert "/Relu_output_0_scale" in inits and "/conv1/Conv_output_0_scale" not in inits
    assert "/fc1/Gemm_output_0_scale" in inits
    # Flatten is no pass-through here: it is quantized as the Gemm's input only
    assert "/Flatten_output_0_scale" in inits
