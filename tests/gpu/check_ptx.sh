#!/usr/bin/env bash
# Every model's PTX (fusebox-opt -O3 --emit ptx) assembles with ptxas for sm_80 and sm_90, and no
# kernel of a default GPU schedule spills registers. Prints per model and architecture the
# kernels, the most registers a kernel uses, its shared memory and its spills (ptxas -v).
# Usage: check_ptx.sh FUSEBOX_OPT MODEL...   (skips, saying so, where no ptxas is found)
set -u
opt=$1; shift
ptxas=${PTXAS:-$(command -v ptxas || true)}
[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
if [ -z "$ptxas" ]; then
  echo "skipped: no ptxas on this machine (set PTXAS or install the CUDA toolkit)"
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
printf '%-34s %-6s %8s %8s %8s %8s\n' model arch kernels maxregs smem spills
for model in "$@"; do
  name=$(basename "$model"); name=${name%.*}
  for arch in sm_80 sm_90; do
    ptx="$tmp/$name.$arch.ptx"
    if ! "$opt" "$model" -O3 --emit ptx --target "$arch" -o "$ptx" >"$tmp/emit.log" 2>&1; then
      echo "FAIL $name $arch: fusebox-opt --emit ptx failed:"; sed 's/^/  /' "$tmp/emit.log" | head -5
      fail=1; continue
    fi
    if ! "$ptxas" -arch="$arch" -v "$ptx" -o "$tmp/out.cubin" >"$tmp/ptxas.log" 2>&1; then
      echo "FAIL $name $arch: ptxas rejected the PTX:"; grep -v '^ptxas info' "$tmp/ptxas.log" | head -5
      fail=1; continue
    fi
    read -r kernels regs smem spills < <(awk '
      /Compiling entry function/ {k++}
      /Used [0-9]+ registers/ {for (i=1;i<=NF;i++) if ($i=="Used") {r=$(i+1); if (r>mr) mr=r}
                               for (i=1;i<=NF;i++) if ($(i+1) ~ /^bytes$/ && $(i+2) ~ /^smem/) {if ($i>ms) ms=$i}}
      /bytes spill stores/ {for (i=1;i<=NF;i++) if ($(i+1)=="bytes" && $(i+2)=="spill") sp+=$i}
      END {printf "%d %d %d %d\n", k, mr, ms, sp}' "$tmp/ptxas.log")
    printf '%-34s %-6s %8s %8s %8s %8s\n' "$name" "$arch" "$kernels" "$regs" "$smem" "$spills"
    if [ "$spills" != 0 ]; then
      echo "FAIL $name $arch: a default schedule spills registers:"
      awk '/Function properties for/ {f=$NF} /spill stores/ && !/ 0 bytes spill stores/ {print "  " f ":" $0}' \
        "$tmp/ptxas.log" | head -6
      fail=1
    fi
    if [ "$kernels" = 0 ]; then echo "FAIL $name $arch: no kernel in the PTX"; fail=1; fi
  done
done
exit $fail
