"""Activation ranges from calibration runs: min-max, percentile, or entropy.

The float model is copied with every tensor to calibrate added as a graph output, and that
copy runs once per calibration sample (calibrate()). The methods:

- minmax: the smallest and largest value seen (one pass);
- percentile: a first pass finds each tensor's [min, max]; a second fills a histogram
  of `bins` equal bins over it; the range is [the (100 - p)th, the p-th] percentile of
  all values seen, to within one bin;
- entropy: like percentile, with a histogram of |x| over [0, max|x|] (exact zeros left
  out: they quantize exactly whatever the range, and a Relu's many zeros would otherwise
  pull the threshold down); the threshold T is
  the one whose clipped-and-quantized distribution is closest to the observed one in
  Kullback-Leibler divergence (the method TensorRT describes for INT8 calibration), and
  the range is [min, max] clipped to [-T, T]. The model's own inputs keep their min-max
  range under this method: input data often takes a few discrete values (pixel levels),
  where the divergence is smallest for a threshold at the first few values and the
  clipping would destroy the input.

Every range is later widened to include 0 (params.activation_qparams).
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper

from .errors import QuantizeError
from .progress import Progress

METHODS = ("minmax", "percentile", "entropy")


# ---- the statistics, on plain arrays (unit-tested directly) ---------------------------

def percentile_range(hist, lo, hi, percentile):
    """(low, high) percentiles of the values counted by hist (equal bins over [lo, hi]):
    low is the lower edge of the bin where the (100 - p)% point falls, high the upper edge
    of the bin where the p% point falls, so each is conservative by less than one bin."""
    hist = np.asarray(hist, np.float64)
    total = hist.sum()
    if total <= 0 or hi <= lo:
        return float(lo), float(hi)
    edges = np.linspace(lo, hi, len(hist) + 1)
    cumulative = np.cumsum(hist)
    fraction = percentile / 100.0
    upper = int(np.searchsorted(cumulative, total * fraction, side="left"))
    lower = int(np.searchsorted(cumulative, total * (1.0 - fraction), side="right"))
    upper = min(upper, len(hist) - 1)
    lower = min(lower, len(hist) - 1)
    return float(max(edges[lower], lo)), float(min(edges[upper + 1], hi))


def _smooth(distribution, eps=1e-4):
    """Moves a little mass onto the empty bins, so that a divergence against it is finite."""
    zero = distribution == 0
    n_zero = int(zero.sum())
    n_nonzero = distribution.size - n_zero
    if n_zero == 0 or n_nonzero == 0:
        return distribution
    taken = eps * n_zero / n_nonzero
    out = distribution.astype(np.float64).copy()
    out[zero] = eps
    out[~zero] -= taken
    return np.maximum(out, eps * 1e-3)


def kl_divergence(p, q):
    """KL(p || q) of two count vectors (normalised here), q smoothed where p has mass."""
    p = p / p.sum()
    q = q / q.sum() if q.sum() > 0 else np.full_like(q, 1.0 / q.size)
    q = _smooth(q)
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def entropy_threshold(hist, absmax, levels=128):
    """The |x| threshold that minimises the KL divergence between the observed distribution
    (hist: counts of |x| in equal bins over [0, absmax]) clipped at the threshold and its
    version quantized into `levels` steps. Candidates are the bin edges from `levels` bins
    up to all of them."""
    hist = np.asarray(hist, np.float64)
    bins = hist.size
    if absmax <= 0 or hist.sum() <= 0 or bins <= levels:
        return float(absmax)
    width = absmax / bins
    suffix = np.concatenate([np.cumsum(hist[::-1])[::-1], [0.0]])  # suffix[i] = hist[i:].sum()
    nonzero = (hist > 0).astype(np.float64)
    best_kl, best_i = np.inf, bins
    steps = np.arange(levels + 1)
    for i in range(levels, bins + 1):
        src = hist[:i]
        p = src.copy()
        p[i - 1] += suffix[i]               # the clipped values land in the last bin
        bounds = (steps * i) // levels      # i bins merged into `levels` groups
        sums = np.add.reduceat(src, bounds[:-1])
        counts = np.add.reduceat(nonzero[:i], bounds[:-1])
        per_bin = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        q = np.repeat(per_bin, np.diff(bounds)) * nonzero[:i]  # spread back over non-empty bins
        kl = kl_divergence(p, q)
        if kl < best_kl:
            best_kl, best_i = kl, i
    return float(best_i * width)


def entropy_levels(lo, symmetric):
    """The quantization steps over [0, T] an 8-bit range gives: 255 for non-negative data
    with asymmetric activations (the whole range is used), 127 otherwise (one side)."""
    return 255 if lo >= 0 and not symmetric else 127


# ---- calibration runs -----------------------------------------------------------------

def augmented_model(model, tensors, types):
    """A copy of the model with each of tensors (not a graph input or output already) added
    as a graph output."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    present = {o.name for o in copy.graph.output} | {i.name for i in copy.graph.input}
    for name in tensors:
        if name not in present:
            copy.graph.output.append(helper.make_tensor_value_info(name, types.get(name, TensorProto.FLOAT), None))
    return copy


