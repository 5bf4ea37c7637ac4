#!/usr/bin/python3
"""Statically quantizes a float ONNX CNN into QDQ form, as ONNX Runtime's quantize_static writes it.

    /usr/bin/python3 tools/bench/quantize_qdq.py FLOAT.onnx OUT.onnx --infer-run build/bin/infer-run \\
        --calibration a.npy[,b.npy...] [--held-out c.npy] [--threads N]

Calibration: a temporary copy of the float model with every tensor to be quantized added
as a graph output is run by infer-run once per calibration file (fed to the model's one
input); each tensor's range is the min/max over those runs, widened to include 0.

The output follows ONNX Runtime's default QDQ convention (QuantFormat.QDQ, uint8
activations, int8 weights, per-channel):

- activations: uint8, per tensor, asymmetric: scale = (max - min) / 255,
  zero point = round(-min / scale) in [0, 255];
- Conv/Gemm weights: int8 initializers, symmetric per output channel (axis 0 of the
  weight; axis 1 for a Gemm without transB), scale = max|w| / 127, zero point 0, read
  through DequantizeLinear(axis);
- Conv/Gemm bias: int32 initializer, scale = x_scale * w_scale[m], zero point 0, read
  through DequantizeLinear(axis=0);
- the quantized tensors are the inputs of Conv, Gemm, Add, MaxPool and GlobalAveragePool
  and their outputs; each gets QuantizeLinear -> DequantizeLinear (one DequantizeLinear
  shared by all readers). A Conv whose only reader is a Relu keeps its output float and
  the Relu's output is quantized instead (ORT with the Relu kept):
  DQ(x) -> Conv(DQ(w), DQ(b)) -> Relu -> Q -> DQ;
- MaxPool's output uses its input's scale and zero point;
- the graph inputs and outputs stay float (a quantized graph output is the output of its
  DequantizeLinear, under the original name).

Then the QDQ model and the float model are run by infer-run on the calibration inputs and
on --held-out, and a short report is printed: the Q/DQ pairs, and per input the largest
absolute difference, the cosine similarity and the top-1 agreement of the outputs.

Needs only numpy and onnx (Debian's python3-numpy, python3-onnx) and an infer-run binary.
Exit status 0 on success, 1 with one line on stderr on failure.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QUANTIZED_OPS = ("Conv", "Gemm", "Add", "MaxPool", "GlobalAveragePool")


class QuantizeError(Exception):
    """A failure reported as one line naming the file."""


def fail(message):
    print(f"quantize_qdq.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


# ---- what gets quantized -------------------------------------------------------------

def plan(model, path):
    """Returns (activations, weights, biases, shared) for the float model:
    activations: the float tensors to Q/DQ, in graph order;
    weights: {initializer name: axis} quantized int8 per channel;
    biases: {(node index): (bias name, input tensor, weight name)} quantized int32;
    shared: {tensor: tensor whose scale/zero point it takes} (MaxPool outputs)."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    graph_outputs = {o.name for o in graph.output}
    if not any(n.op_type == "Conv" for n in graph.node):
        raise QuantizeError(f"{path}: the model has no Conv node: nothing to quantize")
    for node in graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "ConvInteger"):
            raise QuantizeError(f"{path}: the model is already quantized (node '{node.name}' is {node.op_type})")
    consumers = {}
    for node in graph.node:
        for name in node.input:
            if name:
                consumers.setdefault(name, []).append(node)

    def float_tensor(name):
        return name and name not in inits

    wanted, weights, biases, shared = set(), {}, {}, {}
    for index, node in enumerate(graph.node):
        op = node.op_type
        if op not in QUANTIZED_OPS:
            continue
        if op == "Add":
            ins = [n for n in node.input if float_tensor(n)]
        else:
            ins = [node.input[0]] if float_tensor(node.input[0]) else []
        wanted.update(ins)
        out = node.output[0]
        readers = consumers.get(out, [])
        if op == "Conv" and len(readers) == 1 and readers[0].op_type == "Relu" and out not in graph_outputs:
            out = readers[0].output[0]  # the Conv's output stays float; the Relu's is quantized
        wanted.add(out)
        if op == "MaxPool" and ins:
            shared[out] = ins[0]
        if op in ("Conv", "Gemm") and len(node.input) > 1 and node.input[1] in inits and ins:
            w = node.input[1]
            if op == "Gemm":
                if attr(node, "transA", 0):
                    continue  # A transposed: leave this Gemm's weight float
                axis = 0 if attr(node, "transB", 0) else 1
            else:
                axis = 0
            if weights.get(w, axis) != axis:
                continue  # the same weight read along two axes: leave it float
            weights[w] = axis
            if len(node.input) > 2 and node.input[2] in inits:
                bias = numpy_helper.to_array(inits[node.input[2]])
                channels = numpy_helper.to_array(inits[w]).shape[axis]
                plain = op == "Conv" or (attr(node, "alpha", 1.0) == 1.0 and attr(node, "beta", 1.0) == 1.0)
                if plain and bias.ndim == 1 and bias.shape[0] == channels:
                    biases[index] = (node.input[2], ins[0], w)
    order = []
    for name in [i.name for i in graph.input] + [o for n in graph.node for o in n.output]:
        if name in wanted and name not in order:
            order.append(name)
    return order, weights, biases, shared


