"""The harness' arithmetic and table rendering, kept free of subprocesses, numpy and ONNX
Runtime so tests/tools/bench can check them directly.

Latencies come in rounds: every round runs each engine once (a fresh process doing
warmup + N timed runs) and yields that engine's median for the round. A model's latency
is the median of its round medians, and the spread is the lowest and highest round
median: alternating rounds expose both engines to the same background load, and the
spread says how much that load moved the figures.
"""

import math
import statistics


def median(values):
    if not values:
        raise ValueError("median of no values")
    return statistics.median(values)


def summarize_rounds(round_medians):
    """(median, lowest, highest) of the per-round medians, in ms."""
    return median(round_medians), min(round_medians), max(round_medians)


def ratio(ours_ms, theirs_ms):
    """ours / theirs: below 1 means infer is faster."""
    if theirs_ms <= 0:
        raise ValueError("the reference latency must be positive")
    return ours_ms / theirs_ms


def geometric_mean(values):
    """The geometric mean of positive numbers (ratios: a 2x and a 0.5x average to 1x)."""
    if not values or any(v <= 0 for v in values):
        raise ValueError("the geometric mean needs positive values")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def gflops_per_s(flops, ms):
    """Achieved GFLOP/s of a model doing `flops` in `ms` milliseconds (None without FLOPs)."""
    if not flops or ms <= 0:
        return None
    return flops / (ms * 1e-3) / 1e9


def fraction_of_peak(gflops, peak_gflops):
    if gflops is None or not peak_gflops:
        return None
    return gflops / peak_gflops


def peak_for_threads(peak_results, threads, cores=None):
    """The best measured GFLOP/s (any ISA) at the thread count closest to `threads` from
    below: a 2-thread run is measured against the 2-thread peak. With `cores` (physical
    cores, no SMT siblings) it is at least the best 1-thread figure x min(threads, cores):
    register-only FMA loops on separate cores scale linearly in hardware, and on a shared
    machine the many-thread measurement is the one background load spoils first."""
    if not peak_results:
        return None
    counts = sorted({r["threads"] for r in peak_results})
    usable = [c for c in counts if c <= threads] or counts[:1]
    chosen = usable[-1]
    best = max(r["gflops"] for r in peak_results if r["threads"] == chosen)
    if cores:
        one = [r["gflops"] for r in peak_results if r["threads"] == 1]
        if one:
            best = max(best, max(one) * min(threads, cores))
    return best


# ---- rendering ---------------------------------------------------------------------

def fmt_ms(ms):
    if ms is None:
        return "—"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def fmt_latency(summary):
    """'38.8 (38.1–40.2)' from (median, lo, hi)."""
    if summary is None:
        return "—"
    mid, lo, hi = summary
    return f"{fmt_ms(mid)} ({fmt_ms(lo)}–{fmt_ms(hi)})"


def fmt_gflops(gflops, fraction):
    if gflops is None:
        return "—"
    if fraction is None:
        return f"{gflops:.1f}"
    return f"{gflops:.1f} ({100 * fraction:.0f}%)"


def fmt_diff(diff):
    if diff is None:
        return "—"
    return f"{diff:.1e}"


def fmt_rss(mb):
    return "—" if mb is None else f"{mb:.0f}"


COLUMNS = ["model", "GFLOP", "infer ms (min–max)", "ORT ms (min–max)", "infer/ORT",
           "infer GFLOP/s (% peak)", "ORT GFLOP/s (% peak)", "infer RSS MB", "ORT RSS MB",
           "max abs diff"]


def row_cells(row, peak):
    """The table cells of one model's results: row is a dict with name, flops, infer and
    ort ((median, lo, hi) or None), infer_rss_mb, ort_rss_mb, max_abs_diff."""
    infer, ort = row.get("infer"), row.get("ort")
    g_infer = gflops_per_s(row.get("flops"), infer[0]) if infer else None
    g_ort = gflops_per_s(row.get("flops"), ort[0]) if ort else None
    r = f"{ratio(infer[0], ort[0]):.2f}×" if infer and ort else "—"
    flops = row.get("flops")
    return [row["name"], f"{flops / 1e9:.3g}" if flops else "—", fmt_latency(infer), fmt_latency(ort), r,
            fmt_gflops(g_infer, fraction_of_peak(g_infer, peak)), fmt_gflops(g_ort, fraction_of_peak(g_ort, peak)),
            fmt_rss(row.get("infer_rss_mb")), fmt_rss(row.get("ort_rss_mb")), fmt_diff(row.get("max_abs_diff"))]


def render_table(header, rows, markdown):
    """A Markdown table, or a plain one with columns padded to their widest cell."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(cells) + " |" for cells in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(cells) for cells in rows])
