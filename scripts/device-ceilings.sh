#!/usr/bin/env bash
# The roofline analyzer on the GPU machine: measures the ceilings
# (full and --quick, timed), runs the micro-benchmarks' GPU tests and the SASS
# check, compares the profile with its datasheet and draws the charts.
#
# HERE (the machine with Catch2, nlohmann, CLI11), once:
#   bash scripts/device-ceilings.sh --prepare     (= scripts/device-build.sh)
#     builds `flashlab` and the GPU tests (Release, sm_90, static cudart, no GUI,
#     no cairo) and stages them, stripped, in build-device/.
# THERE, from the repo root, with $OUT set (device tool, carry ["build-device"]):
#   bash scripts/device-ceilings.sh
#
# Files back in $OUT (8 at most): measured-profile.json, ceilings.log,
# gpu-tests.log, sass.log, bench.json, roofline-hier.svg, bandwidth-sweep.svg,
# summary.txt (printed last). Each stage has a time budget, all together well
# under 8 minutes; a stage over budget is killed and reported as TIMEOUT.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STAGE=$ROOT/build-device

if [ "${1:-}" = "--prepare" ]; then
  # One build for every device binary (flashlab without cairo, the kernels' and
  # the ceilings' GPU tests): scripts/device-build.sh.
  exec bash "$ROOT/scripts/device-build.sh"
fi

OUT=${OUT:-$ROOT/device-out}
mkdir -p "$OUT"
BIN=$STAGE/bin
export FLASHLAB_ASSETS=$ROOT/assets
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
FLASHLAB_COMMIT=$(tr -d '\n' < "$STAGE/COMMIT" 2>/dev/null || echo unknown)
export FLASHLAB_COMMIT
LOG=$OUT/ceilings.log
SUMMARY=$OUT/summary.txt
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT
: > "$LOG"
: > "$SUMMARY"

if [ ! -x "$BIN/flashlab" ]; then
  echo "device-ceilings: $BIN/flashlab is missing: run 'bash scripts/device-ceilings.sh --prepare' here first and carry build-device" >&2
  exit 2
fi

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
result() { printf '%-10s %-8s %7ss  %s\n' "$1" "$2" "$3" "$4" >> "$RESULTS"; }
status_of() { case $1 in 0) echo ok ;; 124|137) echo TIMEOUT ;; 77) echo SKIPPED ;; *) echo "FAILED($1)" ;; esac; }

# ---- the machine ------------------------------------------------------------------
{
  echo "== device-ceilings $(date -u +%Y-%m-%dT%H:%M:%SZ), flashlab commit $FLASHLAB_COMMIT"
  nvidia-smi 2>&1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
    --format=csv 2>&1
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo 'not in PATH')"
  echo "cublas: $(ldd "$BIN/flashlab" | grep -o 'libcublas[^ ]* => [^ ]*' | head -1)"
} >> "$LOG" 2>&1
head -1 "$LOG"

# ---- flashlab ceilings, full then quick (goals: under 2 min and under 20 s) ----------
run_ceilings() {  # NAME LIMIT_S BUDGET_S PROFILE [FLAGS]
  local name=$1 limit=$2 budget=$3 profile=$4
  shift 4
  echo "== flashlab ceilings $* --out $profile" >> "$LOG"
  local t0 rc t
  t0=$(now)
  timeout "$budget" "$BIN/flashlab" ceilings "$@" --out "$profile" >> "$LOG" 2>&1
  rc=$?
  t=$(secs "$t0" "$(now)")
  echo "== wall time $t s (limit ${limit} s), exit $rc" >> "$LOG"
  local verdict="exit $rc (ceilings.log)"
  [ "$rc" -eq 0 ] && verdict="wall $t s, limit $limit s: $(awk -v t="$t" -v l="$limit" 'BEGIN { print (t < l) ? "within" : "OVER" }')"
  result "$name" "$(status_of $rc)" "$t" "$verdict"
}
run_ceilings full 120 240 "$OUT/measured-profile.json"
run_ceilings quick 20 90 /tmp/measured-profile-quick.json --quick

