#!/usr/bin/env bash
# A lab measured on this machine's GPU, then its report: FlashLab's rungs on
# every sweep the lab's figures draw (flashlab bench), PyTorch's eager, SDPA
# FLASH and SDPA cuDNN on the same problems in the same run
# (scripts/torch_compare.py), then flashlab report --lab over both files.
#
#   bash scripts/run-lab.sh LAB OUT          # LAB: a name of assets/labs, or "all"
#
# Writes OUT/labs-flashlab.json, OUT/labs-pytorch.json, OUT/run-lab.log and,
# per lab, OUT/report-LAB/. FLASHLAB (default build/flashlab, else
# build-device/bin/flashlab) and REPEATS (default 10) may be set.
set -uo pipefail
cd "$(dirname "$0")/.."
LAB=${1:?usage: run-lab.sh LAB OUT}
OUT=${2:?usage: run-lab.sh LAB OUT}
REPEATS=${REPEATS:-10}
FLASHLAB=${FLASHLAB:-}
if [ -z "$FLASHLAB" ]; then
  for f in build/flashlab build-device/bin/flashlab; do [ -x "$f" ] && FLASHLAB=$f && break; done
fi
[ -x "${FLASHLAB:-}" ] || { echo "run-lab.sh: no flashlab binary (set FLASHLAB)" >&2; exit 2; }
mkdir -p "$OUT"
LOG=$OUT/run-lab.log
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
parts=()
for s in "${sweeps[@]}"; do
  echo "== flashlab bench --sweep $s" >> "$LOG"
  "$FLASHLAB" bench --sweep "$s" --repeats "$REPEATS" --json "$OUT/bench-$s.json" >> "$LOG" 2>&1 || echo "!! $s failed" >> "$LOG"
  [ -s "$OUT/bench-$s.json" ] && parts+=("$OUT/bench-$s.json")
done
python3 - "$OUT/labs-flashlab.json" "${parts[@]}" <<'PY'
import json, sys
out, parts = sys.argv[1], sys.argv[2:]
docs = [json.load(open(p)) for p in parts]
json.dump({"format": "flashlab-bench/1", "meta": docs[0]["meta"] if docs else {},
           "rows": [r for d in docs for r in d["rows"]]}, open(out, "w"), indent=2)
PY
rm -f "${parts[@]}"
echo "== scripts/torch_compare.py" >> "$LOG"
python3 scripts/torch_compare.py --ours "$OUT/labs-flashlab.json" --json "$OUT/labs-pytorch.json" \
  --repeats "$REPEATS" --table "$OUT/labs-compare.txt" >> "$LOG" 2>&1 || echo "!! torch_compare.py failed" >> "$LOG"
status=0
for l in $labs; do
  echo "== flashlab report --lab $l" >> "$LOG"
  "$FLASHLAB" report --lab "$l" --results "$OUT/labs-flashlab.json" --results "$OUT/labs-pytorch.json" \
    --out "$OUT/report-$l" >> "$LOG" 2>&1 || status=1
done
exit $status