# ---- infer-run -----------------------------------------------------------------------

def run_model(infer_run, model_path, input_name, npy, out_dir, threads, what):
    """Runs infer-run on one input; returns {output name: array}."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = [infer_run, model_path, "--input", f"{input_name}={npy}", "--output-dir", out_dir]
    if threads:
        cmd += ["--threads", str(threads)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise QuantizeError(f"{infer_run} failed on {what} with {npy} (exit {proc.returncode}): {last}")
    with open(os.path.join(out_dir, "outputs.json")) as f:
        files = json.load(f)
    return {name: np.load(os.path.join(out_dir, file)) for name, file in files.items()}


def calibrate(model, tensors, args, input_name, tmp):
    """{tensor: (min, max)} over the calibration files, each range widened to include 0,
    and the float model's outputs per calibration file."""
    graph_outputs = [o.name for o in model.graph.output]
    calib = onnx.ModelProto()
    calib.CopyFrom(model)
    inferred = {}
    try:
        shaped = onnx.shape_inference.infer_shapes(model)
        inferred = {v.name: v for v in shaped.graph.value_info}
    except Exception:  # types are only a convenience here; infer-run does its own
        pass
    for name in tensors:
        if name in graph_outputs:
            continue
        if name in inferred:
            calib.graph.output.append(inferred[name])
        else:
            calib.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    calib_path = os.path.join(tmp, "calibration.onnx")
    onnx.save(calib, calib_path)
    ranges, float_outputs = {}, []
    for i, npy in enumerate(args.calibration):
        outs = run_model(args.infer_run, calib_path, input_name, npy, os.path.join(tmp, f"calib{i}"), args.threads,
                         f"the calibration copy of {args.model}")
        for name in tensors:
            if name not in outs:
                raise QuantizeError(f"{args.infer_run} wrote no output '{name}' for the calibration copy of "
                                    f"{args.model}")
            a = outs[name]
            lo, hi = float(np.min(a)), float(np.max(a))
            if name in ranges:
                lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
            ranges[name] = (lo, hi)
        float_outputs.append({n: outs[n] for n in graph_outputs})
    return {n: (min(lo, 0.0), max(hi, 0.0)) for n, (lo, hi) in ranges.items()}, float_outputs


# ---- the QDQ graph -------------------------------------------------------------------

def activation_params(lo, hi):
    """uint8 asymmetric: (scale, zero point), as ORT's compute_scale_zp."""
    scale = np.float32((hi - lo) / 255.0)
    if not np.isfinite(scale) or scale < np.finfo(np.float32).tiny:
        return np.float32(1.0), np.uint8(0)
    zero = int(np.clip(np.round(-lo / float(scale)), 0, 255))
    return scale, np.uint8(zero)


def quantize_weight(w, axis):
    """int8 symmetric per channel along axis: (quantized, scales[channels])."""
    moved = np.moveaxis(w.astype(np.float64), axis, 0)
    absmax = np.max(np.abs(moved.reshape(moved.shape[0], -1)), axis=1)
    scale = (absmax / 127.0).astype(np.float32)
    scale[scale < np.finfo(np.float32).tiny] = 1.0
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape).astype(np.float64)), -127, 127).astype(np.int8)
    return q, scale


