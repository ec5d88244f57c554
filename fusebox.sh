#!/usr/bin/env bash
# Installs what is missing, builds the Fusebox GUI, and opens it on a model (a sample when none is
# given). Extra arguments go to `fusebox`:  ./fusebox.sh MODEL --passes canonicalize,fuse
#                                           ./fusebox.sh MODEL --passes O2 --screenshot shots/
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh
BUILD_DIR="${FUSEBOX_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target fusebox
MODEL="samples/resnet_block.onnx"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  MODEL="$1"
  shift
fi
screenshot=no
for a in "$@"; do [ "$a" = "--screenshot" ] && screenshot=yes; done
if [ "$screenshot" = no ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] &&
   [ -z "${QT_QPA_PLATFORM:-}" ]; then
  echo "fusebox: no display found (DISPLAY and WAYLAND_DISPLAY are unset)." >&2
  echo "  Run it on a desktop, or render the views to PNG files instead:" >&2
  echo "  ./fusebox.sh $MODEL --passes canonicalize,fold-constants,fold-batchnorm,fuse --screenshot shots" >&2
  exit 1
fi
exec "$BUILD_DIR/app/gui/fusebox" "$MODEL" "$@"
