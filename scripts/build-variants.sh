#!/usr/bin/env bash
# Builds, HERE, the `flashlab` binaries of an A/B for the GPU machine: one per
# git commit (a branch, a tag, a hash), each optionally with the Hopper
# configuration table (sim::kHopperConfigs) replaced by the rows of a file, in a
# worktree beside this checkout (so this one is left alone). Each lands stripped
# and xz-compressed as build-variants/flashlab-NAME.xz, where
# scripts/fa3_hopper_ab.sh takes them (device tool: carry ["build-variants"]).
#
#   bash scripts/build-variants.sh base=main chain=next/chain c4k=next/chain:rows-4k.txt
#
# A table file holds the lines between `kHopperConfigs[] = {` and `};`. The
# build is the GPU machine's (Release, sm_90a, no GUI); what ptxas said of the
# Hopper rungs is printed per build: its notes (serialised wgmma, inserted waits)
# and how many of their kernels spill registers (the backward's d = 128 ones do).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WT=${VARIANT_WORKTREE:-$ROOT/../wt-variants}
JOBS=${JOBS:-2}
# shellcheck source=scripts/device-configure.sh
. "$ROOT/scripts/device-configure.sh"
[ $# -gt 0 ] || { echo "usage: build-variants.sh NAME=REF[:TABLE_FILE] ..." >&2; exit 2; }
[ -d "$WT" ] || git -C "$ROOT" worktree add --detach "$WT" HEAD >/dev/null || exit 2
mkdir -p "$ROOT/build-variants"
status=0
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}; ref=${rest%%:*}; table=""
  [ "$rest" != "$ref" ] && table=$(realpath "${rest#*:}")
  if [ -z "$name" ] || [ "$name" = "$spec" ]; then echo "$spec: not NAME=REF[:TABLE_FILE]" >&2; status=2; continue; fi
  (cd "$WT" && git checkout -q -- . && git checkout -q --detach "$ref") || { echo "$name: no commit $ref" >&2; status=2; continue; }
  if [ -n "$table" ]; then
    python3 - "$WT/sim/include/flashlab/sim/hopper/hopper_pipeline.hpp" "$table" <<'PY' || { status=2; continue; }
import sys
path, rows = sys.argv[1:3]
s = open(path).read()
head = "inline constexpr HopperConfig kHopperConfigs[] = {\n"
a = s.index(head) + len(head)
b = s.index("};", a)
open(path, "w").write(s[:a] + open(rows).read() + s[b:])
PY
  fi
  device_configure "$WT" "$WT/build-device-cmake" > /dev/null 2>&1
  log=$ROOT/build-variants/build-$name.log
  t0=$(date +%s)
  if cmake --build "$WT/build-device-cmake" -j"$JOBS" --target flashlab > "$log" 2>&1; then
    strip -o "$ROOT/build-variants/flashlab-$name" "$WT/build-device-cmake/flashlab"
    xz -T"$JOBS" -6 -f "$ROOT/build-variants/flashlab-$name"
    notes=$(cat "$WT"/build-device-cmake/kernels/compile-logs/*.log 2>/dev/null | grep -cE "C75[0-9][0-9]")
    spills=$(cat "$WT"/build-device-cmake/kernels/compile-logs/*.log 2>/dev/null | grep -c "Registers are spilled")
    echo "$name: $(cd "$WT" && git rev-parse --short HEAD)${table:+ with the rows of $table}, $(($(date +%s) - t0)) s," \
         "$(du -h "$ROOT/build-variants/flashlab-$name.xz" | cut -f1), ptxas notes: $notes, kernels spilling: $spills"
  else
    echo "$name: the build failed ($log)"; status=1
  fi
  (cd "$WT" && git checkout -q -- .)
done
exit $status