def _observe(tensors, sample, outputs):
    for name in tensors:
        array = sample.feeds.get(name)
        if array is None:
            array = outputs.get(name)
        if array is None:
            raise QuantizeError(f"infer returned no value for tensor '{name}' while calibrating")
        yield name, np.asarray(array)


class Calibrator:
    """Runs the calibration copy of the model and turns what it sees into ranges."""

    def __init__(self, runner, model, types, tmpdir, show_progress=True):
        self.runner = runner
        self.model = model
        self.types = types
        self.tmpdir = tmpdir
        self.show_progress = show_progress

    def _passes(self, tensors, samples, label):
        """Yields (name, array) for every tensor in every sample, with a progress bar."""
        path = os.path.join(self.tmpdir, "calibration.onnx")
        onnx.save(augmented_model(self.model, tensors, self.types), path)
        run = self.runner.open(path, "the calibration copy of the model")
        bar = Progress(len(samples), label, enabled=self.show_progress)
        for sample in samples:
            outputs = run(sample.feeds, sample.label)
            yield from _observe(tensors, sample, outputs)
            bar.step()
        bar.done()

    def ranges(self, tensors, samples, method="minmax", percentile=99.999, bins=2048, symmetric=False):
        """{tensor: (low, high)} by the method; NaN or infinite values are an error."""
        if method not in METHODS:
            raise QuantizeError(f"unknown calibration method '{method}' (expected {', '.join(METHODS)})")
        two_pass = method != "minmax"
        extremes = {}
        label = "calibrating (pass 1/2: ranges)" if two_pass else "calibrating"
        for name, array in self._passes(tensors, samples, label):
            if array.size == 0:
                continue
            lo, hi = float(np.min(array)), float(np.max(array))
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise QuantizeError(f"tensor '{name}' holds NaN or infinite values on the calibration inputs")
            old = extremes.get(name)
            extremes[name] = (min(lo, old[0]), max(hi, old[1])) if old else (lo, hi)
        for name in tensors:
            extremes.setdefault(name, (0.0, 0.0))
        if not two_pass:
            return extremes
        hists = {name: np.zeros(bins, np.float64) for name in tensors}
        for name, array in self._passes(tensors, samples, "calibrating (pass 2/2: histograms)"):
            lo, hi = extremes[name]
            if method == "percentile":
                if hi > lo:
                    hists[name] += np.histogram(array, bins=bins, range=(lo, hi))[0]
            else:
                top = max(abs(lo), abs(hi))
                if top > 0:
                    magnitude = np.abs(array[array != 0])  # exact zeros (Relu's) are always exact
                    hists[name] += np.histogram(magnitude, bins=bins, range=(0.0, top))[0]
        result = {}
        graph_inputs = {i.name for i in self.model.graph.input}
        for name in tensors:
            lo, hi = extremes[name]
            if method == "percentile":
                result[name] = percentile_range(hists[name], lo, hi, percentile)
            elif name in graph_inputs:
                result[name] = (lo, hi)  # see the module docstring
            else:
                top = max(abs(lo), abs(hi))
                t = entropy_threshold(hists[name], top, entropy_levels(lo, symmetric))
                result[name] = (max(lo, -t), min(hi, t))
        return result
