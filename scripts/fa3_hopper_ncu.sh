#!/usr/bin/env bash
# Runs ON the GPU machine, from a folder holding build-device/ (scripts/device-build.sh),
# assets/ and scripts/: Nsight Compute on a Hopper rung, one launch per problem, to show
# what limits it (tensor pipe, MUFU/XU, issue slots, warp stalls, occupancy, DRAM).
#   NCU_KERNEL    the rung: fa3_hopper (default) or fa3_hopper_bwd (its main kernel is
#                 the one profiled; the forward that feeds it and the pre-pass are not)
#   NCU_BIN       the flashlab binary (default build-device/bin/flashlab)
#   NCU_PROBLEMS  ';'-separated flashlab bench flags, one problem each
#                 (default: d = 64 and 128 at N = 16384 non-causal, d = 64 at N = 1024 causal)
#   NCU_TAG       a name for this binary in the output (default: the rung)
#   NCU_EXTRA     more ncu flags (e.g. "--section SourceCounters": the stall reasons by instruction)
# Writes $OUT/ncu-fa3-details.txt (sections, --print-details all) and $OUT/ncu-fa3-raw.csv
# (every collected metric), appending, so that several binaries share the two files.
set -uo pipefail
bash "$(dirname "$0")/device-unpack.sh"  # build-device/bin/*.xz, as scripts/device-build.sh sends them
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"
B=${NCU_BIN:-$PWD/build-device/bin/flashlab}
K=${NCU_KERNEL:-fa3_hopper}
case $K in
  fa3_hopper) PASS=fwd; KERNEL_RE=fa3_hopper_forward ;;
  fa3_hopper_bwd) PASS=bwd; KERNEL_RE=fa3_hopper_backward ;;
  *) echo "fa3_hopper_ncu.sh: NCU_KERNEL is fa3_hopper or fa3_hopper_bwd, not '$K'" >&2; exit 2 ;;
esac
TAG=${NCU_TAG:-$K}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
PROBLEMS=${NCU_PROBLEMS:-"--batch 1 --heads 32 --seq 16384 --head-dim 64 --causal no;--batch 1 --heads 16 --seq 16384 --head-dim 128 --causal no;--batch 16 --heads 32 --seq 1024 --head-dim 64 --causal yes"}

# The metrics beyond the sections, by the names this ncu knows for GH100: pipe
# utilisation (tensor/gmma, XU = MUFU, FMA, ALU), instruction counts per pipe,
# issue activity and the per-reason warp stalls.
Q=/tmp/ncu-query-gh100.txt
[ -s "$Q" ] || "$NCU" --query-metrics --chip gh100 > "$Q" 2>&1
have() { grep -qE "^[[:space:]]*$1[[:space:]]" "$Q"; }
M=""
for base in sm__pipe_tensor_op_gmma_cycles_active sm__pipe_tensor_op_hmma_cycles_active sm__pipe_xu_cycles_active \
            sm__pipe_fma_cycles_active sm__pipe_alu_cycles_active sm__pipe_fmaheavy_cycles_active \
            sm__pipe_shared_cycles_active sm__issue_active sm__cycles_active; do
  have "$base" && M+="$base.avg,$base.avg.pct_of_peak_sustained_active,"
done
for base in sm__inst_executed_pipe_tensor_op_gmma sm__inst_executed_pipe_xu sm__inst_executed_pipe_fma \
            sm__inst_executed_pipe_alu sm__inst_executed_pipe_fmaheavy sm__inst_executed; do
  have "$base" && M+="$base.sum,$base.avg.pct_of_peak_sustained_active,"
done
for base in $(grep -oE "^[[:space:]]*smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active" "$Q" | tr -d ' '); do
  M+="$base.ratio,"
done
M+="dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum"
echo "== metrics beyond the sections: $M" >> "$OUT/ncu-fa3-details.txt"

IFS=';' read -r -a probs <<< "$PROBLEMS"
for pr in "${probs[@]}"; do
  echo "=================== $TAG: $pr" >> "$OUT/ncu-fa3-details.txt"
  rep=/tmp/ncu-fa3-$$
  # shellcheck disable=SC2086
  timeout "${NCU_TIMEOUT:-150}" "$NCU" --clock-control none --kernel-name regex:$KERNEL_RE --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
    ${NCU_EXTRA:-} --metrics "$M" -f -o "$rep" \
    "$B" bench --pass $PASS --kernels $K $pr --dtype fp16 --check-only --check off --quiet >> "$OUT/ncu-fa3-details.txt" 2>&1
  echo "== ncu rc $?" >> "$OUT/ncu-fa3-details.txt"
  "$NCU" -i "$rep.ncu-rep" --print-details all >> "$OUT/ncu-fa3-details.txt" 2>&1
  echo "\"$TAG\",\"$pr\"" >> "$OUT/ncu-fa3-raw.csv"
  "$NCU" -i "$rep.ncu-rep" --page raw --csv >> "$OUT/ncu-fa3-raw.csv" 2>&1
  rm -f "$rep.ncu-rep"
done
