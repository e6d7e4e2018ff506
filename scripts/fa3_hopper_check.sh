#!/usr/bin/env bash
# Runs ON the GPU machine, from a folder holding build-device/ (scripts/device-build.sh),
# assets/ and scripts/: a quick look at the Hopper rung before the full test suite.
#   1. its SASS (HGMMA, the TMA loads, setmaxnreg) where cuobjdump exists
#   2. fa3_hopper beside naive and fa2_tc against fp64 on ragged, causal, bf16 and N_q ≠ N_kv shapes
#   3. fa2_tc and fa3_hopper timed on the 16k-token grid (no PyTorch)   -> $OUT/fa3-perf.json
# (SKIP_CHECKS=1 runs only the first, for the SASS beside a full timing.)
set -uo pipefail
bash "$(dirname "$0")/device-unpack.sh"  # build-device/bin/*.xz, as scripts/device-build.sh sends them
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"
B=$PWD/build-device/bin/flashlab
OBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [ -x "$OBJDUMP" ]; then
  echo "== SASS of fa3_hopper_forward_kernel (instruction counts over its four instantiations)"
  "$OBJDUMP" --dump-sass "$B" 2>/dev/null | awk '/Function :/ { f = /fa3_hopper_forward_kernel/ } f' |
    grep -oE 'HGMMA\.[A-Z0-9x.]+|UTMALDG[.A-Z0-9]*|USETMAXREG[^ ;]*|SYNCS\.[A-Z.]+|\bLDL\b|\bSTL\b' | sort | uniq -c
fi
[ "${SKIP_CHECKS:-0}" = 1 ] && exit 0
echo "== fa3_hopper against fp64 (rel error column)"
for d in 64 128; do
  for causal in no yes; do
    for dtype in fp16 bf16; do
      timeout 120 "$B" bench --kernels naive,fa2_tc,fa3_hopper --batch 2 --heads 3 --seq 1,17,65,129,300,1000 \
        --head-dim $d --causal $causal --dtype $dtype --check-only --quiet 2>&1 | tail -n +1
    done
  done
  timeout 60 "$B" bench --kernels naive,fa3_hopper --batch 2 --heads 2 --seq 1,65,1000 --seq-kv 17,2048 --head-dim $d \
    --causal no --dtype fp16 --check-only --quiet 2>&1
done
echo "== fa2_tc, fa3_hopper on the 16k-token grid"
timeout "${PERF_BUDGET:-200}" "$B" bench --sweep perf --kernels fa2_tc,fa3_hopper --json "$OUT/fa3-perf.json" 2>&1 | tail -30
