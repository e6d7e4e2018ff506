#!/usr/bin/env bash
# Reads what the build's compile of a Hopper rung printed (scripts/compile-log.sh)
# and fails on ptxas's note that it serialised the kernel's wgmma (C7512), on a
# failed compile, and on a log that is not there.
# usage: check-ptxas-log.sh LOG
set -euo pipefail
log=$1
if [ ! -s "$log" ]; then
  echo "FAIL: no compile log at $log (the build writes it when it compiles the file)"
  exit 1
fi
head -1 "$log"
if ! head -1 "$log" | grep -q "^compiled: .*(exit 0)$"; then
  echo "FAIL: the compile did not succeed:"; cat "$log"; exit 1
fi
if grep -q "C7512" "$log"; then
  echo "FAIL: ptxas serialised wgmma:"; grep "C7512" "$log"; exit 1
fi
echo "OK: no wgmma serialised ($(($(wc -l < "$log") - 1)) lines of compiler output)"
