#!/usr/bin/env bash
# The GPU backend's checks and benchmarks on a machine with an NVIDIA GPU but without this
# project's build dependencies: fusebox-opt and the GPU tests come in a bundle made by
# scripts/gpu_bundle.sh. Run from the repository root:
#   scripts/gpu_device_checks.sh BUNDLE.tar.xz OUT_DIR [CARRIED_MODELS_DIR]
# (the zoo's --compare runs stop starting after FUSEBOX_ZOO_DEADLINE_S seconds, default 330)
# Prints: the device; TestCudaDriver and TestGpuBackend (every sample run on the GPU and compared
# with the interpreter); TestGpuBlockPrograms when the bundle has it (block programs simulated); every sample and zoo model with --backend gpu --compare and --profile;
# GEMM 1024/2048/4096 kernel times against the device's FP32 peak; ResNet-18, MobileNet-v2 and a
# transformer layer, GPU against the CPU backend (medians). Torchvision models are exported
# there with its PyTorch (random weights) when it has one.
set -u
bundle=$1; out=$2; carried=${3:-}
mkdir -p "$out" /tmp/fb /tmp/fbzoo /tmp/fb224
tar -xJf "$bundle" -C /tmp/fb || exit 1
export FUSEBOX_SAMPLES_DIR=$PWD/samples LD_LIBRARY_PATH=/tmp/fb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/tmp/fb/bin:$PATH
t0=$(date +%s)
section() { echo; echo "=== [$(($(date +%s) - t0)) s] $*"; }
opt() { timeout 300 fusebox-opt "$@" 2>&1; }

# Exports run in the background while the device tests run: the zoo (tests/zoo/export_zoo.py,
# small inputs, the same models ctest's model_zoo checks on the CPU) and three at 224x224 for
# the timings.
python3 tests/zoo/export_zoo.py /tmp/fbzoo >/tmp/zoo-export.log 2>&1 &
zoo_pid=$!
python3 - >/tmp/224-export.log 2>&1 <<'PY' &
import inspect, torch, torchvision, warnings
warnings.filterwarnings("ignore")
torch.manual_seed(0)
legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
M = torchvision.models
for name in ["resnet18", "resnet50", "mobilenet_v2", "vit_b_16"]:
    m = getattr(M, name)(weights=None).eval()
    torch.onnx.export(m, torch.randn(1, 3, 224, 224), f"/tmp/fb224/{name}.onnx", opset_version=17,
                      input_names=["input"], output_names=["logits"], **legacy)
    print("exported", name, flush=True)
PY
big_pid=$!

section device
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv,noheader
nproc; date -u

section TestCudaDriver
timeout 120 TestCudaDriver 2>&1 | grep -E 'FAIL|QDEBUG|QWARN|Totals' | head -20
section TestGpuBackend
timeout 150 TestGpuBackend runsOnDevice 2>&1 | grep -E 'FAIL|SKIP|Loc:|Totals' | head -40
if command -v TestGpuBlockPrograms >/dev/null; then
  section TestGpuBlockPrograms
  timeout 300 TestGpuBlockPrograms 2>&1 | grep -E 'FAIL|Loc:|Totals' | head -20
fi

section "samples: --backend gpu --compare --profile (per-kernel table)"
for s in mlp small_cnn resnet_block mobilenet_v2_block transformer_block dynamic_batch; do
  for o in -O0 -O3; do
    echo "--- $s $o"
    opt samples/$s.fbir $o --backend gpu --compare --bench 5 --profile "/tmp/$s$o.trace.json" | head -n 24
  done
done

section "GEMM: kernel time (CUDA events) against the FP32 peak"
for n in 1024 2048 4096; do
  cat > /tmp/gemm$n.fbir <<G
graph @gemm$n opset 17 {
  input %a : f32[$n, $n]
  input %b : f32[$n, $n]
  %c : f32[$n, $n] = MatMul(%a, %b)
  output %c
}
G
  echo "--- gemm $n (default: shared-memory tiles)"
  opt /tmp/gemm$n.fbir -O3 --backend gpu --run --bench 10 --profile "/tmp/gemm$n.json" | grep -E 'bench|k0_|GFLOP|peak' | head -4
  echo "--- gemm $n (regtile=4: threads over outputs, no shared memory)"
  opt /tmp/gemm$n.fbir -O3 --backend gpu --run --bench 10 --schedule 'k0_matmul:regtile=4' --profile "/tmp/gemm$n.rt.json" | grep -E 'bench|k0_|GFLOP|peak' | head -4
done

section "zoo: --backend gpu --compare (exports from tests/zoo/export_zoo.py)"
wait $zoo_pid; tail -n 30 /tmp/zoo-export.log | grep -E 'export|cached'
[ -n "$carried" ] && cp "$carried"/*.onnx /tmp/fbzoo/ 2>/dev/null
for m in /tmp/fbzoo/*.onnx; do
  echo "--- $(basename "$m")"
  # A deadline keeps the timings below inside one device call of a few minutes.
  (($(date +%s) - t0 > ${FUSEBOX_ZOO_DEADLINE_S:-330})) && { echo "skipped: past the deadline"; continue; }
  timeout 60 fusebox-opt "$m" -O3 --backend gpu --compare 2>&1 | tail -n 3
done

section "models at 224x224: GPU against the CPU backend (medians)"
wait $big_pid; cat /tmp/224-export.log | grep -v Warning | tail -n 5
for m in /tmp/fb224/resnet18.onnx /tmp/fb224/resnet50.onnx /tmp/fb224/mobilenet_v2.onnx /tmp/fb224/vit_b_16.onnx samples/transformer_block.fbir; do
  [ -f "$m" ] || continue
  echo "--- $(basename "$m")"
  opt "$m" -O3 --backend gpu --compare --bench 20 --profile "$out/$(basename "$m").gpu.trace.json" | grep -E 'bench|ok|FAIL|max_abs|error' | head -6
  opt "$m" -O3 --backend cpu --run --bench 10 --threads "$(nproc)" | grep bench
done
section done
ls -la "$out"
