#!/usr/bin/env bash
# Builds Fusebox with AddressSanitizer and UndefinedBehaviorSanitizer (-DFUSEBOX_SANITIZE=ON) in
# its own folder and runs the tests that feed it hostile and edge-case input.
#
#   scripts/sanitize_check.sh core   core and passes: their unit tests, the bad-input and
#                                    hostile-file tests and the fuzz smoke tests (what CI runs:
#                                    no LLVM code is instrumented, so it fits CI's time)
#   scripts/sanitize_check.sh full   everything but the GUI, and every test except the model zoo
#                                    and the two conformance sweeps (hours under ASan on 2 cores)
#
# BUILD_DIR defaults to build-asan. Any sanitizer report fails the run (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-core}"
BUILD_DIR="${FUSEBOX_ASAN_BUILD_DIR:-build-asan}"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The memory limit makes hostile sizes fail before allocating; ASan's own allocator limit would
# otherwise report them as allocation-size-too-big.
export ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1"
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSEBOX_SANITIZE=ON \
      -DFUSEBOX_BUILD_GUI=OFF "${LAUNCHER[@]}" >/dev/null
case "$MODE" in
  core)
    mapfile -t core_tests < <(cd tests/core && ls Test*.cpp | sed 's/\.cpp$//')
    mapfile -t pass_tests < <(cd tests/passes && ls Test*.cpp | sed 's/\.cpp$//' |
                              grep -v -e TestCanonicalize -e TestMemoryPlan -e TestPassManager)
    mapfile -t fuzz_tests < <(cd tests/fuzz && ls Fuzz*.cpp | sed 's/\.cpp$/Smoke/')
    targets=("${core_tests[@]}" "${pass_tests[@]}" "${fuzz_tests[@]}" TestBadInput TestHostileFiles)
    cmake --build "$BUILD_DIR" --target "${targets[@]}"
    regex="^($(IFS='|'; echo "${targets[*]}"))$"
    (cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)" -R "$regex")
    ;;
  full)
    cmake --build "$BUILD_DIR"
    (cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)" \
       -E '^(zoo_export|model_zoo|conformance|conformance_cpu)$')
    ;;
  *)
    echo "usage: $0 [core|full]" >&2
    exit 2
    ;;
esac
