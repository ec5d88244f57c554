#!/usr/bin/env bash
# Do exported models compute in ONNX Runtime what Fusebox computed? For each model and each
# pipeline (-O1..-O3, quantization with and without lower-quantized, structured pruning):
#   fusebox-opt MODEL -p PIPELINE -o export.onnx --run --inputs IN --output-dir fusebox/
#   node scripts/ort_run.js export.onnx ort/ IN
# and every output of ORT is compared with Fusebox's (scripts/compare_npy.py, the --compare rule;
# quantized pipelines allow one quantization step of the output's scale, stol 2e-2, since ORT's
# int8 kernels may round an accumulator differently). A pipeline that refuses a model with a
# reason (nothing to quantize) is listed as "refused", not failed.
#
#   bench/check_exports.sh [MODEL.onnx ...]
# Default models: samples/*.onnx and the zoo exports in ${FUSEBOX_BUILD_DIR:-build}/zoo (their
# .input.npy; samples get a seeded random input with symbolic dims set to 2). onnxruntime-node
# comes from $FUSEBOX_BENCH_CACHE as for bench/run.sh (run that once to install it).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUSEBOX_BUILD_DIR:-$root/build}"
opt="$build/app/cli/fusebox-opt"
py=/usr/bin/python3
[ -x "$opt" ] || { echo "check_exports.sh: $opt not built" >&2; exit 2; }
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=("$root"/samples/*.onnx)
  for m in "$build"/zoo/*.onnx; do [ -f "${m%.onnx}.input.npy" ] && models+=("$m"); done
fi
pipelines=("O1" "O2" "O3"
           "canonicalize,fold-batchnorm,quantize{samples=4,eval=0},lower-quantized"
           "canonicalize,fold-batchnorm,quantize{samples=4,eval=0}"
           "canonicalize,fold-batchnorm,prune{sparsity=0.3,structured=true,eval=0}")
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0; refused=0; rounding=0
printf '%-34s %-60s %s\n' model pipeline result
for model in "${models[@]}"; do
  name="$(basename "$model" .onnx)"
  input="${model%.onnx}.input.npy"
  dims=()
  if [ ! -f "$input" ]; then
    input="$("$py" "$root/scripts/random_npy_inputs.py" "$model" "$tmp/$name")" ||
      { echo "$name: cannot make inputs" >&2; continue; }
    dims=(--dim N=2)
  fi
  for i in "${!pipelines[@]}"; do
    p="${pipelines[$i]}"
    work="$tmp/$name.$i"; mkdir -p "$work"
    stol=1e-4; case "$p" in *quantize*) stol=2e-2 ;; esac
    if ! timeout 600 "$opt" "$model" "${dims[@]}" -p "$p" -o "$work/export.onnx" --run \
         --inputs "$input" --output-dir "$work/fusebox" > "$work/log" 2>&1; then
      if grep -q "nothing to\|no .* to quantize\|unsupported" "$work/log"; then
        refused=$((refused + 1)); result="refused: $(grep -m1 error "$work/log" | cut -c1-80)"
      else
        fail=$((fail + 1)); result="FAIL fusebox: $(grep -m1 error "$work/log" | cut -c1-100)"
      fi
    elif ! node "$root/scripts/ort_run.js" "$work/export.onnx" "$work/ort" ${input//,/ } > "$work/log" 2>&1; then
      fail=$((fail + 1)); result="FAIL onnxruntime: $(tail -1 "$work/log" | cut -c1-120)"
    else
      result="ok"; worst=""; why=""; note=""
      for f in "$work"/fusebox/*.npy; do
        o="$work/ort/$(basename "$f")"
        if [ ! -f "$o" ]; then result="FAIL: onnxruntime has no output $(basename "$f" .npy)"; break; fi
        if ! cmp=$("$py" "$root/scripts/compare_npy.py" "$o" "$f" --atol 1e-4 --rtol 1e-3 --stol "$stol"); then
          # A quantized export may part from ORT by rounding alone: a float difference of a
          # few ulps moves one value across a rounding boundary, and the step grows through
          # the layers after it. scripts/qdq_divergence.py finds the first difference.
          if [ "$stol" != 1e-4 ] && why=$("$py" "$root/scripts/qdq_divergence.py" \
               "$work/export.onnx" "$opt" ${input//,/ }); then
            rounding=$((rounding + 1)); worst="$cmp"; note="; $why"; continue
          fi
          result="FAIL $(basename "$f" .npy): $cmp${why:+; $why}"; break
        fi
        worst="$cmp"
      done
      if [ "$result" = ok ]; then pass=$((pass + 1)); result="ok  ${worst%%  top1*}$note"; else fail=$((fail + 1)); fi
    fi
    printf '%-34s %-60s %s\n' "$name" "$p" "$result"
  done
done
echo "exports that ONNX Runtime runs with Fusebox's outputs: $pass passed ($rounding of them quantized exports that part from ORT by rounding alone, see scripts/qdq_divergence.py), $fail failed, $refused refused"
[ $fail -eq 0 ]
