#!/usr/bin/env bash
# Every sample: imports, prints, round-trips (.onnx -> .fbir equals the committed .fbir golden file;
# .fbir -> .onnx -> .fbir is identical) and runs on the interpreter with identical outputs from the
# .onnx and the .fbir form.
set -euo pipefail
OPT="$1"
SAMPLES="$2"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fail=0
count=0
for onnx in "$SAMPLES"/*.onnx; do
  name="$(basename "$onnx" .onnx)"
  golden="$SAMPLES/$name.fbir"
  count=$((count + 1))
  "$OPT" "$onnx" -o "$TMP/$name.fbir"
  if ! cmp -s "$TMP/$name.fbir" "$golden"; then
    echo "FAIL $name: .onnx -> .fbir differs from the committed $golden"; fail=1
  fi
  "$OPT" "$golden" -o "$TMP/$name.onnx"
  "$OPT" "$TMP/$name.onnx" -o "$TMP/$name.again.fbir"
  if ! cmp -s "$TMP/$name.again.fbir" "$golden"; then
    echo "FAIL $name: .fbir -> .onnx -> .fbir is not identical"; fail=1
  fi
  "$OPT" "$onnx" --run --seed 7 --dim N=3 --output-dir "$TMP/out-onnx-$name" > /dev/null
  "$OPT" "$golden" --run --seed 7 --dim N=3 --output-dir "$TMP/out-fbir-$name" > /dev/null
  if ! diff -r "$TMP/out-onnx-$name" "$TMP/out-fbir-$name" > /dev/null; then
    echo "FAIL $name: outputs of the .onnx and .fbir forms differ"; fail=1
  fi
  "$OPT" "$golden" --print-ir > "$TMP/$name.printed"
  grep -q "^graph @" "$TMP/$name.printed" || { echo "FAIL $name: --print-ir printed no graph"; fail=1; }
done
if [ "$count" -eq 0 ]; then echo "FAIL: no samples found in $SAMPLES"; exit 1; fi
if [ "$fail" -ne 0 ]; then echo "0 passed, 1 failed"; exit 1; fi
echo "$count samples round-tripped and ran"
