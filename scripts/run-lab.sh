#!/usr/bin/env bash
# A lab measured on this machine's GPU, then its report: FlashLab's rungs on
# every sweep the lab's figures draw (flashlab bench), PyTorch's eager, SDPA
# FLASH and SDPA cuDNN on the same problems in the same run
# (scripts/torch_compare.py), then flashlab report --lab over both files.
#
#   bash scripts/run-lab.sh LAB OUT          # LAB: a name of assets/labs, or "all"
#
# Writes OUT/labs-flashlab.json, OUT/labs-pytorch.json, OUT/labs-compare.txt,
# OUT/run-lab.log and, per lab, OUT/report-LAB/. FLASHLAB (default
# build/flashlab, else build-device/bin/flashlab), REPEATS (default 10),
# BUDGET (seconds; 0: none — no sweep starts in its last 60 s, so the files are
# always merged and written) and KERNEL_FILES (your own kernels, .cu files
# separated by spaces: each runs on every sweep beside the rungs, as
# flashlab bench --kernel-file runs it) may be set. A sweep flashlab bench
# refuses (no CUDA device) stops the script, exit 2, before any report; a sweep
# with failed cases or cut short by BUDGET is said on stderr, exit 1 at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
LAB=${1:?usage: run-lab.sh LAB OUT}
OUT=${2:?usage: run-lab.sh LAB OUT}
REPEATS=${REPEATS:-10}
BUDGET=${BUDGET:-0}
FLASHLAB=${FLASHLAB:-}
if [ -z "$FLASHLAB" ]; then
  for f in build/flashlab build-device/bin/flashlab; do [ -x "$f" ] && FLASHLAB=$f && break; done
fi
[ -x "${FLASHLAB:-}" ] || { echo "run-lab.sh: no flashlab binary (set FLASHLAB)" >&2; exit 2; }
mkdir -p "$OUT"
LOG=$OUT/run-lab.log
kernel_files=()
for f in ${KERNEL_FILES:-}; do
  [ -f "$f" ] || { echo "run-lab.sh: KERNEL_FILES: $f is not a file" >&2; exit 2; }
  kernel_files+=(--kernel-file "$f")
done
if [ "$LAB" = all ]; then
  labs=$(ls assets/labs/*.json | xargs -n1 basename | sed 's/\.json$//')
else
  labs=$LAB
fi
sweeps=()
for l in $labs; do
  mapfile -t s < <("$FLASHLAB" report --lab "$l" --print-sweeps) || exit 2
  for x in "${s[@]}"; do [[ " ${sweeps[*]} " == *" $x "* ]] || sweeps+=("$x"); done
done
# Sweep by sweep: FlashLab's rungs, then PyTorch on the same problems, so that
# a run cut short still holds both sides of every sweep it reached.
ours=() theirs=()
status=0
for s in "${sweeps[@]}"; do
  if [ "$BUDGET" -gt 0 ] && [ $((BUDGET - SECONDS)) -le 60 ]; then
    echo "!! $s not run: the budget of ${BUDGET}s is spent" >> "$LOG"
    continue
  fi
  echo "== flashlab bench --sweep $s" >> "$LOG"
  limit=$([ "$BUDGET" -gt 0 ] && echo $((BUDGET - SECONDS - 30)) || echo 0)  # 0: timeout waits forever
  timeout "$limit" "$FLASHLAB" bench --sweep "$s" --repeats "$REPEATS" "${kernel_files[@]}" --json "$OUT/bench-$s.json" >> "$LOG" 2>&1
  rc=$?
  if [ "$rc" -eq 2 ]; then
    # Refused before measuring (no CUDA device, a bad kernel file): every sweep
    # would be, so stop here rather than write a report of nothing measured.
    why=$(grep 'flashlab: error:' "$LOG" | tail -n 1)
    echo "run-lab.sh: flashlab bench --sweep $s measured nothing: ${why:-see $LOG}" >&2
    echo "run-lab.sh: stopped before the report (log: $LOG)" >&2
    exit 2
  elif [ "$rc" -ne 0 ]; then
    echo "!! $s failed or was cut short" >> "$LOG"
    msg=$([ "$rc" -eq 124 ] && echo "cut short by BUDGET" || echo "some cases failed")
    echo "run-lab.sh: flashlab bench --sweep $s: $msg (see $LOG)" >&2
    status=1
  fi
  [ -s "$OUT/bench-$s.json" ] || continue
  ours+=("$OUT/bench-$s.json")
  echo "== scripts/torch_compare.py on $s" >> "$LOG"
  python3 scripts/torch_compare.py --ours "$OUT/bench-$s.json" --json "$OUT/torch-$s.json" --repeats "$REPEATS" \
    >> "$OUT/labs-compare.txt" 2>> "$LOG" || {
    echo "!! torch_compare.py on $s failed" >> "$LOG"
    echo "run-lab.sh: scripts/torch_compare.py on $s failed (see $LOG)" >&2
    status=1
  }
  [ -s "$OUT/torch-$s.json" ] && theirs+=("$OUT/torch-$s.json")
done
if [ ${#ours[@]} -eq 0 ]; then
  echo "run-lab.sh: no sweep was measured (see $LOG): no report written" >&2
  exit 2
fi
merge() {
  python3 - "$@" <<'PY'
import json, sys
out, parts = sys.argv[1], sys.argv[2:]
docs = [json.load(open(p)) for p in parts]
json.dump({"format": "flashlab-bench/1", "meta": docs[0]["meta"] if docs else {},
           "rows": [r for d in docs for r in d["rows"]]}, open(out, "w"), indent=2)
PY
}
merge "$OUT/labs-flashlab.json" "${ours[@]}"
merge "$OUT/labs-pytorch.json" "${theirs[@]}"
rm -f "${ours[@]}" "${theirs[@]}"
for l in $labs; do
  echo "== flashlab report --lab $l" >> "$LOG"
  "$FLASHLAB" report --lab "$l" --results "$OUT/labs-flashlab.json" --results "$OUT/labs-pytorch.json" \
    --out "$OUT/report-$l" >> "$LOG" 2>&1 || { status=1; echo "run-lab.sh: flashlab report --lab $l failed (see $LOG)" >&2; }
done
exit $status
