#!/usr/bin/env bash
# The architecture check must fail where a rule is broken: a small tree with one
# include that runs back up (a -> b where b may include a) and one library that
# includes another it may not. Exit 0 when the check catches both.
set -uo pipefail
check=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/sim/src/a "$tree"/sim/src/b "$tree"/analysis/src/c "$tree"/kernels "$tree"/app
printf '# sim\n\nMay include: nothing\n' > "$tree/sim/README.md"
printf '# analysis\n\nMay include: sim\n' > "$tree/analysis/README.md"
printf '# kernels\n\nMay include: sim\n' > "$tree/kernels/README.md"
printf '# app\n\nMay include: sim, analysis, kernels\n' > "$tree/app/README.md"
printf '# a\n\nMay include: nothing\n' > "$tree/sim/src/a/README.md"
printf '# b\n\nMay include: a\n' > "$tree/sim/src/b/README.md"
printf '# c\n\nMay include: nothing\n' > "$tree/analysis/src/c/README.md"
printf '#pragma once\n' > "$tree/sim/src/b/b.hpp"
printf '#include "b/b.hpp"\n' > "$tree/sim/src/a/a.cpp"
printf '#include "flashlab/kernels/runner/runner.hpp"\n' > "$tree/analysis/src/c/c.cpp"
out=$("$check" "$tree"); rc=$?
echo "$out"
[ "$rc" = 1 ] || { echo "FAIL: the check exited $rc on a tree with broken rules"; exit 1; }
grep -q 'sim/src/a/a.cpp:1: a may not include b' <<<"$out" || { echo "FAIL: the arrow back up was not named"; exit 1; }
grep -q 'analysis may not include kernels' <<<"$out" || { echo "FAIL: the library rule was not named"; exit 1; }
echo "OK: both broken rules named"
