#!/usr/bin/env bash
# How much of the SMs NCCL's kernels take from the rung: the same ring passes
# with NCCL's CTAs per operation left to NCCL ("default") or pinned with
# NCCL_MIN_CTAS = NCCL_MAX_CTAS = c. Runs ON the GPU machine from the repo root.
#
#   scripts/ring-nccl-ctas.sh GPUS OUTDIR [c ...]      (default c: 16 4)
#
# Writes OUTDIR/<tag>-ctas-<c>.json and .txt per setting; the default run
# also logs NCCL's own account of its channels (NCCL_DEBUG=INFO).
set -u
bash "$(dirname "$0")/device-unpack.sh"  # build-device/bin/*.xz, as scripts/device-build.sh sends them
gpus=${1:?GPUS}; out=${2:?OUTDIR}; shift 2
ctas=("$@"); [ ${#ctas[@]} -eq 0 ] && ctas=(16 4)
BIN=${BIN:-build-device/bin}
tag="h$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | grep -o 'H[0-9]*' | head -1 | tr -d H)x$gpus"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out"
run() {  # run NAME [ENV=...]: one bench of the LLaMA-2-7B ring, 8K-32K, fwd+bwd
  local name=$1; shift
  env "$@" "$BIN/flashlab" bench --model llama2-7b -b 1 -n 8K,16K,32K --gpus "$gpus" --layout zigzag \
    --ring-steps fused --dtype bf16 --causal yes --pass fwd+bwd \
    --json "$out/$tag-ctas-$name.json" > "$out/$tag-ctas-$name.txt" 2>&1
  echo "ctas $name: rc $?"
}
run default NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P
for c in "${ctas[@]}"; do run "$c" NCCL_MIN_CTAS="$c" NCCL_MAX_CTAS="$c"; done
