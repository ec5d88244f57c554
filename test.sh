#!/usr/bin/env bash
# Installs what is missing, builds Fusebox, and runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh --test
BUILD_DIR="${FUSEBOX_BUILD_DIR:-build}"
WERROR=OFF
if [ "${CI:-}" = "true" ]; then WERROR=ON; fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_WERROR=$WERROR >/dev/null
cmake --build "$BUILD_DIR"
cd "$BUILD_DIR"
ctest --output-on-failure -j"$(nproc)" "$@"
