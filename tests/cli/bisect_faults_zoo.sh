#!/usr/bin/env bash
# --bisect finds built-in faults in torchvision exports of the zoo: with the fault on it names the
# pass that carries it (pass faults) or a kernel of the generator that carries it (codegen
# faults), and with the fault off the same pipeline passes. The samples are covered by
# TestBisect and tests/lit/debug; this checks that the tools scale to real models.
#   bisect_faults_zoo.sh FUSEBOX_OPT ZOO_DIR
set -uo pipefail
OPT="$1"; ZOO="$2"
failed=0; checked=0
# model | pipeline | backend | fault | expected pass ("" for the imported model) | generator ("" for pass faults)
cases=(
  "resnet18_bn|canonicalize,layout,fuse|interp|layout-constant-channels|layout|"
  "swin_t|-O3|interp|canonicalize-drops-transpose|canonicalize|"
  "resnet18_bn|-O3|cpu|gemm-epilogue-drops-bias|fuse|gemm"
  "mobilenet_v2|-O1|cpu|gemm-edge-last-column||gemm"
)
for c in "${cases[@]}"; do
  IFS='|' read -r model pipeline backend fault pass generator <<< "$c"
  file="$ZOO/$model.onnx"
  case "$pipeline" in -O[0-3]) args=("$pipeline") ;; *) args=(-p "$pipeline") ;; esac
  checked=$((checked + 1))
  start=$(date +%s)
  out=$("$OPT" "$file" "${args[@]}" --backend "$backend" --bisect --json --inject-fault "$fault" 2>&1)
  rc=$?
  secs=$(( $(date +%s) - start ))
  verdict=$(python3 -c '
import json, sys
r = json.loads(sys.argv[1]); want_pass, want_gen = sys.argv[2], sys.argv[3]
problems = []
if not r["mismatch"]: problems.append("no mismatch found")
if want_pass and r["pass"] != want_pass: problems.append("pass %r, expected %r" % (r["pass"], want_pass))
if not want_pass and r["index"] != 0: problems.append("index %r, expected the imported model" % r["index"])
if not want_gen and r["rewrite"] is None: problems.append("no rewrite blamed")
if want_gen and (not r["kernel"] or r["kernel"]["generator"] != want_gen): problems.append("kernel %r, expected a %s kernel" % (r["kernel"], want_gen))
print("; ".join(problems) if problems else "ok pass=%s index=%s rewrite=%s kernel=%s" % (r["pass"], r["index"], r["rewrite"], r["kernel"] and r["kernel"]["name"]))
' "$out" "$pass" "$generator" 2>&1)
  if [ $rc -ne 1 ] || [[ "$verdict" != ok* ]]; then
    echo "FAIL $model $pipeline $backend $fault (exit $rc): $verdict"; failed=$((failed + 1))
  else
    echo "$model $pipeline $backend $fault: $verdict (${secs} s)"
  fi
  if ! "$OPT" "$file" "${args[@]}" --backend "$backend" --bisect > /dev/null 2>&1; then
    echo "FAIL $model $pipeline $backend: fails without the fault"; failed=$((failed + 1))
  fi
done
echo "bisect on zoo models: $checked faults checked, $failed failures"
[ "$failed" -eq 0 ]
