#!/usr/bin/env bash
# Installs what is missing, builds Fusebox, and opens it on a model (a sample when none is given).
# Until the GUI lands, this shows the model with fusebox-opt: its IR and statistics.
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh
BUILD_DIR="${FUSEBOX_BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR"
MODEL="${1:-samples/small_cnn.onnx}"
if [ -x "$BUILD_DIR/app/gui/fusebox" ]; then
  exec "$BUILD_DIR/app/gui/fusebox" "$MODEL"
fi
"$BUILD_DIR/app/cli/fusebox-opt" "$MODEL" --stats
"$BUILD_DIR/app/cli/fusebox-opt" "$MODEL" --print-ir
