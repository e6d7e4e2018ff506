#!/usr/bin/env bash
# The ring's runs of one device call, on a multi-GPU machine, each part under its
# own time limit so a slow part leaves the others' files:
#   tests          the multi-GPU tests (every rung on the last GPU among them)
#   ab             two builds' forward on the 8K- and 32K-token-per-GPU points, run
#                  alternately (build-device/bin/flashlab-base against flashlab)
#   ncu-fold:M     Nsight Compute on the forward rung's launches of model M's ring
#                  (4 virtual GPUs of GPU 0, 8K tokens each), fused steps (the
#                  rung folds into the running O) and pairwise (plain launches)
#   sweep:M:P:S    model M's sweep points at total lengths S (comma list) on P GPUs
#                  (with $SWEEP_BIN, default flashlab)
# Everything lands in $OUT/ring-runs.tar.gz (the files that come back are few) and
# the log in $OUT/ring-runs.txt.
#   bash scripts/device-ring-runs.sh tests ab sweep:llama2-7b:4:8K,16K,32K,64K
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/device-unpack.sh  # build-device/bin/*.xz, as scripts/device-build.sh sends them
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export FLASHLAB_ASSETS=$PWD/assets
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
BIN=$PWD/build-device/bin
OUT=${OUT:-/tmp/ring-runs}
W=$OUT/ring-runs
mkdir -p "$W"
LOG=$OUT/ring-runs.txt
DEADLINE=${DEADLINE:-560}  # seconds after which nothing new starts (the tarball must be made)
# limit L: L seconds, or what is left before the deadline (0: skip)
limit() { local left=$((DEADLINE - SECONDS)); [ "$left" -lt 20 ] && echo 0 || echo $((left < $1 ? left : $1)); }
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
{ nvidia-smi -L; nvidia-smi topo -m; } > "$W/machine.txt" 2>&1
log "commit $(cat build-device/COMMIT 2>/dev/null); GPUs: $(nvidia-smi -L | wc -l)"
for part in "$@"; do
  t0=$SECONDS
  case $part in
    tests)
      [ "$(limit 150)" -eq 0 ] && { log "tests: not run (time)"; continue; }
      timeout "$(limit 150)" "$BIN/flashlab_ring_gpu_tests" --durations yes > "$W/ring-tests.txt" 2>&1
      log "tests rc=$? ($((SECONDS - t0)) s): $(grep -E '^(All tests passed|test cases:)' "$W/ring-tests.txt" | tail -1)" ;;
    ab)
      for i in 1 2; do
        for v in base new; do
          b=$BIN/flashlab; [ "$v" = base ] && b=$BIN/flashlab-base
          [ "$(limit 60)" -eq 0 ] && { log "ab $v $i: not run (time)"; continue; }
          timeout "$(limit 60)" "$b" bench --gpus 4 --model llama2-7b,llama3.2-3b,llama3.2-1b --seq 32K,128K \
            --layout zigzag --pass fwd --json "$W/ab-$v-$i.json" > "$W/ab-$v-$i.txt" 2>&1
          log "ab $v $i rc=$? ($((SECONDS - t0)) s)"
        done
      done ;;
    ncu-fold:*)
      model=${part#ncu-fold:}
      for mode in fused pairwise; do
        [ "$(limit 150)" -eq 0 ] && { log "ncu $model $mode: not run (time)"; continue; }
        timeout "$(limit 150)" ncu --kernel-name regex:fa3_hopper_forward --launch-count "${NCU_LAUNCHES:-100}" --csv \
          --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed \
          "$BIN/flashlab" bench --gpus 4 --virtual-gpus --model "$model" --seq 32K --layout zigzag --pass fwd \
          --ring-steps "$mode" > "$W/ncu-$model-$mode.csv" 2> "$W/ncu-$model-$mode.err"
        log "ncu $model $mode rc=$? ($((SECONDS - t0)) s)"
      done ;;
    sweep:*)
      IFS=: read -r _ model gpus seqs <<< "$part"
      devs=$(seq -s, 0 $((gpus - 1)))
      for s in ${seqs//,/ }; do
        f=$W/sweep-$model-p$gpus-$s.json
        [ "$(limit 200)" -eq 0 ] && { log "sweep $model P=$gpus N=$s: not run (time)"; continue; }
        timeout "$(limit 200)" "$BIN/${SWEEP_BIN:-flashlab}" bench --model "$model" --gpus "$gpus" --devices "$devs" --seq "$s" \
          --layout zigzag,contiguous --pass fwd+bwd --json "$f" > "${f%.json}.txt" 2>&1
        log "sweep $model P=$gpus N=$s rc=$? ($((SECONDS - t0)) s)"
      done ;;
    *) log "unknown part '$part'" ;;
  esac
done
tar -C "$OUT" -czf "$OUT/ring-runs.tar.gz" ring-runs && rm -rf "$W"
log "done"
