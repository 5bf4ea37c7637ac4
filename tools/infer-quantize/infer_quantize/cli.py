"""The infer-quantize command: argument parsing, checks, and the static / dynamic flows."""

import argparse
import os
import sys
import tempfile

import onnx

from . import calibrate, data, dynamic, model as modelinfo, qdq, report
from .errors import QuantizeError
from .runner import make_runner

PROG = "infer-quantize"

DESCRIPTION = """\
Post-training quantization of a float32 ONNX model, run with infer.

static (the default): calibrates the activation ranges on sample inputs and writes a QDQ
model in ONNX Runtime's conventions: uint8 asymmetric activations per tensor
(QuantizeLinear -> DequantizeLinear), int8 symmetric weights per output channel, int32
bias with scale x_scale * w_scale. Quantized: Conv, Gemm, MatMul (constant weight), Add,
Mul, MaxPool, AveragePool, GlobalAveragePool, Concat; a Relu/Clip right after one of
them is quantized in its stead; Reshape, Transpose, Flatten, Squeeze and Unsqueeze pass
their input's scale through.

dynamic (--mode dynamic): MatMul and Gemm with a constant weight become
DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(x_scale * w_scale) [-> Add(bias)],
as ONNX Runtime's quantize_dynamic writes them; no calibration.

Then both models run on held-out inputs and a report compares them per output: max and
mean absolute error, cosine similarity, top-1 agreement (2-D outputs)."""

EPILOG = """\
calibration and evaluation folders (--calibration, --eval):
  DIR/<sample>/<input>.npy   one sub-folder per sample, one file per model input
  DIR/*.npy                  a model with one input: each file is a sample
  DIR/<input>_<key>.npy      several inputs: one file per input for each sample key
  FILE.npy                   a model with one input: that file alone
  A file may hold a batch (the first dimension is free where the model's is symbolic;
  where it is fixed, e.g. 1, a file with k times the rows is k samples). Each file's
  dtype must be the input's and its fixed dimensions must match. Without --calibration,
  static mode calibrates on generated inputs (standard normal floats, integers in
  [0, 10)) and says so: the scales then fit no real data.

calibration methods (--method):
  minmax      the smallest and largest values seen
  percentile  the (100-P)th and P-th percentiles of all values seen (--percentile P,
              default 99.999), from a --bins histogram (two passes over the inputs)
  entropy     the |x| threshold minimising the KL divergence between the observed and
              the quantized distribution (TensorRT's INT8 calibration), --bins bins

examples:
  infer-quantize model.onnx model_int8.onnx --calibration calib/ --eval held_out/
  infer-quantize model.onnx model_int8.onnx --calibration calib/ --method entropy \\
      --keep-float /head/Gemm --keep-float-op Concat
  infer-quantize bert.onnx bert_dynamic.onnx --mode dynamic --eval inputs/

exit status: 0 on success, 1 with one line on stderr (infer-quantize: error: ...) on a
bad model, input file or option."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 1."""

    def error(self, message):
        raise QuantizeError(f"{message} (see {PROG} --help)")


def _names(values):
    """Flattens repeated, comma-separated option values."""
    out = []
    for value in values or []:
        out += [v.strip() for v in value.split(",") if v.strip()]
    return out


