// Runs one ONNX model with ONNX Runtime (onnxruntime-node) for tools/bench/run_bench.py.
// ONNX Runtime is a measuring stick only: nothing in the product loads it.
//
//   node ort_runner.mjs --ort-dir DIR --model M.onnx --input NAME=FILE.npy... \
//        [--threads T] [--warmup W] [--iterations N] [--output-dir OUT]
//
// DIR is the folder `npm install onnxruntime-node` was run in. Prints one JSON object on
// stdout: ort_version, latencies_ms (one per timed run, each an awaited session.run as a
// Node program calls it, so N-API and promise overhead are included), baseline_rss_mb
// (node with the runtime loaded but no session: what the process costs anyway),
// peak_rss_mb (process.resourceUsage().maxRSS at the end) and outputs {name: {shape, file}}
// with the last run's float32/int64 outputs written as .npy to OUT. Errors: one line on
// stderr, exit status 1.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

import { readNpy, writeNpy } from './npy.mjs';

function fail(message) {
  process.stderr.write(`ort_runner: error: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = { inputs: [], threads: 2, warmup: 3, iterations: 10, outputDir: '' };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) fail(`${flag} needs a value`);
    ++i;
    switch (flag) {
      case '--ort-dir': args.ortDir = value; break;
      case '--model': args.model = value; break;
      case '--input': {
        const eq = value.indexOf('=');
        if (eq <= 0) fail(`--input wants NAME=FILE.npy, got '${value}'`);
        args.inputs.push([value.slice(0, eq), value.slice(eq + 1)]);
        break;
      }
      case '--threads': args.threads = Number(value); break;
      case '--warmup': args.warmup = Number(value); break;
      case '--iterations': args.iterations = Number(value); break;
      case '--output-dir': args.outputDir = value; break;
      default: fail(`unknown flag '${flag}'`);
    }
  }
  if (!args.ortDir || !args.model) fail('--ort-dir and --model are required');
  return args;
}


function rssMb() {
  return process.resourceUsage().maxRSS / 1024;  // maxRSS is in KiB
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const require = createRequire(path.resolve(args.ortDir) + '/');
  let ort;
  try { ort = require('onnxruntime-node'); } catch (e) {
    fail(`cannot load onnxruntime-node from '${args.ortDir}': ${e.message}`);
  }
  const feeds = {};
  for (const [name, file] of args.inputs) {
    const a = readNpy(file, fail);
    feeds[name] = new ort.Tensor(a.type, a.data, a.shape);
  }
  const baseline = rssMb();
  let session;
  try {
    session = await ort.InferenceSession.create(args.model, {
      intraOpNumThreads: args.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    });
  } catch (e) { fail(`cannot load '${args.model}': ${e.message}`); }
  let results;
  for (let i = 0; i < args.warmup; ++i) results = await session.run(feeds);
  const latencies = [];
  for (let i = 0; i < args.iterations; ++i) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const outputs = {};
  if (results) {
    if (args.outputDir) fs.mkdirSync(args.outputDir, { recursive: true });
    for (const [name, tensor] of Object.entries(results)) {
      const entry = { shape: tensor.dims, type: tensor.type };
      const descr = { float32: '<f4', int64: '<i8', int32: '<i4' }[tensor.type];
      if (args.outputDir && descr) {
        entry.file = path.join(args.outputDir, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy');
        writeNpy(entry.file, descr, tensor.data, tensor.dims);
      }
      outputs[name] = entry;
    }
  }
  process.stdout.write(JSON.stringify({
    ort_version: ort.env.versions?.node ?? 'unknown', threads: args.threads, warmup: args.warmup,
    latencies_ms: latencies, baseline_rss_mb: baseline, peak_rss_mb: rssMb(), outputs,
  }) + '\n');
}

main().catch((e) => fail(e.message ?? String(e)));
