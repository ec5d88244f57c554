#!/usr/bin/env bash
# Coverage-guided fuzzing of the file readers with libFuzzer and AddressSanitizer: builds every
# tests/fuzz/Fuzz*.cpp target (ONNX importer, text IR parser, .npy reader) as a real libFuzzer
# binary with clang-19 (-DFUSEBOX_FUZZ=ON: fusebox_core is instrumented too) in its own build
# folder, then runs each for SECONDS. Needs the Debian packages clang-19 and libclang-rt-19-dev.
#
#   scripts/fuzz_readers.sh SECONDS [TARGET...]     e.g. scripts/fuzz_readers.sh 600
#
# Seeds come from the committed corpora (tests/fuzz/corpus, samples, tests/core/data); new
# inputs libFuzzer finds go to BUILD_DIR/corpus/<target>, never into the source tree. A crash
# leaves BUILD_DIR/crashes/<target>/crash-* and fails the run: copy it into the target's corpus
# folder (tests/fuzz/corpus/...) so the ctest smoke run replays it as a regression test.
# BUILD_DIR defaults to build-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:?usage: scripts/fuzz_readers.sh SECONDS [TARGET...]}"
shift
BUILD_DIR="${FUSEBOX_FUZZ_BUILD_DIR:-build-fuzz}"
for tool in clang++-19; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (apt-get install clang-19 libclang-rt-19-dev)" >&2; exit 2; }
done
ls /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  { echo "error: libFuzzer runtime missing (apt-get install libclang-rt-19-dev)" >&2; exit 2; }

TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  mapfile -t TARGETS < <(cd tests/fuzz && ls Fuzz*.cpp | sed 's/\.cpp$//')
fi
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_FUZZ=ON \
      -DCMAKE_CXX_COMPILER=clang++-19 -DFUSEBOX_BUILD_GUI=OFF \
      "${LAUNCHER[@]}" >/dev/null
nice -n 10 ninja -C "$BUILD_DIR" -j"${FUSEBOX_FUZZ_JOBS:-2}" "${TARGETS[@]}"

seeds_of() {
  case "$1" in
    FuzzOnnxImport) echo samples tests/fuzz/corpus/onnx ;;
    FuzzTextIrParser) echo tests/fuzz/corpus/text ;;
    FuzzNpyReader) echo tests/core/data ;;
    *) echo "tests/fuzz/corpus/$1" ;;
  esac
}

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
status=0
for t in "${TARGETS[@]}"; do
  corpus="$BUILD_DIR/corpus/$t"
  crashes="$BUILD_DIR/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  # Seed files are copied so libFuzzer's additions stay out of the source tree.
  for s in $(seeds_of "$t"); do
    [ -e "$s" ] && find "$s" -maxdepth 1 -type f -exec cp -n {} "$corpus/" \;
  done
  echo "== $t: ${SECONDS_EACH}s, corpus $corpus"
  if ! "$BUILD_DIR/tests/fuzz/$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=4096 \
        -timeout=20 -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus"; then
    echo "== $t: FAILED, reproducer(s) in $crashes" >&2
    status=1
  fi
done
exit $status