def build_qdq(model, tensors, weights, biases, shared, ranges):
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    graph_outputs = {o.name for o in graph.output}
    new_inits, nodes = [], []
    params = {}
    for name in tensors:
        source = shared.get(name, name)
        if source not in params:
            params[source] = activation_params(*ranges[source])
        params[name] = params[source]

    dq_name = {}  # float tensor -> its DequantizeLinear output

    def qdq(name):
        """Q -> DQ for activation `name` (already produced under `produced`)."""
        scale, zero = params[name]
        produced = f"{name}_QuantizeInput" if name in graph_outputs else name
        scale_name, zero_name = f"{name}_scale", f"{name}_zero_point"
        new_inits.append(numpy_helper.from_array(np.array(scale, dtype=np.float32), scale_name))
        new_inits.append(numpy_helper.from_array(np.array(zero, dtype=np.uint8), zero_name))
        q_out = f"{name}_QuantizeLinear_Output"
        dq_out = name if name in graph_outputs else f"{name}_DequantizeLinear_Output"
        nodes.append(helper.make_node("QuantizeLinear", [produced, scale_name, zero_name], [q_out],
                                      name=f"{name}_QuantizeLinear"))
        nodes.append(helper.make_node("DequantizeLinear", [q_out, scale_name, zero_name], [dq_out],
                                      name=f"{name}_DequantizeLinear"))
        dq_name[name] = dq_out

    weight_dq, weight_scales = {}, {}

    def weight(w):
        """DQ(int8 weight) for initializer w, emitted before its first reader."""
        if w not in weight_dq:
            axis = weights[w]
            q, scale = quantize_weight(numpy_helper.to_array(inits[w]), axis)
            weight_scales[w] = scale
            new_inits.extend([numpy_helper.from_array(q, f"{w}_quantized"),
                              numpy_helper.from_array(scale, f"{w}_scale"),
                              numpy_helper.from_array(np.zeros(scale.shape, np.int8), f"{w}_zero_point")])
            weight_dq[w] = f"{w}_DequantizeLinear_Output"
            nodes.append(helper.make_node("DequantizeLinear", [f"{w}_quantized", f"{w}_scale", f"{w}_zero_point"],
                                          [weight_dq[w]], name=f"{w}_DequantizeLinear", axis=axis))
        return weight_dq[w]

    # A bias read by several quantized nodes gets one int32 copy per node (its scale
    # depends on the node's input); named after the bias alone otherwise, as ORT does.
    bias_readers = {}
    for b, _, _ in biases.values():
        bias_readers[b] = bias_readers.get(b, 0) + 1

    for name in [i.name for i in graph.input]:
        if name in params:
            qdq(name)
    pairs = 0
    for index, node in enumerate(graph.node):
        new = onnx.NodeProto()
        new.CopyFrom(node)
        for k, name in enumerate(new.input):
            if name in dq_name:
                new.input[k] = dq_name[name]
            elif k == 1 and name in weights and node.op_type in ("Conv", "Gemm") and node.input[0] in params:
                new.input[k] = weight(name)
        if index in biases:
            b, x, w = biases[index]
            x_scale = params[x][0]
            b_scale = (np.float64(x_scale) * weight_scales[w].astype(np.float64)).astype(np.float32)
            b_scale[b_scale < np.finfo(np.float32).tiny] = 1.0
            bias = numpy_helper.to_array(inits[b]).astype(np.float64)
            info = np.iinfo(np.int32)
            qb = np.clip(np.round(bias / b_scale.astype(np.float64)), info.min, info.max).astype(np.int32)
            stem = b if bias_readers[b] == 1 else f"{b}_node{index}"
            new_inits += [numpy_helper.from_array(qb, f"{stem}_quantized"),
                          numpy_helper.from_array(b_scale, f"{stem}_scale"),
                          numpy_helper.from_array(np.zeros(b_scale.shape, np.int32), f"{stem}_zero_point")]
            nodes.append(helper.make_node("DequantizeLinear", [f"{stem}_quantized", f"{stem}_scale",
                                                               f"{stem}_zero_point"],
                                          [f"{stem}_DequantizeLinear_Output"], name=f"{stem}_DequantizeLinear", axis=0))
            new.input[2] = f"{stem}_DequantizeLinear_Output"
        for k, name in enumerate(new.output):
            if name in params and name in graph_outputs:
                new.output[k] = f"{name}_QuantizeInput"
        nodes.append(new)
        for name in node.output:
            if name in params:
                qdq(name)
                pairs += 1
    pairs += sum(1 for i in graph.input if i.name in params)

    used = {n for node in nodes for n in node.input}
    kept = [i for i in graph.initializer if i.name in used]
    out = helper.make_model(
        helper.make_graph(nodes, graph.name, list(graph.input), list(graph.output), kept + new_inits),
        opset_imports=list(model.opset_import), producer_name="infer tools/bench/quantize_qdq.py",
        ir_version=model.ir_version)
    return out, pairs


