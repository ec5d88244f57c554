#!/usr/bin/env bash
# A debugging tool that cries wolf on a correct pipeline is worse than none: for every model and
# every pipeline whose outputs agree with the imported model's (--compare passes), the numeric
# diff between snapshot 0 and the last snapshot must report no divergence.
#   numeric_diff_no_false_alarm.sh FUSEBOX_OPT MODEL.onnx [MODEL.onnx ...]
# Pipelines: -O1..-O3 and each output-preserving pass alone, plus fold-batchnorm before fuse
# (the case that once accused the downsample convolutions of ResNet-18). Quantize and prune
# change the outputs on purpose and are left out. Symbolic dims are bound to 2.
set -uo pipefail
OPT="$1"; shift
pipelines=(O1 O2 O3 canonicalize dce cse fold-constants fold-batchnorm fuse-gemm-bias
           reassociate-matmul fuse "layout{to=nchw8c}" "layout{to=nhwc}" schedule-memory
           "canonicalize,fold-constants,fold-batchnorm,fuse"
           "canonicalize,fold-batchnorm,layout{to=nchw8c},fuse")
checked=0; skipped=0; failed=0
for model in "$@"; do
  name="$(basename "$model")"
  for p in "${pipelines[@]}"; do
    case "$p" in O[0-3]) args=("-$p") ;; *) args=(-p "$p") ;; esac
    # Only pipelines whose outputs agree: a real difference is not a false alarm.
    if ! "$OPT" "$model" "${args[@]}" --dim N=2 --seed 1 --compare > /dev/null 2>&1; then
      skipped=$((skipped + 1)); continue
    fi
    last=$("$OPT" "$model" "${args[@]}" --dim N=2 --numeric-diff 0,100000 2>&1 |
           sed -n 's/.*has snapshots 0\.\.\([0-9]*\).*/\1/p')
    if [ -z "$last" ]; then
      echo "FAIL $name $p: cannot find the last snapshot"; failed=$((failed + 1)); continue
    fi
    [ "$last" -eq 0 ] && continue
    out=$("$OPT" "$model" "${args[@]}" --dim N=2 --seed 1 --numeric-diff "0,$last" 2>&1)
    checked=$((checked + 1))
    if ! grep -q "^no divergence" <<< "$out"; then
      failed=$((failed + 1))
      echo "FAIL $name $p: outputs agree but the numeric diff reports"
      grep -E "DIVERGES|first divergent|error" <<< "$out" | head -5 | sed 's/^/    /'
    fi
  done
done
echo "numeric diff on correct pipelines: $checked checked, $failed false alarms" \
     "($skipped pipelines skipped: their outputs differ or they do not apply)"
[ "$failed" -eq 0 ] && [ "$checked" -gt 0 ]
