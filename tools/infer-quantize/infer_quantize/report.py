"""The accuracy report: the quantized model against the float model on the same inputs,
per output: max and mean absolute error, cosine similarity, and, for 2-D outputs
[rows, classes], how often the arg-max (top-1) agrees."""

from dataclasses import dataclass

import numpy as np

from .progress import Progress


@dataclass
class OutputStats:
    """Running comparison of one output."""
    name: str
    max_abs: float = 0.0
    sum_abs: float = 0.0
    count: int = 0
    dot: float = 0.0
    norm_ref: float = 0.0
    norm_quant: float = 0.0
    top1_same: int = 0
    top1_rows: int = 0
    two_d: bool = True

    def add(self, reference, quantized):
        a = np.asarray(reference, np.float64)
        b = np.asarray(quantized, np.float64)
        if a.shape != b.shape:
            raise ValueError(f"output '{self.name}': shapes {a.shape} and {b.shape} differ")
        diff = np.abs(a - b)
        if diff.size:
            self.max_abs = max(self.max_abs, float(diff.max()))
        self.sum_abs += float(diff.sum())
        self.count += diff.size
        self.dot += float(np.sum(a * b))
        self.norm_ref += float(np.sum(a * a))
        self.norm_quant += float(np.sum(b * b))
        if a.ndim == 2 and a.shape[1] > 1:
            self.top1_same += int(np.sum(np.argmax(a, axis=1) == np.argmax(b, axis=1)))
            self.top1_rows += a.shape[0]
        else:
            self.two_d = False

    @property
    def mean_abs(self):
        return self.sum_abs / self.count if self.count else 0.0

    @property
    def cosine(self):
        if self.norm_ref > 0 and self.norm_quant > 0:
            return self.dot / np.sqrt(self.norm_ref * self.norm_quant)
        return 1.0 if self.norm_ref == self.norm_quant else 0.0

    @property
    def top1(self):
        """(agreeing rows, rows), or None for an output that is not 2-D."""
        return (self.top1_same, self.top1_rows) if self.two_d and self.top1_rows else None


def compare(reference_runs, quantized_runs):
    """[OutputStats] over paired runs ({name: array} each), float outputs only."""
    stats = {}
    for ref, quant in zip(reference_runs, quantized_runs):
        for name, a in ref.items():
            if np.asarray(a).dtype.kind != "f" or name not in quant:
                continue
            stats.setdefault(name, OutputStats(name)).add(a, quant[name])
    return list(stats.values())


def evaluate(runner, float_path, quant_path, samples, show_progress=True):
    """Runs both models on every sample; returns [OutputStats]."""
    run_float = runner.open(float_path, f"the float model {float_path}")
    run_quant = runner.open(quant_path, f"the quantized model {quant_path}")
    bar = Progress(len(samples), "evaluating", enabled=show_progress)
    refs, quants = [], []
    for sample in samples:
        refs.append(run_float(sample.feeds, sample.label))
        quants.append(run_quant(sample.feeds, sample.label))
        bar.step()
    bar.done()
    return compare(refs, quants)


def format_report(stats, source):
    """The report as text lines; source says which inputs it was measured on."""
    lines = [f"accuracy against the float model on {source}:"]
    header = ("output", "max abs error", "mean abs error", "cosine similarity", "top-1 agreement")
    rows = []
    for s in stats:
        top1 = s.top1
        agreement = f"{top1[0]}/{top1[1]} ({100.0 * top1[0] / top1[1]:.2f}%)" if top1 else "n/a (not 2-D)"
        rows.append((s.name, f"{s.max_abs:.6g}", f"{s.mean_abs:.6g}", f"{s.cosine:.6f}", agreement))
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return lines
