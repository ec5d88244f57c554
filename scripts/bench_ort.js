// Times ONNX models with ONNX Runtime (the npm package onnxruntime-node) for bench/run.sh:
//   node scripts/bench_ort.js [--threads 2] [--runs 20] [--warmup 5] model.onnx...
// Prints one line per model: "<path>\t<median ms>\t<min ms>". onnxruntime-node is looked up in
// $FUSEBOX_BENCH_CACHE/node_modules (default ~/.cache/fusebox-bench), never in the repository.
'use strict';
const path = require('path');
const os = require('os');

const cache = process.env.FUSEBOX_BENCH_CACHE || path.join(os.homedir(), '.cache', 'fusebox-bench');
let ort;
try {
  ort = require(path.join(cache, 'node_modules', 'onnxruntime-node'));
} catch (e) {
  console.error(`bench_ort.js: onnxruntime-node not found in ${cache}; run bench/run.sh, which installs it`);
  process.exit(2);
}

const args = process.argv.slice(2);
let threads = 2, runs = 20, warmup = 5;
const models = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--threads') threads = parseInt(args[++i], 10);
  else if (args[i] === '--runs') runs = parseInt(args[++i], 10);
  else if (args[i] === '--warmup') warmup = parseInt(args[++i], 10);
  else models.push(args[i]);
}

/// A deterministic input tensor for one input's metadata; symbolic dimensions become 1.
function makeInput(meta, seed) {
  const shape = (meta.shape || []).map((d) => (typeof d === 'number' && d > 0 ? d : 1));
  const n = shape.reduce((a, b) => a * b, 1);
  let s = seed >>> 0;
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 4294967296) * 2 - 1;
  switch (meta.type) {
    case 'float32': return new ort.Tensor('float32', Float32Array.from({length: n}, next), shape);
    case 'int64': return new ort.Tensor('int64', new BigInt64Array(n), shape);
    case 'int32': return new ort.Tensor('int32', new Int32Array(n), shape);
    case 'bool': return new ort.Tensor('bool', new Uint8Array(n), shape);
    default: throw new Error(`unsupported input type ${meta.type} of ${meta.name}`);
  }
}

(async () => {
  for (const model of models) {
    const session = await ort.InferenceSession.create(model, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    });
    const feeds = {};
    session.inputMetadata.forEach((meta, i) => { feeds[meta.name] = makeInput(meta, 17 + i); });
    for (let i = 0; i < warmup; ++i) await session.run(feeds);
    const times = [];
    for (let i = 0; i < runs; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(`${model}\t${times[Math.floor(times.length / 2)].toFixed(4)}\t${times[0].toFixed(4)}`);
    await session.release();
  }
})().catch((e) => {
  console.error(`bench_ort.js: ${e.message}`);
  process.exit(1);
});
