#!/usr/bin/env bash
# Runs every ONNX backend node-test case through `fusebox-opt --backend cpu --compare` (the
# compiled result against the interpreter on the case's own inputs) and summarizes the outcomes:
# passed, mismatches (a numeric difference: a codegen bug) and errors grouped by message.
#   scripts/check_cpu_conformance.sh [BUILD_DIR] [EXTRA fusebox-opt FLAGS...]
# The cases come from the `conformance_generate` ctest (BUILD_DIR/onnx-node-tests/node).
set -uo pipefail
build="${1:-build}"
shift || true
opt="$build/app/cli/fusebox-opt"
cases="$build/onnx-node-tests/node"
[ -x "$opt" ] || { echo "error: $opt not built" >&2; exit 2; }
[ -d "$cases" ] || { echo "error: $cases missing (run: ctest -R conformance_generate)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export FUSEBOX_KERNEL_CACHE=off
pass=0 mismatch=0 other=0
for dir in "$cases"/*/; do
  name="$(basename "$dir")"
  inputs="$(ls "$dir"/test_data_set_0/input_*.pb 2>/dev/null | sort -V | paste -sd, -)"
  args=()
  [ -n "$inputs" ] && args=(--inputs "$inputs")
  timeout 60 "$opt" "$dir/model.onnx" --backend cpu --compare "${args[@]}" "$@" >"$out/$name.txt" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1))
  elif grep -q '^compare:' "$out/$name.txt"; then
    mismatch=$((mismatch + 1))
    echo "MISMATCH $name"
  else
    other=$((other + 1))
    # One line per error kind: the message without node numbers and value names.
    grep -m1 '^error' "$out/$name.txt" | sed -E 's/#[0-9]+( "[^"]*")?/#N/g; s|[^ ]*/model.onnx|MODEL|' \
      | cut -c1-110 >>"$out/_errors"
  fi
done
echo "passed $pass, mismatched $mismatch, errors $other"
[ -f "$out/_errors" ] && sort "$out/_errors" | uniq -c | sort -rn | head -30
[ $mismatch -eq 0 ]
