#!/usr/bin/python3
"""Runs one model through infer's Python module for tools/bench/run_bench.py.

    /usr/bin/python3 py_runner.py --module-dir build/python --model M.onnx \
        --input NAME=FILE.npy... [--threads T] [--warmup W] [--iterations N]

Prints one JSON object: latencies_ms, one per timed session.run(feeds) call as a Python
program makes it (time.perf_counter around the call: argument conversion, the run with
the GIL released, and the output arrays are all inside).
"""
import argparse
import json
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module-dir", required=True, help="the folder holding the built infer module")
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE.npy")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=1000)
    args = parser.parse_args()
    sys.path.insert(0, args.module_dir)
    import numpy as np
    import infer
    feeds = {}
    for spec in args.input:
        name, _, file = spec.partition("=")
        feeds[name] = np.load(file)
    session = infer.Session(args.model, threads=args.threads)
    for _ in range(args.warmup):
        session.run(feeds)
    latencies = []
    clock = time.perf_counter
    for _ in range(args.iterations):
        start = clock()
        session.run(feeds)
        latencies.append((clock() - start) * 1e3)
    print(json.dumps({"latencies_ms": latencies}))


if __name__ == "__main__":
    main()
