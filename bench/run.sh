#!/usr/bin/env bash
# The Fusebox CPU benchmark in one command: Fusebox vs ONNX Runtime, side by side, for GEMM
# 256/512/1024 and ONNX models, with the measured peak FP32 FLOP/s and GEMM efficiency.
#
#   bench/run.sh [--threads N] [--runs N] [--rounds N] [--torchvision] [--cpu NAME] [--int8]
#                [MODEL.onnx ...]
#
# Without models it benchmarks the samples/*.onnx models. --torchvision also exports
# resnet18, resnet50, mobilenet_v2, squeezenet1_0 and efficientnet_b0 (random weights) with
# scripts/export_torchvision.py into
# $FUSEBOX_BENCH_CACHE/tv and adds them. --cpu NAME (znver2, haswell) adds a column with each
# model compiled for that CPU's code path (AVX2 without AVX-512) and timed on this host. --int8
# adds a row per model for its quantized pipeline (int8 kernels) beside ONNX Runtime on the
# same quantized export (written by fusebox-opt -o into $FUSEBOX_BENCH_CACHE/int8). --rounds N
# (default 3) times each model N times, ONNX Runtime and Fusebox in turn, and reports the
# median of the rounds' medians. ONNX Runtime comes from the npm package onnxruntime-node,
# installed once into $FUSEBOX_BENCH_CACHE (default ~/.cache/fusebox-bench), never into the
# repository. Expects a built tree in ${FUSEBOX_BUILD_DIR:-build}.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUSEBOX_BUILD_DIR:-$root/build}"
cache="${FUSEBOX_BENCH_CACHE:-$HOME/.cache/fusebox-bench}"
python=/usr/bin/python3
threads=2
runs=20
rounds=3
torchvision=0
cpu=()
int8=()
models=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --torchvision) torchvision=1; shift ;;
    --cpu) cpu=(--cpu "$2"); shift 2 ;;
    --int8) int8=(--int8); shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) models+=("$1"); shift ;;
  esac
done

bench="$build/bench/fusebox-bench"
if [[ ! -x "$bench" ]]; then
  echo "run.sh: $bench not found; build it first (ninja -C $build fusebox-bench)" >&2
  exit 1
fi

mkdir -p "$cache"
if [[ ! -d "$cache/node_modules/onnxruntime-node" ]]; then
  echo "run.sh: installing onnxruntime-node into $cache" >&2
  [[ -f "$cache/package.json" ]] || echo '{"name":"fusebox-bench-cache","private":true}' >"$cache/package.json"
  (cd "$cache" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund onnxruntime-node >&2)
fi

"$python" "$root/scripts/make_bench_models.py" "$cache/models" 256 512 1024
if [[ ${#models[@]} -eq 0 ]]; then
  for m in "$root"/samples/*.onnx; do models+=("$m"); done
fi
if [[ $torchvision -eq 1 ]]; then
  for m in resnet18 resnet50 mobilenet_v2 squeezenet1_0 efficientnet_b0; do
    [[ -f "$cache/tv/$m.onnx" ]] || "$python" "$root/scripts/export_torchvision.py" "$cache/tv" "$m" >&2
    models+=("$cache/tv/$m.onnx")
  done
fi

# With --int8: each model's quantized export, the graph fusebox-bench's int8 row compiles.
exports=()
if [[ ${#int8[@]} -gt 0 ]]; then
  mkdir -p "$cache/int8"
  for m in "${models[@]}"; do
    q="$cache/int8/$(basename "${m%.onnx}").int8.onnx"
    "$build/app/cli/fusebox-opt" "$m" \
      -p 'canonicalize,fold-batchnorm,quantize{samples=4,eval=0},lower-quantized' -o "$q" >&2
    exports+=("$q")
  done
fi

# ONNX Runtime times each model right before Fusebox does (--ort-cmd), so both columns of a
# row come from the same minute of a shared machine whose load drifts; the GEMM sizes and the
# int8 exports are timed first, into a file.
ort="$cache/ort-results.tsv"
ort_cmd="node '$root/scripts/bench_ort.js' --threads $threads --runs $runs --warmup 20"
node "$root/scripts/bench_ort.js" --threads "$threads" --runs "$runs" \
  "$cache"/models/gemm_{256,512,1024}.onnx "${exports[@]}" >"$ort"
"$bench" --threads "$threads" --runs "$runs" --rounds "$rounds" --ort "$ort" --ort-cmd "$ort_cmd" "${cpu[@]}" \
  "${int8[@]}" "${models[@]}"
