#!/usr/bin/env bash
# Where Fusebox loses to ONNX Runtime on another host's CPU, kernel by kernel: for a GPU
# machine's host (Python onnxruntime and PyTorch there, no perf), with binaries from a bundle of
# scripts/gpu_bundle.sh that has fusebox-bench among its extras. From the repository root:
#   scripts/device_cpu_diagnose.sh BUNDLE.tar.xz OUT_DIR [TUNE_SECONDS]
# Prints and writes to OUT_DIR:
#   gemm.txt        fusebox-bench GEMM 256/512/1024 (% of the measured FP32 peak) beside ORT
#   <model>.fb.txt  fusebox-opt --profile per kernel (2 threads, then 1 thread)
#   <model>.ort.txt scripts/ort_profile.py per node (2 threads)
#   tune.txt        fusebox-opt --tune on ResNet-18 (224x224): default against tuned time per
#                   kernel, i.e. whether another schedule is much faster on this CPU
# for ResNet-18 at 224x224 and the zoo's SqueezeNet 1.0 (64x64) and ViT-B/16.
set -u
bundle=$1; out=$2; tune_s=${3:-90}
mkdir -p "$out" /tmp/fb /tmp/fbzoo /tmp/fbtv /tmp/fbgemm
[[ -x /tmp/fb/bin/fusebox-opt ]] || tar -xJf "$bundle" -C /tmp/fb || exit 1
export LD_LIBRARY_PATH=/tmp/fb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/tmp/fb/bin:$PATH
export PYTHONUNBUFFERED=1
t0=$(date +%s)
section() { echo; echo "=== [$(($(date +%s) - t0)) s] $*"; }

section cpu
lscpu | grep -E 'Model name|^CPU\(s\)' ; grep -o -w -E 'avx2|avx512f|avx512_vnni|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
python3 scripts/export_torchvision.py /tmp/fbtv resnet18 >/dev/null 2>&1 &
python3 tests/zoo/export_zoo.py /tmp/fbzoo squeezenet1_0 vit_b_16 >/dev/null 2>&1
wait
python3 scripts/make_bench_models.py /tmp/fbgemm 256 512 1024 >/dev/null

section "GEMM against ORT"
python3 scripts/bench_ort.py --threads 2 --runs 10 /tmp/fbgemm/gemm_{256,512,1024}.onnx >/tmp/ort-gemm.tsv
fusebox-bench --threads 2 --runs 10 --ort /tmp/ort-gemm.tsv | tee "$out/gemm.txt" | tail -n 5

for m in /tmp/fbtv/resnet18.onnx /tmp/fbzoo/squeezenet1_0.onnx /tmp/fbzoo/vit_b_16.onnx; do
  name=$(basename "$(dirname "$m")")_$(basename "$m" .onnx)
  section "$name: Fusebox per kernel (2 threads, then 1), ORT per node"
  { timeout 120 fusebox-opt "$m" -O3 --backend cpu --threads 2 --bench 8 --profile /tmp/p.json
    timeout 120 fusebox-opt "$m" -O3 --backend cpu --threads 1 --bench 4 --profile /tmp/p1.json; } \
    >"$out/$name.fb.txt" 2>&1
  grep -E '^bench|^total' "$out/$name.fb.txt"
  timeout 120 python3 scripts/ort_profile.py --threads 2 --runs 8 "$m" >"$out/$name.ort.txt" 2>&1
  tail -n 1 "$out/$name.ort.txt"
done

section "ResNet-18 224: --tune (${tune_s} s) per kernel"
timeout $((tune_s + 120)) fusebox-opt /tmp/fbtv/resnet18.onnx -O3 --backend cpu --threads 2 --tune \
  --tune-budget "$tune_s" --tuning-log /tmp/tune.json >"$out/tune.txt" 2>&1
tail -n 30 "$out/tune.txt"
section done
