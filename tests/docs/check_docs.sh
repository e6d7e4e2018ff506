#!/usr/bin/env bash
# The docs stay findable: every image under docs/images is shown by some .md file,
# every file under docs/results is named in the results index (docs/results/README.md,
# or a README.md of a folder between it and the file, by its path from that folder),
# docs/multi-gpu.md and docs/kernels.md stay under 500 lines, and every relative
# link of docs/*.md leads to a file that exists. Prints one line per problem and
# exits 1 when there is any; bash, grep, sed, awk and find only.
#   tests/docs/check_docs.sh ROOT
set -uo pipefail
root=${1:?usage: check_docs.sh ROOT}
docs=$root/docs
[ -d "$docs" ] || { echo "check_docs: no docs/ under $root"; exit 2; }
problems=0
problem() { echo "$*"; problems=$((problems + 1)); }

# Markdown text without its fenced code blocks (a link inside ``` is not a link).
prose() { awk '/^[[:space:]]*```/ { fence = !fence; next } !fence' "$1"; }

# Every .md file of the tree that can show an image (build trees and .git left out).
mapfile -t mds < <(find "$root" \( -name .git -o -name 'build*' -o -name node_modules \) -prune -o -name '*.md' -type f -print)
all_md=$(for f in "${mds[@]}"; do prose "$f"; done)

# 1. Images: each shown (or linked) by its path from docs/ or from the root.
if [ -d "$docs/images" ]; then
  while IFS= read -r img; do
    rel=${img#"$docs/"}
    grep -qF -- "$rel" <<<"$all_md" || problem "docs/$rel: no .md file shows this image"
  done < <(find "$docs/images" -type f | sort)
fi

# 2. Results: each named by the index or by a README.md of a folder above it.
if [ -d "$docs/results" ]; then
  index=$docs/results/README.md
  [ -f "$index" ] || problem "docs/results/README.md: the index of the results is missing"
  while IFS= read -r file; do
    rel=${file#"$docs/results/"}
    [ "$rel" = README.md ] && continue
    found=0
    [ -f "$index" ] && grep -qF -- "$rel" "$index" && found=1
    dir=$(dirname "$rel")
    while [ "$found" = 0 ] && [ "$dir" != . ]; do
      page=$docs/results/$dir/README.md
      if [ -f "$page" ] && [ "$page" != "$file" ] && grep -qF -- "${rel#"$dir/"}" "$page"; then found=1; fi
      dir=$(dirname "$dir")
    done
    [ "$found" = 1 ] || problem "docs/results/$rel: named by no line of docs/results/README.md (or its sub-pages)"
  done < <(find "$docs/results" -type f | sort)
fi

# 3. The two long pages stay short enough to read.
for page in multi-gpu.md kernels.md; do
  if [ -f "$docs/$page" ]; then
    n=$(wc -l < "$docs/$page")
    [ "$n" -lt 500 ] || problem "docs/$page: $n lines (500 or more)"
  else
    problem "docs/$page: missing"
  fi
done

# 4. Relative links of docs/*.md: [text](target) and ![alt](target), anchors dropped.
for md in "$docs"/*.md; do
  [ -f "$md" ] || continue
  while IFS= read -r target; do
    target=${target%%#*}
    target=${target%% *}
    [ -n "$target" ] || continue
    case $target in
      http:* | https:* | mailto:* | ftp:* | /*) continue ;;
    esac
    [ -e "$(dirname "$md")/$target" ] || problem "docs/$(basename "$md"): the link '$target' leads to no file"
  done < <(prose "$md" | grep -o '](\([^)]*\))' | sed 's/^](//; s/)$//; s/^<//; s/>$//')
done

if [ "$problems" -gt 0 ]; then
  echo "check_docs: $problems problem(s)"
  exit 1
fi
echo "check_docs: images shown, results indexed, page lengths and relative links of docs/*.md in order"
