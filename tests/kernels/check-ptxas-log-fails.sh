#!/usr/bin/env bash
# The ptxas check can fail: it refuses a log with a note that ptxas serialised
# wgmma (registers short, C7512; a wait on a divergent path, C7518), a log with
# a warpgroup.wait it inserted (C7517), the log of a failed compile and a log
# that is not there, and passes a clean one; a spill only where it is told to
# refuse one.
# usage: check-ptxas-log-fails.sh CHECK_SCRIPT
set -uo pipefail
check=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'compiled: x.cu.o (exit 0)\nptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized\n' > "$d/serialised"
printf 'compiled: x.cu.o (exit 0)\nptxas info    : (C7518) Potential Performance Loss: wgmma.mma_async instructions are serialized due to program dependence on compiler-inserted WG.DP in divergent path\n' > "$d/divergent"
printf "compiled: x.cu.o (exit 0)\nptxas info    : (C7517) warpgroup.wait is injected in around line 49602 by compiler to allow use of registers defined by GMMA in function 'k'\n" > "$d/injected"
printf 'compiled: x.cu.o (exit 1)\nerror: something\n' > "$d/failed"
printf 'compiled: x.cu.o (exit 0)\n' > "$d/clean"
for bad in serialised divergent injected failed missing; do
  if "$check" "$d/$bad" > /dev/null; then echo "FAIL: the check passed the $bad log"; exit 1; fi
  echo "refused as expected: the $bad log"
done
"$check" "$d/clean" > /dev/null || { echo "FAIL: the check refused a clean log"; exit 1; }
printf "compiled: x.cu.o (exit 0)\nptxas warning : Registers are spilled to local memory in function 'k', 16 bytes spill stores, 24 bytes spill loads\n" > "$d/spilled"
"$check" "$d/spilled" > /dev/null || { echo "FAIL: the check refused a spill it was not told to refuse"; exit 1; }
if "$check" "$d/spilled" --no-spills > /dev/null; then echo "FAIL: the check passed a spill with --no-spills"; exit 1; fi
echo "refused as expected: the spilled log with --no-spills"
echo "OK"
