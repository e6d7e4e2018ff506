#!/usr/bin/env bash
# Runs ON the GPU machine, from the repo root, with $OUT set (what is written
# there comes back: at most 8 files). Binaries come from scripts/device-build.sh
# (carried as build-device/). Stages, in the order given:
#
#   info      GPU, driver, clocks, toolkit, torch (into summary.txt)
#   tests     the GPU test binary (Catch2)                       -> gpu-tests.log
#   sanitize  compute-sanitizer memcheck + racecheck (SANITIZE_TOOLS),
#             every kernel (SANITIZE_KERNELS) at three sizes     -> sanitize.log
#   bench     the 16k-token performance grid (sweep "perf"), timed
#             and with a DRAM counter pass per case, and PyTorch
#             eager / SDPA FLASH / SDPA cuDNN on the same
#             problems, one merged table (BENCH_KERNELS: a comma list
#             of rungs instead of every forward rung; BENCH_ROUNDS=3:
#             three alternating rounds of ours and PyTorch, each row
#             the median round's, scripts/bench_rounds.py;
#             BENCH_TORCH_KERNELS: which of PyTorch's, default all) -> bench.txt bench.json torch.json compare.txt
#   bench-bwd the same grid for the backward rungs (--pass bwd; each
#             case's forward rung untimed), and PyTorch's backward
#             (eager autograd, SDPA FLASH, SDPA cuDNN; BENCH_BWD_KERNELS:
#             the rungs)                                         -> bench-bwd.txt bench-bwd.json torch-bwd.json compare-bwd.txt
#   bwd-check the backward rungs called directly (flashlab_bwd_check):
#             every rung and fa2_tc_bwd's alternative
#             configurations on the grid, against fp64 first    -> bwd-check.txt
#   labs      every lab of assets/labs (scripts/run-lab.sh): the sweeps
#             their figures draw, PyTorch on the same problems in
#             the same run, each lab's report     -> labs-flashlab.json labs-pytorch.json labs.txt run-lab.log
#   validate  the L2 model against the counters: every rung, forward and
#             backward (--pass fwd+bwd), on the sweep
#             "validate" with a CUPTI counter pass per case      -> validate.txt validate.json
#   validate-bytes the byte model against the counters everywhere it
#             claims to hold, in one stage of at most 7 minutes: every
#             rung of both passes with grouped heads (H 32 over H_kv 8
#             and 4) and plain, fp16 and bf16, causal and not, at the
#             headline N 4096 and off the tile grid (N 3000, 5000); the
#             tensor-core rungs at N 128K; fa2_bwd's two-CTAs-per-SM
#             tiles at B 1, H 8, N 128K, d 64. One JSON of every row, the
#             table of predicted against measured DRAM bytes (flashlab
#             bench --results), the headline problem's comparison
#             (flashlab compare --results) and a line per point
#             (VALIDATE_BYTES_BUDGET)                          -> validate-bytes.txt validate-bytes.json
#   ncu       CUPTI's DRAM bytes beside Nsight Compute's for three
#             kernels on one problem                              -> ncu.txt
#   ring-tests the ring over NCCL between this machine's GPUs (skipped
#             with fewer than 2)                                 -> ring-tests.log
#   ring-sanitize compute-sanitizer memcheck + racecheck on a small
#             ring of virtual GPUs (one device)                  -> ring-sanitize.log
#   ring-bench the ring sweeps named after the seed project's models
#             (RING_SWEEPS), on RING_GPUS GPUs (default: all) with
#             each problem's one-GPU run (RING_FLAGS: more flags) -> ring.txt ring.json
#   rung-timing the rungs' launch model's sweep "rung-timing" on GPU 0
#             (RUNG_KERNELS: which of its rungs; default all) and, when
#             RUNG_POWER=1, the one-GPU power-cap sweep; then `flashlab
#             ceilings rungs` fitted to them with the committed runs
#             of the rungs not measured again (RUNG_FIT_RESULTS,
#             RUNG_FIT_POWER: more files)  -> rung-timing.{txt,json} power-cap.{txt,json} rung-fit.txt rungs.json
#   ring-virtual the ring on 2 virtual GPUs of one device (device copies
#             for links: the timeline and the arithmetic, not a link) -> ring-virtual.txt ring-virtual.json
#   ranks     the ring as a process per GPU: the same problems in one
#             process, with torchrun and with scripts/launch-ranks.sh
#             (RANKS_FLAGS), the rows side by side; then a missing
#             variable, an unreachable rank 0 and a rank that never
#             comes, each timed                                  -> ranks.txt ranks.json
#   links     the links between this machine's GPUs (flashlab links:
#             NCCL send/recv and the copy engines, every pair, 8 B
#             to 1 GiB), as a table, CSV and a measured link preset -> links.txt links.csv links-preset.json
#   all       info tests sanitize bench   (labs: a call of its own; 7 files)
#
#   bash scripts/device-run.sh all
#   bash scripts/device-run.sh tests            # or any list of stages
#
# Each stage has a time budget (seconds; override by environment) so that one
# call stays under the device's 10-minute limit; a stage over budget is killed
# and reported as TIMEOUT. summary.txt is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
mkdir -p "$OUT"
BIN=$ROOT/build-device/bin
bash "$ROOT/scripts/device-unpack.sh"
TESTS_BUDGET=${TESTS_BUDGET:-240}
SANITIZE_BUDGET=${SANITIZE_BUDGET:-300}
BENCH_BUDGET=${BENCH_BUDGET:-260}
BENCH_BWD_BUDGET=${BENCH_BWD_BUDGET:-240}
BENCH_ROUNDS=${BENCH_ROUNDS:-1}  # bench, bench-bwd: alternating rounds of ours and PyTorch (scripts/bench_rounds.py)
case $BENCH_ROUNDS in
  '' | *[!0-9]* | 0) echo "device-run: BENCH_ROUNDS must be a whole number of rounds, at least 1; got '$BENCH_ROUNDS'" >&2
                     exit 2 ;;
