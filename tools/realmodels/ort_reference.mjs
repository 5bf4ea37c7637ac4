// Runs one ONNX model with ONNX Runtime (onnxruntime-node) to make the reference outputs
// of the real-model corpus (tools/realmodels/fetch.py). ONNX Runtime is an oracle only:
// nothing in the product loads it.
//
//   node ort_reference.mjs --ort-dir DIR --model M.onnx --input NAME=FILE.npy... \
//        --run LEVEL=OUTDIR... [--threads T]
//
// DIR is the folder `npm install onnxruntime-node` was run in. Each --run creates a
// session at graph optimization level LEVEL (disabled, basic, extended, all), runs the
// inputs once and writes every output as OUTDIR/<name>.npy (characters outside
// [A-Za-z0-9._-] become '_', as infer-run does). Every dtype ONNX Runtime returns for a
// tensor is written: float16/32/64, int8/16/32/64, uint8/16/32/64 and bool.
// Prints one JSON object on stdout: ort_version, inputs [{name}], outputs [{name, file,
// dtype, shape}] in the session's output order, runs [{level, dir, create_ms, run_ms}].
// Errors: one line on stderr, exit status 1.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

import { BY_TYPE, readNpy, writeNpy } from '../bench/npy.mjs';

function fail(message) {
  process.stderr.write(`ort_reference: error: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = { inputs: [], runs: [], threads: 2 };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) fail(`${flag} needs a value`);
    ++i;
    const pair = () => {
      const eq = value.indexOf('=');
      if (eq <= 0) fail(`${flag} wants A=B, got '${value}'`);
      return [value.slice(0, eq), value.slice(eq + 1)];
    };
    switch (flag) {
      case '--ort-dir': args.ortDir = value; break;
      case '--model': args.model = value; break;
      case '--input': args.inputs.push(pair()); break;
      case '--run': args.runs.push(pair()); break;
      case '--threads': args.threads = Number(value); break;
      default: fail(`unknown flag '${flag}'`);
    }
  }
  if (!args.ortDir || !args.model || args.runs.length === 0)
    fail('--ort-dir, --model and at least one --run are required');
  return args;
}


function fileName(name) {
  return name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy';
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
    let data = a.data;
    // onnxruntime-node takes bool tensors as Uint8Array and float16 as Uint16Array.
    if (a.type === 'bool') data = new Uint8Array(data.buffer);
    feeds[name] = new ort.Tensor(a.type, data, a.shape);
  }
  const report = { ort_version: ort.env.versions?.node ?? 'unknown', inputs: [], outputs: [], runs: [] };
  for (const [level, dir] of args.runs) {
    const t0 = process.hrtime.bigint();
    let session;
    try {
      session = await ort.InferenceSession.create(args.model, {
        intraOpNumThreads: args.threads, interOpNumThreads: 1, graphOptimizationLevel: level,
        executionMode: 'sequential',
      });
    } catch (e) { fail(`cannot load '${args.model}' at level ${level}: ${e.message}`); }
    const t1 = process.hrtime.bigint();
    let results;
    try { results = await session.run(feeds); } catch (e) {
      fail(`running '${args.model}' at level ${level}: ${e.message}`);
    }
    const t2 = process.hrtime.bigint();
    fs.mkdirSync(dir, { recursive: true });
    const outputs = [];
    for (const name of session.outputNames) {
      const tensor = results[name];
      const type = BY_TYPE[tensor.type];
      if (!type) fail(`output '${name}' has type ${tensor.type}, which has no .npy writer here`);
      const file = fileName(name);
      writeNpy(path.join(dir, file), type[1], tensor.data, tensor.dims);
      outputs.push({ name, file, dtype: tensor.type, shape: Array.from(tensor.dims) });
    }
    report.inputs = session.inputNames.map((name) => ({ name }));
    report.outputs = outputs;
    report.runs.push({ level, dir, create_ms: Number(t1 - t0) / 1e6, run_ms: Number(t2 - t1) / 1e6 });
    await session.release?.();
  }
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => fail(e.message ?? String(e)));
