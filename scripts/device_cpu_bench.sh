#!/usr/bin/env bash
# The CPU benchmark (fusebox-bench beside ONNX Runtime) on a second kind of host: a GPU machine
# that has Python's onnxruntime and PyTorch but not this project's build dependencies. Its
# binaries come in a bundle made by scripts/gpu_bundle.sh with fusebox-bench among the extras:
#   scripts/gpu_bundle.sh build OUT_DIR build/bench/fusebox-bench [...]
# Run from the repository root there:
#   scripts/device_cpu_bench.sh BUNDLE.tar.xz OUT_DIR [THREADS] [RUNS] [AVX2_CPU]
# Prints the CPU (lscpu), then the benchmark table of bench/run.sh: the samples, the model zoo
# (tests/zoo/export_zoo.py: small inputs) and four torchvision models at 224x224, each timed by
# ONNX Runtime right before Fusebox (scripts/bench_ort.py through --ort-cmd), with the AVX2
# column compiled for AVX2_CPU (default: haswell on an Intel host, znver2 on an AMD one; the
# znver2 code path uses AMD-only instructions). The table is also written to
# OUT_DIR/cpu-bench.txt.
set -u
bundle=$1; out=$2; threads=${3:-2}; runs=${4:-10}; cpu=${5:-}
mkdir -p "$out" /tmp/fb /tmp/fbzoo /tmp/fbtv
[[ -x /tmp/fb/bin/fusebox-bench ]] || tar -xJf "$bundle" -C /tmp/fb || exit 1
export LD_LIBRARY_PATH=/tmp/fb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/tmp/fb/bin:$PATH
t0=$(date +%s)
section() { echo; echo "=== [$(($(date +%s) - t0)) s] $*"; }

section cpu
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket|Flags' | sed -E 's/^(Flags:).*/\1 '"$(grep -o -w -E 'avx2|avx512f|avx512_vnni|avx512_bf16|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')"'/'
python3 -c 'import onnxruntime as o; print("onnxruntime", o.__version__)'

section "exports (zoo at its sizes; resnet18, mobilenet_v2, squeezenet1_0, efficientnet_b0 at 224)"
python3 tests/zoo/export_zoo.py /tmp/fbzoo >/tmp/zoo-export.log 2>&1 &
zoo_pid=$!
for m in resnet18 mobilenet_v2 squeezenet1_0 efficientnet_b0; do
  [[ -f /tmp/fbtv/$m.onnx ]] || python3 scripts/export_torchvision.py /tmp/fbtv "$m" >/tmp/tv-export.log 2>&1
done
wait $zoo_pid
ls /tmp/fbzoo/*.onnx /tmp/fbtv/*.onnx | wc -l

[[ -n $cpu ]] || { grep -q GenuineIntel /proc/cpuinfo && cpu=haswell || cpu=znver2; }
section "fusebox-bench --threads $threads --runs $runs --cpu $cpu (ORT: scripts/bench_ort.py)"
models=(samples/*.onnx /tmp/fbzoo/*.onnx /tmp/fbtv/*.onnx)
fusebox-bench --threads "$threads" --runs "$runs" --sizes '' --cpu "$cpu" \
  --ort-cmd "python3 scripts/bench_ort.py --threads $threads --runs $runs --warmup 20" \
  "${models[@]}" 2>&1 | tee "$out/cpu-bench.txt"
section done
