// .npy files for the ONNX Runtime scripts (tools/bench/ort_runner.mjs,
// tools/realmodels/ort_reference.mjs): versions 1-3, little-endian, C order.
import fs from 'node:fs';

// ONNX Runtime's tensor type <-> .npy descr and the typed array holding the data.
const TYPES = [
  ['float32', '<f4', Float32Array], ['float64', '<f8', Float64Array],
  ['float16', '<f2', Uint16Array], ['int8', '|i1', Int8Array], ['uint8', '|u1', Uint8Array],
  ['int16', '<i2', Int16Array], ['uint16', '<u2', Uint16Array], ['int32', '<i4', Int32Array],
  ['uint32', '<u4', Uint32Array], ['int64', '<i8', BigInt64Array],
  ['uint64', '<u8', BigUint64Array], ['bool', '|b1', Uint8Array],
];
const BY_DESCR = Object.fromEntries(TYPES.map((t) => [t[1], t]));
export const BY_TYPE = Object.fromEntries(TYPES.map((t) => [t[0], t]));

export function readNpy(file, fail) {
  let buf;
  try { buf = fs.readFileSync(file); } catch (e) { fail(`cannot read '${file}': ${e.message}`); }
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`'${file}' is not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) fail(`'${file}': unreadable .npy header ${header}`);
  if (fortran === 'True') fail(`'${file}': Fortran order is not supported`);
  const type = BY_DESCR[descr];
  if (!type) fail(`'${file}': dtype ${descr} is not supported`);
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  // Copy into an aligned buffer: the typed array needs an element-aligned offset.
  const bytes = new Uint8Array(count * type[2].BYTES_PER_ELEMENT);
  if (buf.length - offset < bytes.length) fail(`'${file}': truncated data`);
  bytes.set(buf.subarray(offset, offset + bytes.length));
  return { type: type[0], data: new type[2](bytes.buffer), shape };
}

export function writeNpy(file, descr, typed, shape) {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  // Pad so that magic + length + header + '\n' is a multiple of 64, as numpy does.
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'),
    Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength)]));
}
