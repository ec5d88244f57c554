#!/usr/bin/env bash
# Packs fusebox-opt (and any extra binaries, e.g. test executables) with the shared libraries
# they need into one tarball for a GPU machine that has an NVIDIA driver but no LLVM 19, Qt 6,
# protobuf or ONNX libraries. At most 64 MiB may travel there, the working tree's tracked files
# included, so the tarball must stay under 64 MiB less the tree (and 1 MiB of slack).
#
#   scripts/gpu_bundle.sh BUILD_DIR OUT_DIR [EXTRA_BINARY...]
#
# Makes OUT_DIR/fusebox-gpu.tar.xz holding
#   bin/fusebox-opt, bin/<extra>  copies with debug info stripped (the originals are untouched)
#   lib/<soname>                  every library ldd lists for them, symlinks dereferenced, except
#                                 the glibc core (vdso, ld-linux, libc, libm, libpthread, libdl,
#                                 librt), which the target's own glibc (>= 2.36) provides, and
#                                 Z3, replaced by an empty stub where LLVM binds it lazily
#   bin/env.sh                    source it to point LD_LIBRARY_PATH at lib/ and PATH at bin/
# Use there:  tar -xJf fusebox-gpu.tar.xz -C DIR && cd DIR && . bin/env.sh && fusebox-opt --help
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tree_bytes=$(cd "$root" && git ls-files -z 2>/dev/null | xargs -0 du -cb 2>/dev/null | tail -n 1 | cut -f1)
LIMIT_BYTES=$(((63 * 1024 * 1024) - ${tree_bytes:-0}))

die() {
  echo "gpu_bundle: $*" >&2
  exit 1
}

[[ $# -ge 2 ]] || die "usage: $0 BUILD_DIR OUT_DIR [EXTRA_BINARY...]"
build_dir=$1
out_dir=$2
shift 2
binaries=("$build_dir/app/cli/fusebox-opt" "$@")

for tool in ldd strip xz tar; do
  command -v "$tool" >/dev/null || die "needs '$tool' on PATH"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpu_bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"

# 1. Binaries: copy first (a build may be rewriting the original), then strip the copy.
for bin in "${binaries[@]}"; do
  [[ -f $bin ]] || die "no such binary: $bin (build it first)"
  name=$(basename "$bin")
  [[ -e $stage/bin/$name ]] && die "two binaries are named '$name'"
  cp "$bin" "$stage/bin/$name"
  head -c 4 "$stage/bin/$name" | grep -q 'ELF' || die "$bin is not an ELF binary"
  strip --strip-debug "$stage/bin/$name" || die "strip --strip-debug failed on a copy of $bin"
  chmod +x "$stage/bin/$name"
done

# 2. Libraries: the union of what ldd resolves for every binary, under the name the loader
# looks for (ldd's left column, which is the library's SONAME).
is_glibc_core() {
  case $1 in
    linux-vdso.so* | ld-linux-x86-64.so* | libc.so.6 | libm.so.6 | libpthread.so* | libdl.so* | \
      librt.so*) return 0 ;;
  esac
  return 1
}

# LLVM links Z3 for the static analyzer's constraint solver, which Fusebox never calls: where
# the library that needs it binds lazily (no BIND_NOW), an empty stub under Z3's SONAME takes
# its place and saves about 7 MB of the 64 MiB that travel.
stub_z3() { # $1: the soname; $2: the library that needs it
  command -v cc >/dev/null || return 1
  readelf -d "$2" 2>/dev/null | grep -qE 'BIND_NOW|FLAGS.*NOW' && return 1
  echo 'void fusebox_z3_stub(void) {}' >"$stage/z3stub.c"
  cc -shared -fPIC -Wl,-soname,"$1" -o "$stage/lib/$1" "$stage/z3stub.c" && rm "$stage/z3stub.c"
}

declare -A copied=()
for bin in "$stage"/bin/*; do
  deps=$(ldd "$bin" 2>&1) || die "ldd failed on $(basename "$bin"): $deps"
  missing=$(grep 'not found' <<<"$deps" || true)
  [[ -z $missing ]] || die "$(basename "$bin") has unresolved libraries:"$'\n'"$missing"
  while read -r soname arrow path _; do
    [[ $arrow == "=>" && $path == /* ]] || continue # vdso and the loader have no '=> /path'
    is_glibc_core "$soname" && continue
    [[ -n ${copied[$soname]:-} ]] && continue
    if [[ $soname == libz3.so* ]]; then
      needer=$(ldd "$bin" | awk '/libLLVM/ {print $3}')
      if [[ -n $needer ]] && stub_z3 "$soname" "$needer"; then
        copied[$soname]=stub
        continue
      fi
    fi
    cp --dereference "$path" "$stage/lib/$soname"
    copied[$soname]=$path
  done <<<"$deps"
done

# 3. The environment script, relative to its own location.
cat >"$stage/bin/env.sh" <<'EOF'
# Source this (bash: from anywhere; POSIX sh: from the bundle's root) to run the bundled
# binaries with the bundled libraries.
if [ -n "${BASH_SOURCE:-}" ]; then
  fusebox_bundle_bin=$(cd "$(dirname "$BASH_SOURCE")" && pwd)
elif [ -f ./bin/env.sh ]; then
  fusebox_bundle_bin=$(pwd)/bin
else
  fusebox_bundle_bin=$(pwd)
fi
FUSEBOX_BUNDLE_ROOT=$(dirname "$fusebox_bundle_bin")
LD_LIBRARY_PATH="$FUSEBOX_BUNDLE_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PATH="$fusebox_bundle_bin${PATH:+:$PATH}"
export FUSEBOX_BUNDLE_ROOT LD_LIBRARY_PATH PATH
unset fusebox_bundle_bin
EOF

# 4. The bundled fusebox-opt must start with the bundled libraries alone.
if ! LD_LIBRARY_PATH="$stage/lib" "$stage/bin/fusebox-opt" --help >/dev/null 2>&1; then
  die "the bundled fusebox-opt does not start with the bundled libraries"
fi

# 5. Pack.
mkdir -p "$out_dir"
tarball="$out_dir/fusebox-gpu.tar.xz"
echo "gpu_bundle: packing $(find "$stage/bin" -type f | wc -l) files in bin/ and ${#copied[@]} libraries" \
  "($(du -sh "$stage" | cut -f1) uncompressed) with xz -T0 -6 ..."
tar -C "$stage" -cf - bin lib | xz -T0 -6 >"$tarball.part"
mv "$tarball.part" "$tarball"

size=$(stat -c %s "$tarball")
size_mib=$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "gpu_bundle: $tarball: $size_mib MiB ($size bytes)"
if ((size > LIMIT_BYTES)); then
  echo "gpu_bundle: too large: $size_mib MiB exceeds the $((LIMIT_BYTES / 1048576)) MiB left beside the working tree (at most 64 MiB travels" \
    "to the GPU machine). The largest files, uncompressed:" >&2
  (cd "$stage" && du -b bin/* lib/* | sort -rn | head -8) >&2
  exit 1
fi
