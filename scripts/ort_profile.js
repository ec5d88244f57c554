// Per-node profile of one ONNX model in ONNX Runtime, to set beside `fusebox-opt --profile`:
//   node scripts/ort_profile.js [--threads 2] [--runs 20] model.onnx
// Prints one line per node (after ORT's own graph optimizations): median microseconds over the
// runs, the op type (ORT's, e.g. "FusedConv") and the node name, slowest first, then the sum.
// onnxruntime-node is looked up in $FUSEBOX_BENCH_CACHE/node_modules (bench/run.sh installs it).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const cache = process.env.FUSEBOX_BENCH_CACHE || path.join(os.homedir(), '.cache', 'fusebox-bench');
let ort;
try {
  ort = require(path.join(cache, 'node_modules', 'onnxruntime-node'));
} catch (e) {
  console.error(`ort_profile.js: onnxruntime-node not found in ${cache}; run bench/run.sh, which installs it`);
  process.exit(2);
}

const args = process.argv.slice(2);
let threads = 2, runs = 20, model = null;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--threads') threads = parseInt(args[++i], 10);
  else if (args[i] === '--runs') runs = parseInt(args[++i], 10);
  else model = args[i];
}
if (!model) {
  console.error('usage: ort_profile.js [--threads N] [--runs N] model.onnx');
  process.exit(2);
}

function makeInput(meta) {
  const shape = (meta.shape || []).map((d) => (typeof d === 'number' && d > 0 ? d : 1));
  const n = shape.reduce((a, b) => a * b, 1);
  let s = 17;
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 4294967296) * 2 - 1;
  switch (meta.type) {
    case 'float32': return new ort.Tensor('float32', Float32Array.from({length: n}, next), shape);
    case 'int64': return new ort.Tensor('int64', new BigInt64Array(n), shape);
    default: throw new Error(`unsupported input type ${meta.type} of ${meta.name}`);
  }
}

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    enableProfiling: true,
    profileFilePrefix: path.join(dir, 'ort'),
  });
  const feeds = {};
  session.inputMetadata.forEach((meta) => { feeds[meta.name] = makeInput(meta); });
  for (let i = 0; i < 5 + runs; ++i) await session.run(feeds);
  session.endProfiling();
  await session.release();
  const file = fs.readdirSync(dir).filter((f) => f.endsWith('.json'))[0];
  const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  fs.rmSync(dir, {recursive: true, force: true});
  // Node events are "<name>_kernel_time"; the first 5 runs of each node are warm-up.
  const byNode = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!byNode.has(name)) byNode.set(name, {op: (e.args && e.args.op_name) || '?', times: []});
    byNode.get(name).times.push(e.dur);
  }
  const rows = [];
  for (const [name, {op, times}] of byNode) {
    const measured = times.slice(5).sort((a, b) => a - b);
    if (measured.length) rows.push({name, op, us: measured[Math.floor(measured.length / 2)]});
  }
  rows.sort((a, b) => b.us - a.us);
  let total = 0;
  for (const r of rows) {
    total += r.us;
    console.log(`${String(r.us).padStart(8)}  ${r.op.padEnd(24)} ${r.name}`);
  }
  console.log(`${String(total).padStart(8)}  total of ${rows.length} nodes (us, medians)`);
})().catch((e) => {
  console.error(`ort_profile.js: ${e.message}`);
  process.exit(1);
});
