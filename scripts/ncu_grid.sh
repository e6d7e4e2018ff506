#!/usr/bin/env bash
# Runs ON the GPU machine, from the repo root (build-device/ carried): Nsight
# Compute on the 16k-token grid, the Hopper rungs and PyTorch's SDPA cuDNN
# backend point by point, forward and backward — what limits each point, in
# counters, beside the kernels it is compared with.
#   NCU_GRID_PASSES   fwd, bwd or both (default "fwd bwd")
#   NCU_GRID_TIMEOUT  seconds for each of the four ncu runs (default 150)
# Writes $OUT/ncu-grid-{fwd,bwd}.txt (scripts/ncu_grid.py's table) and
# $OUT/ncu-grid-raw.tar.xz (every collected metric, four CSVs).
set -uo pipefail
bash "$(dirname "$0")/device-unpack.sh"  # build-device/bin/*.xz, as scripts/device-build.sh sends them
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"
B=$PWD/build-device/bin/flashlab
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
RAW=/tmp/ncu-grid-raw
mkdir -p "$RAW"

# The counters beyond the table's by the names this ncu knows for GH100: the
# per-reason warp stalls.
Q=/tmp/ncu-query-gh100.txt
[ -s "$Q" ] || "$NCU" --query-metrics --chip gh100 > "$Q" 2>&1
M="gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum"
M+=",sm__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
M+=",dram__throughput.avg.pct_of_peak_sustained_elapsed"
M+=",sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size"
M+=",launch__waves_per_multiprocessor,sm__cycles_active.avg,sm__cycles_elapsed.avg,lts__t_sectors_op_red.sum"
for base in $(grep -oE "^[[:space:]]*smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active" "$Q" | tr -d ' '); do
  M+=",$base.ratio"
done

export_raw() {  # report -> CSV of every kernel, base units
  "$NCU" -i "$1.ncu-rep" --page raw --csv --print-units base > "$2" 2>&1
  rm -f "$1.ncu-rep"
}

for pass in ${NCU_GRID_PASSES:-fwd bwd}; do
  log=$OUT/ncu-grid-$pass.log
  : > "$log"
  if [ "$pass" = bwd ]; then
    rung=fa3_hopper_bwd
    names="^(fa_bwd_preprocess|fa3_hopper_backward|fa_bwd_convert)"
    flags="--pass bwd"
  else
    rung=fa3_hopper
    names="^fa3_hopper_forward"
    flags=""
  fi
  echo "== $rung: flashlab bench --sweep perf, one launch per point" >> "$log"
  # shellcheck disable=SC2086
  timeout "${NCU_GRID_TIMEOUT:-150}" "$NCU" --clock-control none --kernel-name "regex:$names" --metrics "$M" -f -o "$RAW/ours-$pass" \
    "$B" bench --sweep perf --kernels "$rung" $flags --check-only --check off --quiet >> "$log" 2>&1
  echo "== ncu rc $?" >> "$log"
  export_raw "$RAW/ours-$pass" "$RAW/ours-$pass.csv"
  echo "== SDPA cuDNN ($pass): every kernel between the markers" >> "$log"
  timeout "${NCU_GRID_TIMEOUT:-150}" "$NCU" --clock-control none --profile-from-start off --metrics "$M" -f -o "$RAW/cudnn-$pass" \
    python3 scripts/ncu_grid.py cudnn "$pass" >> "$log" 2>&1
  echo "== ncu rc $?" >> "$log"
  export_raw "$RAW/cudnn-$pass" "$RAW/cudnn-$pass.csv"
  python3 scripts/ncu_grid.py table "$RAW/ours-$pass.csv" "$RAW/cudnn-$pass.csv" "$pass" > "$OUT/ncu-grid-$pass.txt" 2>&1
  tail -3 "$log" >> "$OUT/ncu-grid-$pass.txt"
done
tar cJf "$OUT/ncu-grid-raw.tar.xz" -C "$RAW" .