# ---- the profile beside its datasheet ------------------------------------------------
DATASHEET=$(grep -o 'datasheet (\([A-Za-z0-9._-]*\))' "$LOG" | head -1 | sed 's/datasheet (\(.*\))/\1/')
if [ -f "$OUT/measured-profile.json" ] && [ -n "$DATASHEET" ]; then
  echo "== flashlab hw compare measured-profile.json $DATASHEET" >> "$LOG"
  "$BIN/flashlab" hw compare "$OUT/measured-profile.json" "$DATASHEET" >> "$LOG" 2>&1
  result compare "$(status_of $?)" 0 "vs $DATASHEET (ceilings.log)"
else
  result compare SKIPPED 0 "no profile or no matching datasheet preset"
fi

# ---- GPU tests and SASS ----------------------------------------------------------------
t0=$(now)
timeout 300 "$BIN/flashlab_ceilings_gpu_tests" --durations yes > "$OUT/gpu-tests.log" 2>&1
rc=$?
result tests "$(status_of $rc)" "$(secs "$t0" "$(now)")" \
  "$(grep -E '^(All tests passed|test cases:|SKIPPED)' "$OUT/gpu-tests.log" | tail -1) (gpu-tests.log)"
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
bash kernels/ceilings/check_sass.sh "$CUOBJDUMP" "$BIN/flashlab" > "$OUT/sass.log" 2>&1
rc=$?
result sass "$(status_of $rc)" 0 "$(tail -1 "$OUT/sass.log") (sass.log)"

# ---- kernel runs on the hierarchical roofline, and the sweep -----------------------------
t0=$(now)
KERNELS=$("$BIN/flashlab" bench --list 2>/dev/null | awk 'NR > 2 { print $1 }' | grep -E '^(naive|fa1|fa2|fa2_tc)$' | paste -sd, -)
if [ -n "$KERNELS" ]; then
  timeout 150 "$BIN/flashlab" bench --kernels "$KERNELS" --batch 4 --heads 16 --seq 1024,4096 --head-dim 64 \
    --dtype fp16 --check off --json "$OUT/bench.json" >> "$LOG" 2>&1
  rc=$?
else
  rc=1
  echo "== no kernels listed by flashlab bench --list" >> "$LOG"
fi
result bench "$(status_of $rc)" "$(secs "$t0" "$(now)")" "kernels ${KERNELS:-none} (bench.json)"
if [ -f "$OUT/measured-profile.json" ]; then
  RES=()
  [ -s "$OUT/bench.json" ] && RES=(--results "$OUT/bench.json")
  "$BIN/flashlab" ceilings chart --hw "$OUT/measured-profile.json" "${RES[@]}" --out "$OUT/roofline-hier.svg" >> "$LOG" 2>&1
  result chart "$(status_of $?)" 0 "roofline-hier.svg ${RES[*]:+with the runs of bench.json}"
  "$BIN/flashlab" ceilings chart --hw "$OUT/measured-profile.json" --chart bandwidth-sweep --out "$OUT/bandwidth-sweep.svg" >> "$LOG" 2>&1
  result chart "$(status_of $?)" 0 "bandwidth-sweep.svg"
fi

# ---- summary, last --------------------------------------------------------------------------
{
  echo "== device-ceilings summary, commit $FLASHLAB_COMMIT, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  cat "$RESULTS"
  echo
  if [ -f "$OUT/measured-profile.json" ]; then
    echo "== the measured profile (full run): figures and targets"
    "$BIN/flashlab" ceilings report "$OUT/measured-profile.json" > /tmp/ceilings-report.txt 2>&1
    awk '/^working set/ { exit } { print }' /tmp/ceilings-report.txt
    grep -E '^note: ' /tmp/ceilings-report.txt
  fi
} >> "$SUMMARY"
cat "$SUMMARY"
