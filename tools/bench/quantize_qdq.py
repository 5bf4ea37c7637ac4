#!/usr/bin/python3
"""Statically quantizes a float ONNX CNN into QDQ form, as ONNX Runtime's quantize_static writes it.

    /usr/bin/python3 tools/bench/quantize_qdq.py FLOAT.onnx OUT.onnx --infer-run build/bin/infer-run \\
        --calibration a.npy[,b.npy...] [--held-out c.npy] [--threads N]

A thin caller of infer-quantize's library (tools/infer-quantize/infer_quantize), kept for
tools/bench/export_models.py, which makes the resnet50_int8_b1 bench model with it. It
pins the layout that model has always had, narrower than infer-quantize's defaults:

- quantized ops: Conv, Gemm, Add, MaxPool, GlobalAveragePool (their inputs and outputs);
- a Conv whose only reader is a Relu keeps its output float and the Relu's output is
  quantized instead; no other op absorbs its activation, and no pass-through op
  (Reshape, Flatten, ...) or lone Relu gets a Q/DQ pair of its own;
- activations uint8 asymmetric per tensor, weights int8 symmetric per output channel,
  bias int32 (scale x_scale * w_scale); MaxPool's output takes its input's scale;
- min-max calibration: a copy of the float model with every tensor to quantize added as
  a graph output runs through infer-run once per calibration file (fed to the model's one
  input); each range is widened to include 0.

Then the QDQ model and the float model run through infer-run on the calibration inputs and
on --held-out, and a short report is printed per input: the largest absolute difference,
the cosine similarity and the top-1 agreement of the outputs.

Needs only numpy and onnx (Debian's python3-numpy, python3-onnx) and an infer-run binary.
Exit status 0 on success, 1 with one line on stderr on failure.
"""

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "infer-quantize"))

from infer_quantize import calibrate, model as modelinfo, qdq, report  # noqa: E402
from infer_quantize.data import Sample  # noqa: E402
from infer_quantize.errors import QuantizeError  # noqa: E402
from infer_quantize.runner import InferRunRunner  # noqa: E402

# The resnet50_int8_b1 layout (see the docstring).
BENCH_CONFIG = qdq.StaticConfig(
    op_types=("Conv", "Gemm", "Add", "MaxPool", "GlobalAveragePool"),
    fuse_activation_after=("Conv",),
    passthrough_ops=(),
    quantize_lone_activations=False,
    quantize_constant_inputs=False,
    producer_name="infer tools/bench/quantize_qdq.py",
)


def fail(message):
    print(f"quantize_qdq.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="the float ONNX model (one float input)")
    parser.add_argument("out", help="the QDQ model to write")
    parser.add_argument("--infer-run", default=os.path.join("build", "bin", "infer-run"),
                        help="the infer-run binary that runs the calibration (default build/bin/infer-run)")
    parser.add_argument("--calibration", required=True, help="comma-separated .npy files for the model's input")
    parser.add_argument("--held-out", help="one more .npy input, not used for calibration, for the accuracy report")
    parser.add_argument("--threads", type=int, default=0, help="infer-run --threads (default: its own default)")
    args = parser.parse_args()
    args.calibration = [p for p in args.calibration.split(",") if p]
    for path in [args.model, args.infer_run] + args.calibration + ([args.held_out] if args.held_out else []):
        if not os.path.isfile(path):
            fail(f"{path}: no such file")
    if not args.calibration:
        fail("--calibration names no file")
    try:
        model = modelinfo.load(args.model)
        opset = modelinfo.default_opset(model)
        if opset < 13:
            raise QuantizeError(f"{args.model}: default-domain opset {opset}; per-channel "
                                "QuantizeLinear/DequantizeLinear need 13 or newer")
        modelinfo.check_float_model(model, args.model)
        specs = modelinfo.input_specs(model)
        if len(specs) != 1:
            raise QuantizeError(f"{args.model}: {len(specs)} graph inputs ({', '.join(s.name for s in specs)}); "
                                "this script feeds exactly one")
        if not any(n.op_type == "Conv" for n in model.graph.node):
            raise QuantizeError(f"{args.model}: the model has no Conv node: nothing to quantize")
        input_name = specs[0].name
        samples = [Sample(npy, {input_name: np.load(npy)}) for npy in args.calibration]
        types, _ = modelinfo.tensor_types(model)
        runner = InferRunRunner(args.infer_run, args.threads)
        the_plan = qdq.plan(model, types, BENCH_CONFIG)
        with tempfile.TemporaryDirectory(prefix="quantize-qdq-") as tmp:
            calibrator = calibrate.Calibrator(runner, model, types, tmp, show_progress=False)
            ranges = calibrator.ranges(the_plan.calibrated(), samples, "minmax")
            qdq_model, pairs = qdq.build(model, the_plan, ranges, BENCH_CONFIG)
        try:
            onnx.checker.check_model(qdq_model)
        except onnx.checker.ValidationError as error:
            raise QuantizeError(f"{args.out}: the QDQ model does not pass onnx.checker: "
                                f"{str(error).splitlines()[0]}")
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        onnx.save(qdq_model, args.out)
        counts = {}
        for node in qdq_model.graph.node:
            counts[node.op_type] = counts.get(node.op_type, 0) + 1
        print(f"quantize_qdq.py: wrote {args.out}: {pairs} activation Q/DQ pairs, "
              f"{len(the_plan.weights)} int8 per-channel weights, {len(the_plan.biases)} int32 biases "
              f"(calibrated on {len(args.calibration)} input(s)); nodes: "
              + ", ".join(f"{op} {n}" for op, n in sorted(counts.items())))
        cases = [(npy, "calibration") for npy in args.calibration]
        if args.held_out:
            cases.append((args.held_out, "held-out"))
        run_float = runner.open(args.model, args.model)
        run_quant = runner.open(args.out, args.out)
        agree_all = [0, 0]
        for npy, kind in cases:
            feeds = {input_name: np.load(npy)}
            stats = report.compare([run_float(feeds, npy)], [run_quant(feeds, npy)])
            worst = max((s.max_abs for s in stats), default=0.0)
            dots = sum(s.dot for s in stats)
            norms = sum(s.norm_ref for s in stats) * sum(s.norm_quant for s in stats)
            cosine = dots / np.sqrt(norms) if norms > 0 else float("nan")
            same = sum(s.top1_same for s in stats)
            rows = sum(s.top1_rows for s in stats)
            agree_all[0] += same
            agree_all[1] += rows
            print(f"  {kind} {os.path.basename(npy)}: max abs error {worst:.4g}, cosine {cosine:.6f}, "
                  f"top-1 agreement {same}/{rows}")
        print(f"  top-1 agreement over all {len(cases)} input(s): {agree_all[0]}/{agree_all[1]}")
    except QuantizeError as error:
        fail(str(error))


if __name__ == "__main__":
    main()
