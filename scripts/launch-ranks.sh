#!/usr/bin/env bash
# Starts a command as P ranks on this host, a process per GPU, with the
# variables torchrun would set (RANK, WORLD_SIZE, LOCAL_RANK,
# LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT): for machines without
# torchrun, srun or mpirun.
#
#   bash scripts/launch-ranks.sh 4 ./flashlab bench --ranks --gpus 4 --seq 32768
#
# Rank 0's output is printed as it comes; every other rank's goes to
# $FLASHLAB_RANK_LOGS/rank-R.log (default: a temporary folder, printed at the
# end when a rank failed). Exits with the first non-zero exit status of the
# ranks (0 when all succeeded). MASTER_PORT may be set beforehand; otherwise a
# port is picked from the process id.
set -uo pipefail

if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 P COMMAND [ARGS...]   (P ranks of COMMAND on this host)" >&2
  exit 2
fi
P=$1
shift
export WORLD_SIZE=$P LOCAL_WORLD_SIZE=$P MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
export MASTER_PORT=${MASTER_PORT:-$((20000 + $$ % 20000))}
LOGS=${FLASHLAB_RANK_LOGS:-$(mktemp -d)}
mkdir -p "$LOGS"

pids=()
for ((r = 0; r < P; ++r)); do
  if [ "$r" -eq 0 ]; then
    RANK=$r LOCAL_RANK=$r "$@" &
  else
    RANK=$r LOCAL_RANK=$r "$@" >"$LOGS/rank-$r.log" 2>&1 &
  fi
  pids+=($!)
done
status=0
for ((r = 0; r < P; ++r)); do
  wait "${pids[$r]}"
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
  if [ "$rc" -ne 0 ] && [ "$r" -ne 0 ]; then
    echo "rank $r exited with $rc; its output ($LOGS/rank-$r.log):" >&2
    sed 's/^/  /' "$LOGS/rank-$r.log" >&2
  fi
done
exit "$status"
