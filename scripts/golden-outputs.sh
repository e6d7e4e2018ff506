#!/usr/bin/env bash
# The CLI's outputs for the README's examples and the ring's committed results, one
# file per command, into DIR: run it before and after a change that should not move a
# byte, then `diff -r BEFORE AFTER`. Needs no GPU (the commands that do are left out).
#   bash scripts/golden-outputs.sh build/flashlab /tmp/before
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "$1"); DIR=$2
mkdir -p "$DIR"
export FLASHLAB_ASSETS=$PWD/assets
i=0
run() {  # every command's stdout, stderr and exit status; files it writes go to $DIR/files
  i=$((i + 1))
  local f; f=$(printf '%s/%02d.txt' "$DIR" "$i")
  { echo "\$ flashlab $*"; (cd "$DIR" && "$BIN" "$@" 2>&1); echo "exit $?"; } > "$f"
}
R=$PWD/docs/results
mkdir -p "$DIR/files"
run compare
run compare --hw H200-SXM-141GB -b 128 --heads 8 -n 1024 -d 64 --results "$R/h200-validate.json"
run bench --check-roof --results "$R/h200-perf-bench.json"
run bench --results "$R/h200-validate.json"
run sim --algo fa1 --batch 64 --heads 16 --seq 1024 --head-dim 64 --dtype fp16
run sim --algo fa1 --batch 64 --heads 16 --seq 1024 --head-dim 64 --dtype fp16 --causal --json
run sim --algo fa2 --pass bwd
run compare --pass fwd+bwd
run sim --algo fa2 --seq 16K --br 128 --bc 64 --hw H100-SXM5-80GB --trace files/events.csv
run sweep --vary seq=512:65536:x2 --algos standard,fa1,fa2 --csv files/io.csv
run sweep --vary sram=32KiB:256KiB:x2 --algos fa1 --csv files/io-vs-m.csv
run hw list
run hw show A100-PCIe-80GB
run hw compare "$PWD/assets/hardware/measured/H100-SXM5-80GB-2026-11-22.json" H100-SXM5-80GB
run export --chart io-vs-n --seq 4096 --out files/io.svg
run export --chart bench-tflops --results "$R/h100-perf-bench.json" --out files/tflops.csv
run pipeline --head-dim 64 --seq 16K --heads 32
run ring --model llama3.2-3b --seq 128K --gpus 8 --pass fwd+bwd
run ring --model llama3.2-3b --seq 128K --gpus 8 --pass fwd+bwd --timeline --json
run ring --extrapolate --model all --pass fwd+bwd
for f in "$R"/ring/*.json; do
  run ring --results "$f"
  run ring --results "$f" --link measured-nvidia-h200-4gpu-2026-11-26
done
run ring --results "$R/ring/h200x4-ring.json" --chart ring-scaling --out files/scaling.svg
run ring --results "$R/ring/h200x4-ring.json" --chart ring-time --out files/time.csv
# what is refused, and how
run ring --model nope --seq 8K --gpus 2
run ring --model llama2-7b --seq 8K --gpus 0
run sim --algo fa2 --seq 0
run sim --hw nope
run ring --link nope --model llama2-7b --seq 8K --gpus 2
run bench --sweep nope --results "$R/h200-perf-bench.json"
echo "$i commands -> $DIR"
