#!/usr/bin/env bash
# The ptxas check can fail: it refuses a log with ptxas's C7512 note, the log of
# a failed compile and a log that is not there, and passes a clean one.
# usage: check-ptxas-log-fails.sh CHECK_SCRIPT
set -uo pipefail
check=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'compiled: x.cu.o (exit 0)\nptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized\n' > "$d/serialised"
printf 'compiled: x.cu.o (exit 1)\nerror: something\n' > "$d/failed"
printf 'compiled: x.cu.o (exit 0)\n' > "$d/clean"
for bad in serialised failed missing; do
  if "$check" "$d/$bad" > /dev/null; then echo "FAIL: the check passed the $bad log"; exit 1; fi
  echo "refused as expected: the $bad log"
done
"$check" "$d/clean" > /dev/null || { echo "FAIL: the check refused a clean log"; exit 1; }
echo "OK"
