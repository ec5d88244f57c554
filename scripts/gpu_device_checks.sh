#!/usr/bin/env bash
# The GPU backend's checks and benchmarks on a machine with an NVIDIA GPU but without this
# project's build dependencies: fusebox-opt and the GPU tests come in a bundle made by
# scripts/gpu_bundle.sh. Run from the repository root:
#   scripts/gpu_device_checks.sh BUNDLE.tar.xz OUT_DIR [CARRIED_MODELS_DIR]
# Prints: the device; TestCudaDriver and TestGpuBackend (every sample run on the GPU and compared
# with the interpreter); TestGpuBlockPrograms when the bundle has it (block programs simulated); every sample and zoo model with --backend gpu --compare and --profile;
# GEMM 1024/2048/4096 kernel times against the device's FP32 peak; ResNet-18, MobileNet-v2 and a
# transformer layer, GPU against the CPU backend (medians). Torchvision models are exported
# there with its PyTorch (random weights) when it has one.
set -u
bundle=$1; out=$2; carried=${3:-}
mkdir -p "$out" /tmp/fb /tmp/fbzoo
tar -xJf "$bundle" -C /tmp/fb || exit 1
export FUSEBOX_SAMPLES_DIR=$PWD/samples LD_LIBRARY_PATH=/tmp/fb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/tmp/fb/bin:$PATH
section() { echo; echo "=== $*"; }
opt() { timeout 300 fusebox-opt "$@" 2>&1; }

section device
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv,noheader
nproc; date -u

section TestCudaDriver
timeout 120 TestCudaDriver 2>&1 | grep -E 'FAIL|QDEBUG|QWARN|Totals' | head -20
section TestGpuBackend
timeout 300 TestGpuBackend runsOnDevice 2>&1 | grep -E 'FAIL|SKIP|Loc:|Totals' | head -40
if command -v TestGpuBlockPrograms >/dev/null; then
  section TestGpuBlockPrograms
  timeout 300 TestGpuBlockPrograms 2>&1 | grep -E 'FAIL|Loc:|Totals' | head -20
fi

section "samples: --backend gpu --compare, then --profile (per-kernel table)"
for s in mlp small_cnn resnet_block mobilenet_v2_block transformer_block dynamic_batch; do
  for o in -O0 -O3; do
    echo "--- $s $o"
    opt samples/$s.fbir $o --backend gpu --compare | tail -n 6
    opt samples/$s.fbir $o --backend gpu --run --bench 5 --profile "/tmp/$s$o.trace.json" | tail -n 4
  done
done

section "zoo: export on the device (torch, random weights) and carried models"
python3 - <<'PY' 2>&1 | tail -n 5
import torch, torchvision, warnings
warnings.filterwarnings("ignore")
torch.manual_seed(0)
M = torchvision.models
for name, ctor in [("resnet18", M.resnet18), ("mobilenet_v2", M.mobilenet_v2),
                   ("efficientnet_b0", M.efficientnet_b0), ("squeezenet1_0", M.squeezenet1_0),
                   ("vit_b_16", M.vit_b_16), ("deeplabv3_mobilenet_v3_large", M.segmentation.deeplabv3_mobilenet_v3_large)]:
    m = ctor(weights=None, weights_backbone=None).eval() if name.startswith("deeplab") else ctor(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    try:
        torch.onnx.export(m, x, f"/tmp/fbzoo/{name}.onnx", opset_version=17, dynamo=False,
                          input_names=["input"], output_names=["logits"])
        print("exported", name)
    except Exception as e:
        print("export failed", name, type(e).__name__, str(e)[:200])
PY
[ -n "$carried" ] && cp "$carried"/*.onnx /tmp/fbzoo/ 2>/dev/null
for m in /tmp/fbzoo/*.onnx; do
  echo "--- $(basename "$m")"
  opt "$m" -O3 --backend gpu --compare | tail -n 3
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
  opt /tmp/gemm$n.fbir -O3 --backend gpu --run --bench 10 --profile "/tmp/gemm$n.json" | grep -E 'bench|k0_' | head -3
  echo "--- gemm $n (regtile=4: threads over outputs, no shared memory)"
  opt /tmp/gemm$n.fbir -O3 --backend gpu --run --bench 10 --schedule 'k0_matmul:regtile=4' --profile "/tmp/gemm$n.rt.json" | grep -E 'bench|k0_' | head -3
done

section "models: GPU against the CPU backend (medians)"
for m in /tmp/fbzoo/resnet18.onnx /tmp/fbzoo/mobilenet_v2.onnx samples/transformer_block.fbir; do
  [ -f "$m" ] || continue
  echo "--- $(basename "$m")"
  opt "$m" -O3 --backend gpu --run --bench 20 --profile "$out/$(basename "$m").gpu.trace.json" | grep -E 'bench|^ *k[0-9]' | head -6
  opt "$m" -O3 --backend cpu --run --bench 10 --threads "$(nproc)" | grep bench
done
ls -la "$out"
