"""Writes one exported model's folder: model.onnx, the input and reference .npy files of
each run, and manifest.json, the file tests/models/models_test.cpp reads.

Folder layout (<cache>/<name>/):
    model.onnx
    run<R>_input_<I>.npy     the inputs of run R, in the model's input order
    run<R>_output_<O>.npy    the reference outputs of run R (PyTorch's own outputs, or numpy's
                             for the graphs built with onnx.helper), in the model's output order
    manifest.json

manifest.json:
    {"name": "resnet18", "model": "model.onnx", "opset": 13, "source": "...",
     "rtol": 1e-4, "atol": 1e-4, "tolerance_note": "why these tolerances",
     "runs": [{"inputs":  [{"name": "image", "file": "run0_input_0.npy"}],
               "outputs": [{"name": "logits", "file": "run0_output_0.npy",
                            "rtol": 1e-3, "atol": 1e-3}]}]}   # per-output rtol/atol optional
An output matches when |got - want| <= atol + rtol * |want| element-wise (integers and
bool must be equal); dtype and shape must be equal too.
"""

import json
import os

import numpy as np
import onnx


class Run:
    """One set of inputs and the outputs the reference produced for them."""

    def __init__(self, inputs, outputs, output_tolerances=None):
        # inputs / outputs: lists of (name, numpy array), in the model's declaration order.
        self.inputs = inputs
        self.outputs = outputs
        # {output name: (rtol, atol)} for outputs that need their own tolerance.
        self.output_tolerances = output_tolerances or {}


def _check_declared(model, runs, name):
    """Fails early, in Python, when a run names inputs or outputs the model does not
    declare in that order: a wrong manifest would otherwise show up as a confusing C++
    test failure."""
    initializers = {init.name for init in model.graph.initializer}
    declared_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    declared_outputs = [o.name for o in model.graph.output]
    for index, run in enumerate(runs):
        got_inputs = [n for n, _ in run.inputs]
        got_outputs = [n for n, _ in run.outputs]
        if got_inputs != declared_inputs:
            raise RuntimeError(f"{name} run {index}: inputs {got_inputs} but the model declares {declared_inputs}")
        if got_outputs != declared_outputs:
            raise RuntimeError(f"{name} run {index}: outputs {got_outputs} but the model declares {declared_outputs}")


def write_model(cache_dir, name, model, runs, rtol, atol, tolerance_note, source):
    """Writes the folder. `model` is an onnx.ModelProto, checked here with ONNX's checker,
    or an exported model with .proto and .data (the exporter's bytes, already checked)."""
    if isinstance(model, onnx.ModelProto):
        onnx.checker.check_model(model)
        data = model.SerializeToString()
    else:
        model, data = model.proto, model.data
    _check_declared(model, runs, name)
    folder = os.path.join(cache_dir, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(data)

    manifest_runs = []
    for r, run in enumerate(runs):
        entry = {"inputs": [], "outputs": []}
        for i, (input_name, array) in enumerate(run.inputs):
            # C order always: a transposed reference would be saved in Fortran order,
            # which readers of the .npy format need not support.
            file = f"run{r}_input_{i}.npy"
            np.save(os.path.join(folder, file), np.asarray(array, order="C"))
            entry["inputs"].append({"name": input_name, "file": file})
        for o, (output_name, array) in enumerate(run.outputs):
            file = f"run{r}_output_{o}.npy"
            np.save(os.path.join(folder, file), np.asarray(array, order="C"))
            item = {"name": output_name, "file": file}
            if output_name in run.output_tolerances:
                item["rtol"], item["atol"] = run.output_tolerances[output_name]
            entry["outputs"].append(item)
        manifest_runs.append(entry)

    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    manifest = {
        "name": name,
        "model": "model.onnx",
        "opset": opset,
        "source": source,
        "rtol": rtol,
        "atol": atol,
        "tolerance_note": tolerance_note,
        "runs": manifest_runs,
    }
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
