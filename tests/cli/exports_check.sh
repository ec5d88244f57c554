#!/usr/bin/env bash
# Exports of every pipeline are valid ONNX that other tools load: each sample after -O1..-O3 and
# the quantization and pruning pipelines is written with -o, checked by onnx.checker (full
# check, with shape inference) with no node name used twice, read back by fusebox-opt, and run
# with the same outputs as the in-memory result.
set -euo pipefail
OPT="$1"
SAMPLES="$2"
PY="${3:-/usr/bin/python3}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
pipelines=("O1" "O2" "O3"
           "canonicalize,fold-batchnorm,quantize{samples=4,eval=0},lower-quantized"
           "canonicalize,fold-batchnorm,quantize{samples=4,eval=0}"
           "canonicalize,fold-batchnorm,prune{sparsity=0.3,structured=true,eval=0}")
passed=0
failed=0
for onnx in "$SAMPLES"/*.onnx; do
  name="$(basename "$onnx" .onnx)"
  for i in "${!pipelines[@]}"; do
    p="${pipelines[$i]}"
    out="$TMP/$name.$i.onnx"
    if ! "$OPT" "$onnx" --dim N=2 -p "$p" -o "$out" 2> "$TMP/err"; then
      # A pipeline may refuse a model with a reason (nothing to quantize is not an error).
      echo "FAIL $name [$p]: export failed: $(cat "$TMP/err")"; failed=$((failed + 1)); continue
    fi
    if ! "$PY" - "$out" > "$TMP/check" 2>&1 <<'PYEOF'
import collections, sys
import onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
names = collections.Counter(n.name for n in m.graph.node if n.name)
dups = [k for k, v in names.items() if v > 1]
if dups:
    sys.exit("node names used twice: " + ", ".join(dups[:5]))
PYEOF
    then
      echo "FAIL $name [$p]: $(tail -1 "$TMP/check")"; failed=$((failed + 1)); continue
    fi
    "$OPT" "$onnx" --dim N=2 -p "$p" --run --seed 5 --output-dir "$TMP/a.$name.$i" > /dev/null
    "$OPT" "$out" --run --seed 5 --output-dir "$TMP/b.$name.$i" > /dev/null
    if ! diff -r "$TMP/a.$name.$i" "$TMP/b.$name.$i" > /dev/null; then
      echo "FAIL $name [$p]: the exported model computes other outputs"; failed=$((failed + 1)); continue
    fi
    passed=$((passed + 1))
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
