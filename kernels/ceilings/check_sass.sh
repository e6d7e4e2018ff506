#!/usr/bin/env bash
# The SASS the ceilings rest on, checked: every mma_kernel issues HMMA and
# every wgmma_kernel HGMMA (sm_90a), neither touching local memory (LDL/STL:
# spilled registers would slow the loop and measure the wrong thing); the FP32
# fma_kernel is FFMA chains; the shared-memory kernel uses 16-byte LDS; the
# read kernels 16-byte LDG.
#
#   kernels/ceilings/check_sass.sh [CUOBJDUMP] FILE   # FILE: the flashlab binary or libflashlab_ceilings.a
#
# Exit 0: all checks hold; 1: one failed (printed); 77: no cuobjdump here
# (ctest reports SKIPPED; the GPU machine's toolkit has it).
set -uo pipefail
if [ $# -eq 2 ]; then CUOBJDUMP=$1; FILE=$2; else CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump); FILE=${1:?usage: check_sass.sh [CUOBJDUMP] FILE}; fi
if [ ! -x "$CUOBJDUMP" ] && ! command -v "$CUOBJDUMP" >/dev/null 2>&1; then
  echo "SKIPPED: no cuobjdump on this machine ($CUOBJDUMP); run this where the CUDA toolkit has it"
  exit 77
fi
DUMP=$(mktemp)
trap 'rm -f "$DUMP"' EXIT
if ! "$CUOBJDUMP" --dump-sass "$FILE" > "$DUMP" 2>&1; then
  echo "FAILED: $CUOBJDUMP --dump-sass $FILE"; head -5 "$DUMP"; exit 1
fi
DEMANGLE=$(command -v c++filt || echo cat)

# One line per kernel: name, then counts of the instructions that matter.
awk '
  /Function : / { if (name != "") print name, hmma, ffma, lds128, ldg128, local, hgmma; name = $NF; hmma = ffma = lds128 = ldg128 = local = hgmma = 0; next }
  /HMMA/ { hmma++ }
  /HGMMA/ { hgmma++ }
  /FFMA/ { ffma++ }
  /LDS[.A-Z0-9]*\.128/ { lds128++ }
  /LDG[.A-Z0-9]*\.128/ { ldg128++ }
  /[^A-Z](LDL|STL)[. ]/ { local++ }
  END { if (name != "") print name, hmma, ffma, lds128, ldg128, local, hgmma }
' "$DUMP" | grep -E "ceilings" > "$DUMP.k" || true
trap 'rm -f "$DUMP" "$DUMP.k"' EXIT

fail=0
check() {  # pattern description condition-on-fields
  local pattern=$1 what=$2 cond=$3 n=0
  while read -r name hmma ffma lds ldg loc hgmma; do
    n=$((n + 1))
    local pretty
    pretty=$(echo "$name" | $DEMANGLE | sed 's/flashlab::ceilings::detail::(anonymous namespace):://')
    if awk -v h="$hmma" -v f="$ffma" -v s="$lds" -v g="$ldg" -v l="$loc" -v w="$hgmma" "BEGIN { exit !($cond) }"; then
      echo "ok    $pretty: HMMA $hmma, HGMMA $hgmma, FFMA $ffma, LDS.128 $lds, LDG.128 $ldg, local $loc"
    else
      echo "FAIL  $pretty: HMMA $hmma, HGMMA $hgmma, FFMA $ffma, LDS.128 $lds, LDG.128 $ldg, local $loc (expected $what)"
      fail=1
    fi
  done < <(grep -E "$pattern" "$DUMP.k")
  if [ "$n" -eq 0 ]; then echo "FAIL  no kernel matching $pattern in $FILE"; fail=1; fi
}
check "[0-9]mma_kernel" "HMMA >= 8 and no local memory" "h >= 8 && l == 0"
# The wgmma kernels exist only as sm_90a code: 4 HGMMA (one K = 64 tile) per loop trip.
check "wgmma_kernel" "HGMMA >= 4, no HMMA and no local memory" "w >= 4 && h == 0 && l == 0"
check "fma_kernelIfE" "FFMA >= 32 (8 chains, unrolled) and no local memory" "f >= 32 && l == 0"
check "smem_read_kernel" "LDS.128 >= 8 and no local memory" "s >= 8 && l == 0"
check "[0-9]read_kernel" "16-byte global loads and no local memory" "g >= 4 && l == 0"
[ "$fail" -eq 0 ] && echo "SASS checks passed" || echo "SASS checks FAILED"
exit "$fail"
