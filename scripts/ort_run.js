// Runs one ONNX model once in ONNX Runtime on inputs read from .npy files and writes every output
// as .npy, for bench/check_exports.sh (does an exported model compute what Fusebox computed?):
//   node scripts/ort_run.js MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...]
// Writes OUT_DIR/<output name>.npy, the name made file-safe as fusebox-opt --output-dir does
// (every character but letters, digits, '_', '-' and '.' becomes '_'). Handles float32, int64, int32, uint8,
// int8 and bool arrays in C order. onnxruntime-node comes from $FUSEBOX_BENCH_CACHE (default
// ~/.cache/fusebox-bench), as for scripts/bench_ort.js.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');

const cache = process.env.FUSEBOX_BENCH_CACHE || path.join(os.homedir(), '.cache', 'fusebox-bench');
let ort;
try {
  ort = require(path.join(cache, 'node_modules', 'onnxruntime-node'));
} catch (e) {
  console.error(`ort_run.js: onnxruntime-node not found in ${cache}; run bench/run.sh, which installs it`);
  process.exit(2);
}

// numpy descr <-> ORT tensor type and typed array.
const TYPES = {
  '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
  '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12);
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
    .filter((s) => s.length).map(Number);
  const t = TYPES[descr];
  if (!t) throw new Error(`${file}: dtype ${descr} not handled`);
  const body = buf.subarray(start + headerLen);
  const copy = new Uint8Array(body.length);
  copy.set(body);
  const data = new t[1](copy.buffer, 0, body.length / t[1].BYTES_PER_ELEMENT);
  return new ort.Tensor(t[0], data, shape);
}

function writeNpy(file, tensor) {
  const descr = Object.keys(TYPES).find((k) => TYPES[k][0] === tensor.type);
  if (!descr) throw new Error(`output of type ${tensor.type} not handled`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((header.length + 10) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

(async () => {
  const [model, outDir, ...inputs] = process.argv.slice(2);
  if (!model || !outDir) {
    console.error('usage: node scripts/ort_run.js MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...]');
    process.exit(2);
  }
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 2});
  if (inputs.length !== session.inputNames.length)
    throw new Error(`${model} has ${session.inputNames.length} inputs, ${inputs.length} given`);
  const feeds = {};
  session.inputNames.forEach((name, i) => { feeds[name] = readNpy(inputs[i]); });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, {recursive: true});
  session.outputNames.forEach((name) => {
    const file = (name.replace(/[^A-Za-z0-9_.-]/g, '_') || 'output') + '.npy';
    writeNpy(path.join(outDir, file), results[name]);
  });
})().catch((e) => {
  console.error(`ort_run.js: ${e.message}`);
  process.exit(1);
});
