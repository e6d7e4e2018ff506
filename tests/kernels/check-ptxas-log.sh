#!/usr/bin/env bash
# Reads what the build's compile of a Hopper rung printed (scripts/compile-log.sh)
# and fails on every ptxas note that it serialised the kernel's wgmma (C7510 to
# C7520: registers run short, accumulators defined or read outside wgmma, a
# barrier or wait it had to insert on a divergent path) or inserted a
# warpgroup.arrive / warpgroup.wait of its own (C7517, C7519), on a failed
# compile, and on a log that is not there; with --no-spills also on a kernel
# that spills registers (ptxas -warn-spills; the backward's d = 128 kernels do).
# usage: check-ptxas-log.sh LOG [--no-spills]
set -euo pipefail
log=$1
no_spills=${2:-}
if [ ! -s "$log" ]; then
  echo "FAIL: no compile log at $log (the build writes it when it compiles the file)"
  exit 1
fi
head -1 "$log"
if ! head -1 "$log" | grep -q "^compiled: .*(exit 0)$"; then
  echo "FAIL: the compile did not succeed:"; cat "$log"; exit 1
fi
pattern='wgmma.mma_async instructions are serialized|is injected .* by compiler|\(C75(1[0-9]|20)\)'
if grep -Eq "$pattern" "$log"; then
  echo "FAIL: ptxas serialised wgmma or inserted its own waits:"; grep -E "$pattern" "$log" | cut -c1-200; exit 1
fi
spills=$(grep -c "Registers are spilled" "$log" || true)
if [ "$no_spills" = --no-spills ] && [ "$spills" -gt 0 ]; then
  echo "FAIL: ptxas spilled registers:"; grep "Registers are spilled" "$log" | cut -c1-200; exit 1
fi
echo "OK: no wgmma serialised, no wait inserted, $spills kernels spilling ($(($(wc -l < "$log") - 1)) lines of compiler output)"
