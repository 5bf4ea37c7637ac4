"""Running a model with infer: the `infer` Python module (preferred), or the infer-run
binary (one process per run, inputs and outputs through .npy files).

Both give a function feeds -> {output name: array}. To read intermediate tensors, the
caller adds them to a copy of the model as graph outputs (see calibrate.py).
"""

import json
import os
import subprocess
import tempfile

import numpy as np

from .errors import QuantizeError


def _first_line(text):
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def _generated_hint(label):
    """A hint for a failure on generated inputs (integers in [0, 10) may be out of range
    for the model, e.g. token-type ids of an embedding of two rows)."""
    if label.startswith("generated sample"):
        return " (on generated inputs: give real ones with --calibration or --eval)"
    return ""


class ModuleRunner:
    """Runs models through infer.Session."""

    def __init__(self, threads=0):
        try:
            import infer  # noqa: F401  (the module of this build: PYTHONPATH or the script's path)
        except ImportError as error:
            raise QuantizeError(f"cannot import the infer Python module ({error}); build it "
                                "(ninja -C build infer_python) or pass --infer-run PATH") from None
        self._infer = infer
        self.threads = threads
        self.description = f"the infer Python module ({getattr(infer, '__file__', 'infer')})"

    def open(self, model_path, what):
        """A callable running model_path; what names the model in error messages."""
        try:
            session = self._infer.Session(model_path, threads=self.threads)
        except Exception as error:
            raise QuantizeError(f"infer cannot load {what}: {_first_line(error)}") from None

        def run(feeds, label=""):
            try:
                return session.run(feeds)
            except Exception as error:
                raise QuantizeError(f"infer failed running {what} on {label or 'an input'}: "
                                    f"{_first_line(error)}{_generated_hint(label)}") from None
        return run


class InferRunRunner:
    """Runs models through the infer-run binary."""

    def __init__(self, infer_run, threads=0):
        if not os.path.isfile(infer_run) or not os.access(infer_run, os.X_OK):
            raise QuantizeError(f"{infer_run}: no such executable (given to --infer-run)")
        self.infer_run = infer_run
        self.threads = threads
        self.description = infer_run

    def open(self, model_path, what):
        def run(feeds, label=""):
            with tempfile.TemporaryDirectory(prefix="infer-quantize-run-") as tmp:
                cmd = [self.infer_run, model_path, "--output-dir", os.path.join(tmp, "out")]
                for k, (name, array) in enumerate(feeds.items()):
                    path = os.path.join(tmp, f"input_{k}.npy")
                    np.save(path, array)
                    cmd += ["--input", f"{name}={path}"]
                if self.threads:
                    cmd += ["--threads", str(self.threads)]
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if proc.returncode != 0:
                    raise QuantizeError(f"{self.infer_run} failed running {what} on {label or 'an input'} "
                                        f"(exit {proc.returncode}): {_first_line(proc.stderr)}"
                                        f"{_generated_hint(label)}")
                out_dir = os.path.join(tmp, "out")
                with open(os.path.join(out_dir, "outputs.json")) as f:
                    files = json.load(f)
                return {name: np.load(os.path.join(out_dir, file)) for name, file in files.items()}
        return run


def make_runner(infer_run=None, threads=0):
    """infer-run when a path is given, else the Python module."""
    return InferRunRunner(infer_run, threads) if infer_run else ModuleRunner(threads)