def build_parser():
    p = Parser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the float32 ONNX model")
    p.add_argument("output", help="the quantized ONNX model to write")
    p.add_argument("--mode", choices=("static", "dynamic"), default="static",
                   help="static QDQ (default) or dynamic MatMulInteger quantization")
    p.add_argument("--calibration", metavar="DIR", help="folder of .npy calibration inputs (static mode; a .npy file for a one-input model)")
    p.add_argument("--eval", metavar="DIR",
                   help="folder of .npy held-out inputs for the accuracy report (default: the calibration inputs)")
    p.add_argument("--method", choices=calibrate.METHODS, default="minmax",
                   help="calibration method (default minmax)")
    p.add_argument("--percentile", type=float, default=99.999, metavar="P",
                   help="percentile for --method percentile, in (50, 100] (default 99.999)")
    p.add_argument("--bins", type=int, default=2048, metavar="N",
                   help="histogram bins for percentile and entropy, at least 512 (default 2048)")
    p.add_argument("--per-tensor-weights", action="store_true",
                   help="one scale per weight tensor instead of one per output channel")
    p.add_argument("--activation-type", choices=("uint8", "int8"), default=None,
                   help="activation storage (default uint8; int8 with --symmetric-activations)")
    p.add_argument("--symmetric-activations", action="store_true",
                   help="int8 activations with zero point 0, scale max|x| / 127")
    p.add_argument("--weight-type", choices=("int8", "uint8"), default="int8",
                   help="dynamic mode: int8 symmetric (default) or uint8 asymmetric weights; static weights are int8")
    p.add_argument("--keep-float", action="append", metavar="NODE[,NODE...]",
                   help="node names to leave in float (repeatable, comma-separated)")
    p.add_argument("--keep-float-op", action="append", metavar="OP[,OP...]",
                   help="op types to leave in float (repeatable, comma-separated)")
    p.add_argument("--samples", type=int, default=16, metavar="N",
                   help="how many inputs to generate when a folder is missing (default 16)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated inputs (default 0)")
    p.add_argument("--batch-size", type=int, default=64, metavar="N",
                   help="run at most N rows at a time where the first dimension is symbolic (0: as stored; "
                        "default 64)")
    p.add_argument("--threads", type=int, default=0, metavar="N", help="infer's threads (default 0: all cores)")
    p.add_argument("--infer-run", metavar="PATH",
                   help="run the models with this infer-run binary instead of the infer Python module")
    p.add_argument("--no-report", action="store_true", help="skip the accuracy report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return p


def check_options(args):
    """Raises QuantizeError for an option value out of range or a bad combination."""
    if not (50.0 < args.percentile <= 100.0):
        raise QuantizeError(f"--percentile {args.percentile:g}: expected a number in (50, 100]")
    if args.bins < 512 or args.bins > (1 << 20):
        raise QuantizeError(f"--bins {args.bins}: expected 512 to {1 << 20}")
    if args.samples < 1:
        raise QuantizeError(f"--samples {args.samples}: expected at least 1")
    if args.threads < 0:
        raise QuantizeError(f"--threads {args.threads}: expected 0 or more")
    if args.batch_size < 0:
        raise QuantizeError(f"--batch-size {args.batch_size}: expected 0 or more")
    if args.symmetric_activations and args.activation_type == "uint8":
        raise QuantizeError("--symmetric-activations needs int8 activations (uint8 ones are asymmetric); "
                            "drop --activation-type uint8")
    if args.activation_type is None:
        args.activation_type = "int8" if args.symmetric_activations else "uint8"
    if args.mode == "static" and args.weight_type != "int8":
        raise QuantizeError("--weight-type uint8 is for --mode dynamic (static weights are int8 symmetric)")
    if os.path.abspath(args.model) == os.path.abspath(args.output):
        raise QuantizeError(f"{args.output}: the output would overwrite the float model")


def warn(message):
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def run(argv=None):
    """The command; returns the exit status (QuantizeError propagates)."""
    args = build_parser().parse_args(argv)
    check_options(args)
    keep_nodes, keep_ops = frozenset(_names(args.keep_float)), frozenset(_names(args.keep_float_op))

    model = modelinfo.load(args.model)
    modelinfo.check_float_model(model, args.model)
    qdq.check_keep_float(model, keep_nodes, keep_ops, args.model)
    opset = modelinfo.default_opset(model)
    if args.mode == "static" and opset < 13 and not args.per_tensor_weights:
        raise QuantizeError(f"{args.model}: opset {opset}: per-channel QuantizeLinear/DequantizeLinear need opset 13 "
                            "or newer; pass --per-tensor-weights or convert the model")
    if opset < 11:
        raise QuantizeError(f"{args.model}: opset {opset}: quantized ops need opset 11 or newer")
    specs = modelinfo.input_specs(model)
    types, _ = modelinfo.tensor_types(model)
    show = not args.no_progress

    calibration = None
    if args.calibration:
        calibration = data.load_folder(args.calibration, specs, "--calibration")
    elif args.mode == "static":
        warn(f"no --calibration folder: calibrating on {args.samples} generated inputs (standard normal); "
             "the scales fit no real data: give a folder of real inputs")
    if args.eval:
        evaluation, source = data.load_folder(args.eval, specs, "--eval"), f"--eval {args.eval}"
    elif calibration is not None:
        evaluation, source = calibration, f"the calibration inputs ({args.calibration}; no --eval given, so not held out)"
    else:
        evaluation = data.generate(specs, args.samples, args.seed + 1)
        source = f"{args.samples} generated inputs (no --eval or --calibration folder given)"
    if calibration is None and args.mode == "static":
        calibration = data.generate(specs, args.samples, args.seed)

    runner = make_runner(args.infer_run, args.threads)
    with tempfile.TemporaryDirectory(prefix="infer-quantize-") as tmp:
        if args.mode == "static":
            config = qdq.StaticConfig(per_channel=not args.per_tensor_weights, activation_type=args.activation_type,
                                      symmetric_activations=args.symmetric_activations,
                                      keep_float_nodes=keep_nodes, keep_float_ops=keep_ops)
            the_plan = qdq.plan(model, types, config)
            if not the_plan.activations:
                raise QuantizeError(f"{args.model}: nothing to quantize (no float Conv, Gemm, MatMul, Add, Mul, "
                                    "pooling or Concat node outside the keep-float list)")
            samples = data.split_rows(calibration, specs, args.batch_size)
            calibrator = calibrate.Calibrator(runner, model, types, tmp, show)
            ranges = calibrator.ranges(the_plan.calibrated(), samples, args.method, args.percentile, args.bins,
                                       args.symmetric_activations)
            out, pairs = qdq.build(model, the_plan, ranges, config)
            method = args.method + (f" {args.percentile:g}" if args.method == "percentile" else "")
            summary = (f"static QDQ: {pairs} activation Q/DQ pairs ({args.activation_type}"
                       f"{' symmetric' if args.symmetric_activations else ' asymmetric'}), "
                       f"{len(the_plan.weights)} int8 weights "
                       f"({'per tensor' if args.per_tensor_weights else 'per channel'}), "
                       f"{len(the_plan.biases)} int32 biases; {method} calibration on {len(samples)} run(s)")
        else:
            out, converted = dynamic.quantize_dynamic(model, types, per_channel=not args.per_tensor_weights,
                                                      weight_type=args.weight_type, keep_float_nodes=keep_nodes,
                                                      keep_float_ops=keep_ops)
            if converted == 0:
                raise QuantizeError(f"{args.model}: nothing to quantize dynamically (no MatMul or Gemm with a "
                                    "constant 2-D float weight outside the keep-float list)")
            summary = (f"dynamic: {converted} MatMul/Gemm node(s) -> DynamicQuantizeLinear + MatMulInteger "
                       f"({args.weight_type} weights, {'per tensor' if args.per_tensor_weights else 'per column'})")
        try:
            onnx.checker.check_model(out)
        except onnx.checker.ValidationError as error:
            raise QuantizeError(f"{args.output}: the quantized model fails onnx.checker: "
                                f"{str(error).strip().splitlines()[0]}") from None
        try:
            folder = os.path.dirname(os.path.abspath(args.output))
            os.makedirs(folder, exist_ok=True)
            onnx.save(out, args.output)
        except OSError as error:
            raise QuantizeError(f"{args.output}: cannot write ({error.strerror or error})") from None
        print(f"{PROG}: wrote {args.output}: {summary}", flush=True)
        if not args.no_report:
            stats = report.evaluate(runner, args.model, args.output,
                                    data.split_rows(evaluation, specs, args.batch_size), show)
            print("\n".join(report.format_report(stats, source)))
    return 0


def main(argv=None):
    """Entry point: one line on stderr and exit status 1 for a user error."""
    try:
        return run(argv)
    except QuantizeError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