esac
BWD_CHECK_BUDGET=${BWD_CHECK_BUDGET:-120}
LABS_BUDGET=${LABS_BUDGET:-540}
VALIDATE_BUDGET=${VALIDATE_BUDGET:-330}
VALIDATE_BYTES_BUDGET=${VALIDATE_BYTES_BUDGET:-420}
NCU_BUDGET=${NCU_BUDGET:-120}
RING_TESTS_BUDGET=${RING_TESTS_BUDGET:-240}
RING_SANITIZE_BUDGET=${RING_SANITIZE_BUDGET:-200}
RING_BENCH_BUDGET=${RING_BENCH_BUDGET:-420}
RUNG_TIMING_BUDGET=${RUNG_TIMING_BUDGET:-240}
RANKS_BUDGET=${RANKS_BUDGET:-420}
LINKS_BUDGET=${LINKS_BUDGET:-120}

# NVLink multicast stays off for everything started here (the ring itself sets
# these too): a program that creates multicast objects can take a shared
# host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

export FLASHLAB_ASSETS=$ROOT/assets
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
FLASHLAB_COMMIT=$(tr -d '\n' < "$ROOT/build-device/COMMIT" 2>/dev/null || echo unknown)
export FLASHLAB_COMMIT
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
SUMMARY=$OUT/summary.txt
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT

if [ ! -x "$BIN/flashlab" ]; then
  echo "device-run: $BIN/flashlab is missing: run scripts/device-build.sh here first and carry build-device" >&2
  exit 2
fi

# result STAGE STATUS SECONDS DETAIL
result() { printf '%-9s %-8s %5ss  %s\n' "$1" "$2" "$3" "$4" >> "$RESULTS"; }

