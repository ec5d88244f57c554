#!/usr/bin/env bash
# The model zoo test: every model of tests/zoo/export_zoo.py (exported once into ZOO_DIR and
# cached there) is checked as a user would use it:
#   1. import and run on the reference interpreter, output compared with PyTorch's (float32 in
#      another order of operations: 1e-4 + 1e-3·|ref| + 1e-4·max|ref|);
#   2. -O1, -O2 and -O3 on the CPU backend, each compared with the interpreter (--compare, with
#      the same tolerance as step 1: both are float32 in another order of operations, and over
#      Inception-v3's 94 layers the CPU differs from the interpreter by 1.2e-3 on logits of
#      magnitude 14, as much as the interpreter differs from torch),
#      with the compile time and the median of 3 timed runs;
#   3. the GUI's screenshot mode after -O2 (QT_QPA_PLATFORM=offscreen).
# Prints a Markdown table (model, nodes, status, compile ms, latency ms). A model that fails is
# an error unless tests/zoo/known_failures.txt lists it with the reason; a listed model that now
# passes is reported so the list stays true.
#   tests/zoo/run_zoo.sh BUILD_DIR ZOO_DIR [MODEL ...]
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD="$1"; ZOO="$2"; shift 2
OPT="$BUILD/app/cli/fusebox-opt"
GUI="$BUILD/app/gui/fusebox"
PY=/usr/bin/python3
export FUSEBOX_KERNEL_CACHE="${FUSEBOX_KERNEL_CACHE:-$ZOO/kernel-cache}"
"$PY" "$HERE/export_zoo.py" "$ZOO" "$@" | sed 's/^/export: /'
models=("$@")
[ ${#models[@]} -eq 0 ] && mapfile -t models < <("$PY" "$HERE/export_zoo.py" --list)
known() { grep -q "^$1:" "$HERE/known_failures.txt"; }
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
echo
echo "| model | nodes (-O2) | status | compile ms (-O3) | latency ms (-O3, median of 3) |"
echo "|---|---|---|---|---|"
unexpected=0; passed=0; knownfail=0; fixed=0
for m in "${models[@]}"; do
  onnx="$ZOO/$m.onnx"; in="$ZOO/$m.input.npy"; want="$ZOO/$m.output.npy"
  status="ok"; nodes="-"; compile="-"; latency="-"
  if [ ! -f "$onnx" ]; then
    status="not exported"
  elif ! timeout 600 "$OPT" "$onnx" --run --inputs "$in" --output-dir "$TMP/$m" > "$TMP/log" 2>&1; then
    status="interpreter: $(grep -m1 error: "$TMP/log" | cut -c1-160)"
  elif ! "$PY" "$HERE/../../scripts/compare_npy.py" "$TMP/$m/output.npy" "$want" --atol 1e-4 --rtol 1e-3 --stol 1e-4 > "$TMP/cmp" 2>&1; then
    status="interpreter differs from torch: $(cat "$TMP/cmp")"
  else
    "$OPT" "$onnx" -O2 --stats --json > "$TMP/stats.json" 2>/dev/null &&
      nodes="$("$PY" "$HERE/zoo_json.py" nodes "$TMP/stats.json")"
    for level in O1 O2 O3; do
      if ! timeout 600 "$OPT" "$onnx" -$level --backend cpu --compare --tolerance 1e-4,1e-3,1e-4 --inputs "$in" --bench 3 --json > "$TMP/run.json" 2> "$TMP/log"; then
        status="-$level cpu: $( (grep -m1 error: "$TMP/log" || "$PY" "$HERE/zoo_json.py" failures "$TMP/run.json") | cut -c1-160)"
        break
      fi
      if [ "$level" = O3 ]; then
        read -r compile latency < <("$PY" "$HERE/zoo_json.py" timing "$TMP/run.json")
      fi
    done
    if [ "$status" = ok ] && [ -x "$GUI" ]; then
      if ! QT_QPA_PLATFORM=offscreen timeout 300 "$GUI" "$onnx" --passes O2 --screenshot "$TMP/shots-$m" > "$TMP/log" 2>&1 \
         || [ ! -s "$TMP/shots-$m/window.png" ]; then
        status="gui: $(tail -1 "$TMP/log" | cut -c1-160)"
      fi
    fi
  fi
  if [ "$status" = ok ]; then
    passed=$((passed + 1))
    if known "$m"; then fixed=$((fixed + 1)); status="ok (listed in known_failures.txt: remove it)"; fi
  elif known "$m"; then
    knownfail=$((knownfail + 1)); status="known: $status"
  else
    unexpected=$((unexpected + 1)); status="FAIL: $status"
  fi
  echo "| $m | $nodes | ${status//|/\\|} | $compile | $latency |"
done
echo
echo "zoo: $passed models pass every stage, $knownfail known failures (tests/zoo/known_failures.txt), $unexpected unexpected"
echo "$passed passed, $unexpected failed"
[ "$unexpected" -eq 0 ]
