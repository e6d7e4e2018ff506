#!/usr/bin/env bash
# The docs check must fail where the docs are broken: a small tree with an image no
# page shows, a result the index does not name, a docs/multi-gpu.md of 500 lines and
# a link to a missing file. Exit 0 when the check names all four and exits 1, and
# passes the same tree once they are mended.
set -uo pipefail
check=${1:?usage: check-fails.sh CHECK_DOCS}
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/docs/images/scenes "$tree"/docs/results/ring "$tree"/build/docs
printf '# docs\n\n![shown](images/shown.png)\n[index](results/README.md)\n[gone](missing.md#part)\n[here](#anchor)\n' > "$tree/docs/README.md"
printf '```\n![in a code block](images/scenes/unshown.png)\n```\n' > "$tree/docs/kernels.md"
: > "$tree/docs/images/shown.png"
: > "$tree/docs/images/scenes/unshown.png"
printf '# results\n\n| `ring/kept.json` | made by | read by |\n' > "$tree/docs/results/README.md"
: > "$tree/docs/results/ring/kept.json"
: > "$tree/docs/results/ring/stray.json"
printf 'See images/scenes/unshown.png\n' > "$tree/build/docs/ignored.md"   # build trees are not docs
for _ in $(seq 500); do echo line; done > "$tree/docs/multi-gpu.md"
out=$("$check" "$tree"); rc=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$rc" = 1 ] || fail "the check exited $rc on a broken tree"
grep -q 'docs/images/scenes/unshown.png: no .md file shows this image' <<<"$out" || fail "the image no page shows was not named"
grep -q 'docs/results/ring/stray.json: named by no line of docs/results/README.md' <<<"$out" || fail "the result the index does not name was not named"
grep -q 'docs/multi-gpu.md: 500 lines' <<<"$out" || fail "the page of 500 lines was not named"
grep -q "docs/README.md: the link 'missing.md' leads to no file" <<<"$out" || fail "the broken link was not named"
grep -q 'check_docs: 4 problem(s)' <<<"$out" || fail "more or fewer than the four problems were reported"
# Mended, the same tree passes (a sub-page may name a file by its path from its folder).
printf '# ring\n\n`stray.json`: named here\n![shown in a sub-page](../../images/scenes/unshown.png)\n' > "$tree/docs/results/ring/README.md"
printf '| `ring/README.md` | | |\n' >> "$tree/docs/results/README.md"
head -n 499 "$tree/docs/multi-gpu.md" > "$tree/docs/m" && mv "$tree/docs/m" "$tree/docs/multi-gpu.md"
printf '# docs\n\n![shown](images/shown.png)\n[index](results/README.md)\n[here](#anchor)\n' > "$tree/docs/README.md"
out=$("$check" "$tree"); rc=$?
[ "$rc" = 0 ] || { echo "$out"; fail "the mended tree did not pass (exit $rc)"; }
echo "OK: all four problems named, and the mended tree passes"