# ---- accuracy ------------------------------------------------------------------------

def compare(reference, quantized):
    """(max abs error, cosine similarity, top-1 agreement as (same rows, rows)) over the
    float outputs both have."""
    worst, dots, norm_a, norm_b, same, rows = 0.0, 0.0, 0.0, 0.0, 0, 0
    for name, a in reference.items():
        if name not in quantized or a.dtype.kind != "f":
            continue
        a, b = a.astype(np.float64), quantized[name].astype(np.float64)
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
        dots += float(np.sum(a * b))
        norm_a += float(np.sum(a * a))
        norm_b += float(np.sum(b * b))
        if a.ndim >= 1 and a.shape[-1] > 1:
            ra, rb = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
            same += int(np.sum(np.argmax(ra, axis=1) == np.argmax(rb, axis=1)))
            rows += ra.shape[0]
    cosine = dots / np.sqrt(norm_a * norm_b) if norm_a > 0 and norm_b > 0 else float("nan")
    return worst, cosine, (same, rows)


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
        model = onnx.load(args.model)
    except Exception as error:
        fail(f"{args.model}: not a readable ONNX model ({type(error).__name__}: {error})")
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    if opset < 13:
        fail(f"{args.model}: default-domain opset {opset}; per-channel QuantizeLinear/DequantizeLinear "
             "need 13 or newer")
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        fail(f"{args.model}: {len(inputs)} graph inputs ({', '.join(inputs)}); this script feeds exactly one")
    input_name = inputs[0]

    try:
        tensors, weights, biases, shared = plan(model, args.model)
        with tempfile.TemporaryDirectory(prefix="quantize-qdq-") as tmp:
            ranges, float_calib = calibrate(model, tensors, args, input_name, tmp)
            qdq_model, pairs = build_qdq(model, tensors, weights, biases, shared, ranges)
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
                  f"{len(weights)} int8 per-channel weights, {len(biases)} int32 biases "
                  f"(calibrated on {len(args.calibration)} input(s)); nodes: "
                  + ", ".join(f"{op} {n}" for op, n in sorted(counts.items())))
            cases = [(npy, ref, "calibration") for npy, ref in zip(args.calibration, float_calib)]
            if args.held_out:
                ref = run_model(args.infer_run, args.model, input_name, args.held_out, os.path.join(tmp, "float"),
                                args.threads, args.model)
                cases.append((args.held_out, ref, "held-out"))
            agree_all = [0, 0]
            for i, (npy, ref, kind) in enumerate(cases):
                ours = run_model(args.infer_run, args.out, input_name, npy, os.path.join(tmp, f"qdq{i}"),
                                 args.threads, args.out)
                worst, cosine, (same, rows) = compare(ref, ours)
                agree_all[0] += same
                agree_all[1] += rows
                print(f"  {kind} {os.path.basename(npy)}: max abs error {worst:.4g}, cosine {cosine:.6f}, "
                      f"top-1 agreement {same}/{rows}")
            print(f"  top-1 agreement over all {len(cases)} input(s): {agree_all[0]}/{agree_all[1]}")
    except QuantizeError as error:
        fail(str(error))


if __name__ == "__main__":
    main()
