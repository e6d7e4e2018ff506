#!/usr/bin/env bash
# A compiler launcher that keeps what the compile printed: runs the rest of its
# command line (the compiler, or ccache and the compiler), prints its output as
# before, and writes it to DIR/OBJECT.log under a first line naming the object
# and the exit code, which is the compile's. The build uses it for the Hopper
# rungs, whose ptxas notes (C7510–C7520: wgmma serialised, waits inserted) a
# test reads.
# usage: compile-log.sh DIR COMMAND...
set -uo pipefail
dir=$1
shift
out=""
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && out=$a
  prev=$a
done
mkdir -p "$dir"
tmp=$(mktemp)
"$@" > "$tmp" 2>&1
rc=$?
cat "$tmp" >&2
{ echo "compiled: ${out:-?} (exit $rc)"; cat "$tmp"; } > "$dir/$(basename "${out:-unnamed}").log"
rm -f "$tmp"
exit $rc