# The result of a stage whose command exited RC, timed from T0: ok with
# OK_DETAIL; TIMEOUT when `timeout` stopped it at BUDGET seconds (LOG: the file
# it wrote); SKIPPED with SKIP_DETAIL when it exited 77 and the stage has one;
# FAILED with FAIL_DETAIL otherwise.
# stage_result STAGE RC T0 BUDGET LOG OK_DETAIL FAIL_DETAIL [SKIP_DETAIL]
stage_result() {
  local secs=$((SECONDS - $3))
  if [ "$2" -eq 0 ]; then
    result "$1" ok "$secs" "$6"
  elif [ "$2" -eq 124 ]; then
    result "$1" TIMEOUT "$secs" "over ${4}s ($5)"
  elif [ "$2" -eq 77 ] && [ $# -ge 8 ]; then
    result "$1" SKIPPED "$secs" "$8"
  else
    result "$1" FAILED "$secs" "$7"
  fi
}

stage_info() {
  {
    echo "== device-run $(date -u +%Y-%m-%dT%H:%M:%SZ), flashlab commit $FLASHLAB_COMMIT"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu \
      --format=csv 2>&1 | sed 's/^/   /'
    echo "   nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo 'not in PATH')"
    echo "   torch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
    echo "   cublas: $(ldd "$BIN/flashlab" | grep -o 'libcublas[^ ]* => [^ ]*' | head -1)"
    echo "   sanitizer: $SANITIZER"
    "$BIN/flashlab" bench --list 2>&1 | sed 's/^/   /'
  } >> "$SUMMARY"
  result info ok 0 "summary.txt"
}

stage_tests() {
  local t0=$SECONDS rc
  timeout "$TESTS_BUDGET" "$BIN/flashlab_kernels_gpu_tests" --durations yes > "$OUT/gpu-tests.log" 2>&1
  rc=$?
  local line
  line=$(grep -E "^(All tests passed|test cases:)" "$OUT/gpu-tests.log" | tail -1)
  stage_result tests $rc $t0 "$TESTS_BUDGET" gpu-tests.log "$line (gpu-tests.log)" "$line rc=$rc (gpu-tests.log)" \
    "$(head -1 "$OUT/gpu-tests.log")"
}

stage_sanitize() {
  local t0=$SECONDS log=$OUT/sanitize.log clean=0 dirty=0 skipped=0 details=""
  : > "$log"
  # SANITIZE_KERNELS: a list of ids (default every kernel the build has, backward rungs included).
  local ids
  ids=${SANITIZE_KERNELS:-$("$BIN/flashlab" bench --list | awk 'NR > 2 && $NF == "yes" { print $1 }')}
  # SANITIZE_TOOLS: compute-sanitizer tools (default memcheck and racecheck; synccheck too for
  # kernels with named barriers or mbarriers).
  local tools=${SANITIZE_TOOLS:-"memcheck racecheck"}
  # d = 128 both masks: the Hopper backward compiles a kernel per mask there (80 × 128 unmasked).
  # The third: more tiles than SMs, so that a persistent block walks several tiles (under
  # the mask too, in sections of heads), and at N 900 a last row block whose last
  # warpgroup has no row below N.
  local shapes=("--batch 1 --heads 2 --seq 65 --head-dim 64 --causal no"
                "--batch 2 --heads 2 --seq 300 --head-dim 128 --causal both"
                "--batch 4 --heads 9 --seq 900 --head-dim 64,128 --causal both")
  for k in $ids; do
    for shape in "${shapes[@]}"; do
      for tool in $tools; do
        if [ $((SECONDS - t0)) -ge "$SANITIZE_BUDGET" ]; then
          skipped=$((skipped + 1))
          continue
        fi
        local extra=""
        [ "$tool" = memcheck ] && extra="--leak-check full"
        echo "=== $tool $k $shape" >> "$log"
        # shellcheck disable=SC2086
        timeout 150 "$SANITIZER" --tool "$tool" $extra --error-exitcode 99 \
          "$BIN/flashlab" bench --kernels "$k" $shape --dtype fp16 --check-only --quiet >> "$log" 2>&1
        local rc=$?
        echo "=== rc $rc" >> "$log"
        if [ $rc -eq 0 ]; then
          clean=$((clean + 1))
        else
          dirty=$((dirty + 1))
          [ $dirty -le 6 ] && details+=" $k/$tool/rc=$rc"
        fi
      done
    done
  done
  local status=ok
  [ $dirty -gt 0 ] && status=ERRORS
  [ $skipped -gt 0 ] && [ $dirty -eq 0 ] && status=PARTIAL
  result sanitize "$status" $((SECONDS - t0)) "$clean clean, $dirty with errors,$details $skipped not run (budget) (sanitize.log)"
}

stage_validate() {
  local t0=$SECONDS rc
  timeout "$VALIDATE_BUDGET" "$BIN/flashlab" bench --sweep validate --pass fwd+bwd --counters --check-only \
    --json "$OUT/validate.json" > "$OUT/validate.txt" 2>&1
  rc=$?
  local line
  line=$(grep -E "median \|error\|" "$OUT/validate.txt" | tr '\n' ';')
  stage_result validate $rc $t0 "$VALIDATE_BUDGET" validate.txt "$line (validate.txt)" "rc=$rc (validate.txt)"
}

# The grids of validate-bytes, in the order they run: NAME|flashlab bench flags.
# Each is a product of its axes (a sweep is one grid); the batch keeps every
# point in the tens of MB of DRAM traffic or more, far above what a launch
# and the counter pass's flush move. --mem-limit refuses a point that would
# not fit (the naive rungs' S and P) as a skipped row instead of an OOM. A
# grid writes its rows when it ends, so one stopped by the budget loses them:
# the grids are small and the most wanted first.
VALIDATE_BYTES_GRIDS=(
  "headline-bf16|--pass fwd+bwd --batch 2 --heads 32 --kv-heads 32,8,4 --seq 4096 --head-dim 128 --dtype bf16 --causal both"
  "headline-fp16|--pass fwd+bwd --batch 2 --heads 32 --kv-heads 32,8,4 --seq 4096 --head-dim 128 --dtype fp16 --causal both"
  "off-grid|--pass fwd+bwd --batch 2 --heads 32 --kv-heads 32,8 --seq 3000,5000 --head-dim 64 --dtype bf16 --causal both"
  "long|--pass fwd+bwd --kernels fa2_tc,fa3_hopper,fa2_tc_bwd,fa3_hopper_bwd --batch 1 --heads 8 --kv-heads 8,2 --seq 131072 --head-dim 64,128 --dtype bf16 --causal no"
  "two-ctas|--pass bwd --kernels fa2_bwd --batch 1 --heads 8 --seq 131072 --head-dim 64 --dtype fp16 --causal no --br 64 --bc 64"
)

stage_validate_bytes() {
  local t0=$SECONDS log=$OUT/validate-bytes.txt json=$OUT/validate-bytes.json parts failed=0
  parts=$(mktemp -d)
  : > "$log"
  local k=0 g name flags left rc
  for g in "${VALIDATE_BYTES_GRIDS[@]}"; do
    k=$((k + 1))
    name=${g%%|*}
    flags=${g#*|}
    left=$((VALIDATE_BYTES_BUDGET - (SECONDS - t0)))
    if [ $left -le 20 ]; then
      echo "== $name: not run (budget)" >> "$log"
      failed=1
      continue
    fi
    echo "== $name: flashlab bench $flags --counters --check-only --mem-limit 120GiB" >> "$log"
    # shellcheck disable=SC2086  # flags: one word per flag
    timeout "$left" "$BIN/flashlab" bench $flags --counters --check-only --mem-limit 120GiB \
      --json "$parts/$k-$name.json" >> "$log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && echo "== $name: over the stage's budget (${VALIDATE_BYTES_BUDGET}s), stopped" >> "$log"
    [ $rc -ne 0 ] && failed=1
  done
  # One file of every row (the runs share the machine and the build).
  python3 - "$json" "$parts"/*.json >> "$log" 2>&1 <<'PY'
import json, sys
out, files = sys.argv[1], [f for f in sys.argv[2:] if not f.endswith("*.json")]
merged = None
for f in files:
    d = json.load(open(f))
    if merged is None:
        merged = d
    else:
        merged["rows"].extend(d["rows"])
if merged is None:
    sys.exit("validate-bytes: no grid wrote results")
json.dump(merged, open(out, "w"), indent=1)
print("== %d rows from %d grid(s) -> %s" % (len(merged["rows"]), len(files), out))
PY
  rm -rf "$parts"
  if [ ! -s "$json" ]; then
    result validate-bytes FAILED $((SECONDS - t0)) "no results (validate-bytes.txt)"
    return
  fi
  {
    echo "== flashlab bench --results validate-bytes.json (every point, today's model)"
    "$BIN/flashlab" bench --results "$json"
    echo "== flashlab compare --results validate-bytes.json (the headline problem without groups)"
    "$BIN/flashlab" compare --hw H200-SXM-141GB --algos standard,fa1,fa2 --pass fwd+bwd -b 2 --heads 32 -n 4096 -d 128 \
      --dtype bf16 --csv "${TMPDIR:-/tmp}/validate-bytes-compare.csv" --results "$json"
    echo "== per point: DRAM read + write, predicted (the run's model) against measured (CUPTI)"
    "$BIN/flashlab" bench --results "$json" --per-point
  } >> "$log" 2>&1
  local line
  line=$(grep -E "median \|error\|" "$log" | tr '\n' ';')
  if [ $failed -eq 0 ]; then
    result validate-bytes ok $((SECONDS - t0)) "$line (validate-bytes.txt)"
  else
    result validate-bytes FAILED $((SECONDS - t0)) "a grid failed or was not run; $line (validate-bytes.txt)"
  fi
}

stage_ncu() {
  # NCU_SHAPE: the problem (flashlab bench flags). NCU_FLAGS: extra ncu flags
  # (e.g. --cache-control none: no flush between the launches of a multi-launch rung).
  local t0=$SECONDS log=$OUT/ncu.txt shape=${NCU_SHAPE:-"--batch 16 --heads 16 --seq 4096 --head-dim 64 --causal no --dtype fp16"}
  : > "$log"
  for k in ${NCU_KERNELS:-naive fa1 fa2 fa2_tc}; do
    [ $((SECONDS - t0)) -ge "$NCU_BUDGET" ] && break
    # A backward rung runs after its forward rung (untimed): --pass bwd.
    local pass=""
    case $k in *_bwd) pass="--pass bwd" ;; esac
    echo "== $k: CUPTI (flashlab bench --counters)" >> "$log"
    # shellcheck disable=SC2086
    "$BIN/flashlab" bench --kernels "$k" $pass $shape --counters --check-only --quiet --json /tmp/cupti-$k.json >> "$log" 2>&1
    python3 - /tmp/cupti-$k.json >> "$log" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
rd, wr = r["dram_read_bytes"], r["dram_write_bytes"]
print("   CUPTI dram read %.5f GB, write %.5f GB" % (rd / 1e9, wr / 1e9))
PY
    # The kernels a rung launches: its own (named after it), or for naive its GEMMs and the softmax.
    local names="^${k}_"
    [ "$k" = naive ] && names="^(gemm_|softmax_)"
    # The backward rungs: the pre-pass, the main kernel, the convert kernel(s).
    [ "$k" = fa2_bwd ] && names="^(fa_bwd_preprocess|fa2_backward|fa_bwd_convert)"
    [ "$k" = fa2_tc_bwd ] && names="^(fa_bwd_preprocess|fa2_tc_backward|fa_bwd_convert)"
    echo "== $k: ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum (kernels matching $names, summed)" >> "$log"
    # shellcheck disable=SC2086
    timeout 90 ncu ${NCU_FLAGS:-} --metrics dram__bytes_read.sum,dram__bytes_write.sum --kernel-name "regex:$names" --csv \
      "$BIN/flashlab" bench --kernels "$k" $pass $shape --check-only --quiet 2>/dev/null |
      python3 -c '
import csv, sys
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
h = rows[0]; idx = {n: i for i, n in enumerate(h)}
tot = {}
for r in rows[1:]:
    name = r[idx["Metric Name"]]; unit = r[idx["Metric Unit"]]; v = float(r[idx["Metric Value"]].replace(",", ""))
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(unit, 1)
    tot[name] = tot.get(name, 0) + v * scale
for n, v in sorted(tot.items()): print("   %s %.5f GB" % (n, v / 1e9))
' >> "$log" 2>&1
  done
  result ncu ok $((SECONDS - t0)) "(ncu.txt)"
}

# flashlab bench on the perf sweep with its counters (the flags given added),
# then PyTorch on the same problems (torch_compare.py): bench$1.json, .txt,
# torch$1.json and compare$1.txt, and the stage's result line, the goals met.
bench_and_compare() {
  local sfx=$1 budget=$2 t0=$SECONDS rc rc2
  shift 2
  if [ "$BENCH_ROUNDS" -gt 1 ]; then
    bench_rounds "$sfx" "$budget" "$@"
    return
  fi
  timeout "$budget" "$BIN/flashlab" bench --sweep perf "$@" --counters --json "$OUT/bench$sfx.json" \
    > "$OUT/bench$sfx.txt" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && [ ! -s "$OUT/bench$sfx.json" ]; then
    result "bench$sfx" FAILED $((SECONDS - t0)) "flashlab bench rc=$rc (bench$sfx.txt)"
    return
  fi
  local left=$((budget + 120 - (SECONDS - t0)))
  [ $left -lt 30 ] && left=30
  echo "== torch_compare.py" >> "$OUT/bench$sfx.txt"
  # shellcheck disable=SC2086
  timeout "$left" python3 "$ROOT/scripts/torch_compare.py" --ours "$OUT/bench$sfx.json" --json "$OUT/torch$sfx.json" \
    ${BENCH_TORCH_KERNELS:+--kernels $BENCH_TORCH_KERNELS} --table "$OUT/compare$sfx.txt" >> "$OUT/bench$sfx.txt" 2>&1
  rc2=$?
  bench_result "$sfx" $t0 $rc $rc2
}

# BENCH_ROUNDS > 1: our sweep and PyTorch's alternate that many times
# (scripts/bench_rounds.py keeps each row's median round); the rounds' own
# files go to $OUT/rounds.
bench_rounds() {
  local sfx=$1 budget=$2 t0=$SECONDS rc=0 rc2=0 r ours=() theirs=()
  shift 2
  mkdir -p "$OUT/rounds"
  : > "$OUT/bench$sfx.txt"
  for r in $(seq 1 "$BENCH_ROUNDS"); do
    echo "== round $r: flashlab bench" >> "$OUT/bench$sfx.txt"
    timeout "$budget" "$BIN/flashlab" bench --sweep perf "$@" --counters --json "$OUT/rounds/bench$sfx-$r.json" \
      >> "$OUT/bench$sfx.txt" 2>&1 || rc=$?
    [ -s "$OUT/rounds/bench$sfx-$r.json" ] || { [ "$rc" -ne 0 ] || rc=1; break; }
    echo "== round $r: torch_compare.py" >> "$OUT/bench$sfx.txt"
    # shellcheck disable=SC2086  # BENCH_TORCH_KERNELS: "--kernels" and its list, or nothing (all three)
    timeout "$budget" python3 "$ROOT/scripts/torch_compare.py" --ours "$OUT/rounds/bench$sfx-$r.json" \
      ${BENCH_TORCH_KERNELS:+--kernels $BENCH_TORCH_KERNELS} --json "$OUT/rounds/torch$sfx-$r.json" > /dev/null 2>> "$OUT/bench$sfx.txt" || rc2=$?
    [ -s "$OUT/rounds/torch$sfx-$r.json" ] || { [ "$rc2" -ne 0 ] || rc2=1; break; }
    ours+=("$OUT/rounds/bench$sfx-$r.json")
    theirs+=("$OUT/rounds/torch$sfx-$r.json")
  done
  if [ ${#ours[@]} -eq 0 ]; then
    result "bench$sfx" FAILED $((SECONDS - t0)) "no round completed, rc=$rc/$rc2 (bench$sfx.txt)"
    return
  fi
  echo "== bench_rounds.py: ${#ours[@]} rounds" >> "$OUT/bench$sfx.txt"
  python3 "$ROOT/scripts/bench_rounds.py" --ours "${ours[@]}" --theirs "${theirs[@]}" --json-ours "$OUT/bench$sfx.json" \
    --json-theirs "$OUT/torch$sfx.json" --table "$OUT/compare$sfx.txt" >> "$OUT/bench$sfx.txt" 2>&1 || rc2=$?
  bench_result "$sfx" $t0 $rc $rc2
}

bench_result() {
  local sfx=$1 t0=$2 rc=$3 rc2=$4 goals
  goals=$(grep -E "points meet" "$OUT/compare$sfx.txt" 2>/dev/null | sed 's/^ *//' | tr '\n' ';')
  if [ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ]; then
    result "bench$sfx" ok $((SECONDS - t0)) "$goals (compare$sfx.txt)"
  else
    result "bench$sfx" FAILED $((SECONDS - t0)) "flashlab rc=$rc, torch_compare rc=$rc2; $goals (bench$sfx.txt)"
  fi
}

stage_bench() {
  # shellcheck disable=SC2086  # BENCH_KERNELS: "--kernels" and its list, or nothing (every forward rung)
  bench_and_compare "" "$BENCH_BUDGET" ${BENCH_KERNELS:+--kernels $BENCH_KERNELS}
}

stage_bench_bwd() {
  # shellcheck disable=SC2086  # BENCH_BWD_KERNELS: as BENCH_KERNELS, for the backward rungs
  bench_and_compare -bwd "$BENCH_BWD_BUDGET" --pass bwd ${BENCH_BWD_KERNELS:+--kernels $BENCH_BWD_KERNELS}
}

stage_bwd_check() {
  local t0=$SECONDS rc
  if [ ! -x "$BIN/flashlab_bwd_check" ]; then
    result bwd-check SKIPPED 0 "no $BIN/flashlab_bwd_check in this build"
    return
  fi
  timeout "$BWD_CHECK_BUDGET" "$BIN/flashlab_bwd_check" check time --variants > "$OUT/bwd-check.txt" 2>&1
  rc=$?
  local line
  line=$(tail -1 "$OUT/bwd-check.txt")
  stage_result bwd-check $rc $t0 "$BWD_CHECK_BUDGET" bwd-check.txt "$line (bwd-check.txt)" "$line rc=$rc (bwd-check.txt)"
}

stage_labs() {
  local t0=$SECONDS rc
  FLASHLAB="$BIN/flashlab" REPEATS=10 BUDGET=$LABS_BUDGET timeout $((LABS_BUDGET + 30)) \
    bash scripts/run-lab.sh all "$ROOT/lab-out"
  rc=$?
  cp "$ROOT/lab-out/labs-flashlab.json" "$ROOT/lab-out/labs-pytorch.json" "$ROOT/lab-out/run-lab.log" "$OUT/" 2>/dev/null
  cp "$ROOT/lab-out/labs-compare.txt" "$OUT/labs.txt" 2>/dev/null
  local oom
  oom=$(cat "$OUT"/labs-*.json 2>/dev/null | grep -c '"status": "OOM"')
  stage_result labs $rc $t0 "$LABS_BUDGET" run-lab.log \
    "$oom OOM cells (labs-flashlab.json, labs-pytorch.json, labs.txt, run-lab.log)" "rc=$rc (run-lab.log)"
}

stage_ring_tests() {
  local t0=$SECONDS rc
  {
    nvidia-smi topo -m 2>&1
    echo
  } > "$OUT/ring-tests.log"
  timeout "$RING_TESTS_BUDGET" "$BIN/flashlab_ring_gpu_tests" --durations yes >> "$OUT/ring-tests.log" 2>&1
  rc=$?
  local line
  line=$(grep -E "^(All tests passed|test cases:|SKIPPED)" "$OUT/ring-tests.log" | tail -1)
  stage_result ring-tests $rc $t0 "$RING_TESTS_BUDGET" ring-tests.log "$line (ring-tests.log)" \
    "$line rc=$rc (ring-tests.log)" "$line"
}

stage_ring_sanitize() {
  local t0=$SECONDS log=$OUT/ring-sanitize.log clean=0 dirty=0
  : > "$log"
  for tool in memcheck racecheck; do
    [ $((SECONDS - t0)) -ge "$RING_SANITIZE_BUDGET" ] && break
    echo "=== $tool: the sanitizers' ring of virtual GPUs" >> "$log"
    timeout 180 "$SANITIZER" --tool "$tool" --error-exitcode 99 "$BIN/flashlab_kernels_gpu_tests" "[ring-sanitize]" >> "$log" 2>&1
    local rc=$?
    echo "=== rc $rc" >> "$log"
    if [ $rc -eq 0 ]; then clean=$((clean + 1)); else dirty=$((dirty + 1)); fi
  done
  result ring-san "$([ $dirty -eq 0 ] && echo ok || echo ERRORS)" $((SECONDS - t0)) "$clean clean, $dirty with errors (ring-sanitize.log)"
}

stage_ring_bench() {
  local t0=$SECONDS rc failed=0 parts=()
  : > "$OUT/ring.txt"
  local gpus=${RING_GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
  for s in ${RING_SWEEPS:-ring-llama2-7b ring-llama3.2-3b ring-llama3.2-1b}; do
    local left=$((RING_BENCH_BUDGET - (SECONDS - t0)))
    if [ $left -le 10 ]; then echo "== $s: not run (budget)" >> "$OUT/ring.txt"; failed=1; continue; fi
    echo "== flashlab bench --sweep $s --gpus $gpus" >> "$OUT/ring.txt"
    # shellcheck disable=SC2086  # RING_FLAGS: more flags, split on spaces (--ring-steps fused,pairwise)
    timeout "$left" "$BIN/flashlab" bench --sweep "$s" --gpus "$gpus" ${RING_FLAGS:-} --json "$OUT/ring-$s.json" >> "$OUT/ring.txt" 2>&1 || failed=1
    [ -s "$OUT/ring-$s.json" ] && parts+=("$OUT/ring-$s.json")
  done
  if [ ${#parts[@]} -gt 0 ]; then
    # One JSON for all sweeps (the files that come back are few).
    python3 - "$OUT/ring.json" "${parts[@]}" <<'PY'
import json, sys
out, parts = sys.argv[1], sys.argv[2:]
docs = [json.load(open(p)) for p in parts]
merged = dict(docs[0])
merged["runs"] = [r for d in docs for r in d["runs"]]
json.dump(merged, open(out, "w"), indent=2)
PY
    rm -f "${parts[@]}"
  fi
  result ring-bench "$([ $failed -eq 0 ] && echo ok || echo PARTIAL)" $((SECONDS - t0)) "${#parts[@]} sweeps on $gpus GPUs (ring.txt, ring.json)"
}

stage_rung_timing() {
  local t0=$SECONDS failed=0 fit=() f
  local kernels=${RUNG_KERNELS:+--kernels $RUNG_KERNELS}
  # shellcheck disable=SC2086  # $kernels: a flag and its value, or nothing
  timeout "$RUNG_TIMING_BUDGET" "$BIN/flashlab" bench --sweep rung-timing $kernels \
    --json "$OUT/rung-timing.json" > "$OUT/rung-timing.txt" 2>&1 || failed=1
  fit+=(--results "$OUT/rung-timing.json")
  for f in ${RUNG_FIT_RESULTS:-}; do fit+=(--results "$f"); done
  if [ "${RUNG_POWER:-0}" = 1 ]; then
    local left=$((RUNG_TIMING_BUDGET - (SECONDS - t0)))
    timeout "$((left > 10 ? left : 10))" "$BIN/flashlab" bench --sweep ring-power-cap --gpus 1 \
      --json "$OUT/power-cap.json" > "$OUT/power-cap.txt" 2>&1 || failed=1
    fit+=(--power "$OUT/power-cap.json")
    for f in ${RUNG_FIT_POWER:-}; do fit+=(--power "$f"); done
  fi
  "$BIN/flashlab" ceilings rungs "${fit[@]}" --out "$OUT/rungs.json" > "$OUT/rung-fit.txt" 2>&1 || failed=1
  result rungs "$([ $failed -eq 0 ] && echo ok || echo FAILED)" $((SECONDS - t0)) \
    "(rung-timing.txt, power-cap.txt, rung-fit.txt, rungs.json)"
}

stage_ring_virtual() {
  local t0=$SECONDS rc
  timeout "${RING_VIRTUAL_BUDGET:-150}" "$BIN/flashlab" bench --gpus 2 --virtual-gpus \
    ${RING_VIRTUAL_FLAGS:---model llama3.2-1b,llama2-7b --seq 8K,32K --layout zigzag,contiguous --pass fwd+bwd} \
    --json "$OUT/ring-virtual.json" > "$OUT/ring-virtual.txt" 2>&1
  rc=$?
  result ring-virt "$([ $rc -eq 0 ] && echo ok || echo FAILED)" $((SECONDS - t0)) "rc=$rc (ring-virtual.txt, ring-virtual.json)"
}

stage_ranks() {
  local t0=$SECONDS log=$OUT/ranks.txt failed=0
  local gpus=${RANKS_GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
  # shellcheck disable=SC2206
  local flags=(${RANKS_FLAGS:---model llama3.2-3b --seq 16K,64K --layout zigzag --causal both --pass fwd+bwd} --gpus "$gpus")
  local torchrun=(torchrun)
  command -v torchrun >/dev/null || torchrun=(python3 -m torch.distributed.run)
  : > "$log"
  run_one() {  # NAME COMMAND...: one way of running the same problems
    local name=$1 s0=$SECONDS rc left
    shift
    left=$((RANKS_BUDGET - (SECONDS - t0)))
    if [ $left -le 20 ]; then echo "== $name: not run (budget)" >> "$log"; failed=1; return; fi
    echo "== $name: $*" >> "$log"
    timeout "$left" "$@" --json "$OUT/ranks-$name.json" >> "$log" 2>&1
    rc=$?
    echo "   ($name: rc=$rc, $((SECONDS - s0)) s)" >> "$log"
    [ $rc -eq 0 ] || failed=1
  }
  run_one one-process "$BIN/flashlab" bench "${flags[@]}"
  run_one torchrun "${torchrun[@]}" --standalone --nproc-per-node "$gpus" --no-python "$BIN/flashlab" bench --ranks "${flags[@]}"
  run_one launch-ranks bash scripts/launch-ranks.sh "$gpus" "$BIN/flashlab" bench --ranks "${flags[@]}"
  run_one one-process-again "$BIN/flashlab" bench "${flags[@]}"
  python3 - "$OUT" >> "$log" 2>&1 <<'PY'
import json, os, sys
out = sys.argv[1]
names = ["one-process", "torchrun", "launch-ranks", "one-process-again"]
docs = {n: json.load(open(os.path.join(out, f"ranks-{n}.json"))) for n in names if os.path.exists(os.path.join(out, f"ranks-{n}.json"))}
def key(r):
    p = r["problem"]
    return json.dumps({k: p[k] for k in sorted(p)}, sort_keys=True)
print("\n== the same problems, each way (ms: median of the timed runs; ratio to one process)")
base = docs.get("one-process", {"runs": []})
for r in base["runs"]:
    p = r["problem"]
    head = f"P={p.get('gpus', 1)} N={p.get('seq')} {'causal' if p.get('causal') else 'full'}"
    for pas in ("forward", "backward"):
        if not r.get(pas):
            continue
        t0 = r[pas]["time_ms_median"]
        cells = []
        for n, d in docs.items():
            m = [x for x in d["runs"] if key(x) == key(r) and x.get(pas)]
            if not m:
                cells.append(f"{n} -")
                continue
            t = m[0][pas]["time_ms_median"]
            cells.append(f"{n} {t:.3f} ({t / t0:.3f})")
        errs = sorted({(x.get("rel_error"), x.get("rel_error_grads")) for d in docs.values() for x in d["runs"] if key(x) == key(r)})
        print(f"{head:26s} {pas:8s} " + " | ".join(cells) + f"   errors {'equal' if len(errs) == 1 else errs}")
for n, d in docs.items():
    pr = d.get("meta", {}).get("processes")
    print(f"{n}: " + (json.dumps(pr) if pr else "one process"))
# One file back: the runs of every way, each with how it ran.
merged = dict(base)
merged["runs"] = []
for n, d in docs.items():
    for r in d["runs"]:
        r["how"] = n
        merged["runs"].append(r)
merged["ways"] = {n: d.get("meta", {}).get("processes") for n, d in docs.items()}
json.dump(merged, open(os.path.join(out, "ranks.json"), "w"), indent=1)
for n in docs:
    os.remove(os.path.join(out, f"ranks-{n}.json"))
PY
  # What goes wrong, and how fast it says so (each rank: one line, exit 2).
  local small=(--gpus 2 --seq 4096 --heads 8 --head-dim 64 --repeats 3)
  {
    echo
    echo "== no launcher's variables"
    local s0=$SECONDS
    env -u RANK -u WORLD_SIZE -u SLURM_PROCID -u OMPI_COMM_WORLD_RANK -u PMIX_RANK "$BIN/flashlab" bench --ranks "${small[@]}"
    echo "   rc=$? after $((SECONDS - s0)) s"
    echo "== rank 1 of 2, rank 0 at an address nobody answers (10.255.255.1), --rendezvous-timeout 5"
    s0=$SECONDS
    RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_ADDR=10.255.255.1 MASTER_PORT=29500 \
      "$BIN/flashlab" bench --ranks "${small[@]}" --rendezvous-timeout 5
    echo "   rc=$? after $((SECONDS - s0)) s"
    echo "== a job of 3 ranks where rank 2 never starts, --rendezvous-timeout 5"
    s0=$SECONDS
    local pids=()
    for r in 0 1; do
      WORLD_SIZE=3 RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=29600 \
        "$BIN/flashlab" bench --ranks "${small[@]}" --rendezvous-timeout 5 > "$OUT/.rank$r" 2>&1 &
      pids+=($!)
    done
    for r in 0 1; do wait "${pids[$r]}"; echo "   rank $r: rc=$? after $((SECONDS - s0)) s: $(cat "$OUT/.rank$r")"; done
    rm -f "$OUT"/.rank?
  } >> "$log" 2>&1
  result ranks "$([ $failed -eq 0 ] && echo ok || echo FAILED)" $((SECONDS - t0)) "$gpus GPUs, one process / torchrun / launch-ranks.sh (ranks.txt, ranks.json)"
}

stage_links() {
  local t0=$SECONDS rc
  timeout "$LINKS_BUDGET" "$BIN/flashlab" links --preset "$OUT/links-preset.json" --csv "$OUT/links.csv" \
    > "$OUT/links.txt" 2>&1
  rc=$?
  local line
  line=$(grep -E "^Measured link" "$OUT/links.txt" | head -1)
  stage_result links $rc $t0 "$LINKS_BUDGET" links.txt "$line (links.txt, links.csv, links-preset.json)" \
    "rc=$rc: $(grep -m1 'error' "$OUT/links.txt") (links.txt)"
}

STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(all)
for s in "${STAGES[@]}"; do
  case $s in
    all) stage_info; stage_tests; stage_sanitize; stage_bench ;;
    info | tests | sanitize | bench | labs | validate | ncu) "stage_$s" ;;
    bench-bwd) stage_bench_bwd ;;
    validate-bytes) stage_validate_bytes ;;
    bwd-check) stage_bwd_check ;;
    ring-tests) stage_ring_tests ;;
    ring-sanitize) stage_ring_sanitize ;;
    ring-bench) stage_ring_bench ;;
    ring-virtual) stage_ring_virtual ;;
    rung-timing) stage_rung_timing ;;
    links) stage_links ;;
    ranks) stage_ranks ;;
    *) echo "device-run: unknown stage '$s' (info, tests, sanitize, bench, bench-bwd, bwd-check, labs, validate," \
            "validate-bytes, ncu," \
            "ring-tests, ring-sanitize, ring-bench, ring-virtual, rung-timing, ranks, links, all)" >&2
       exit 2 ;;
  esac
done

{
  echo "== summary"
  printf '%-9s %-8s %6s  %s\n' stage result time detail
  cat "$RESULTS"
} >> "$SUMMARY"
cat "$SUMMARY"
