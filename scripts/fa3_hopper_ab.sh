#!/usr/bin/env bash
# Runs ON the GPU machine: a Hopper rung from several flashlab binaries (variants
# of the kernel built here by scripts/build-variants.sh, one per commit, or by
# scripts/device-build.sh and copied, gzipped, to build-variants/flashlab-NAME.gz
# or .xz) checked against fp64 and timed on the
# 16k-token grid in one run, so that their times share the GPU's state.
#   AB_KERNEL    the rung (default fa3_hopper; fa3_hopper_bwd times the backward)
#   AB_VARIANTS  the names, in timing order (default: every build-variants/*.gz,
#                then the first again, to see the drift between the first and last sweep)
#   AB_CHECK_VARIANTS  the names checked against fp64 first (default: all; AB_CHECK=0: none)
#   AB_EXTRA     bench's problem options for more points, timed after each grid sweep
# Writes $OUT/ab-summary.txt (checks; ms and TFLOP/s per point and sweep; per build the
# median of its sweeps, its speed against the first build and its spread) and
# $OUT/ab-sweeps.tar.gz (each sweep's JSON, I-NAME.json).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
J=/tmp/ab-json
K=${AB_KERNEL:-fa3_hopper}
case $K in *_bwd) PASS=bwd ;; *) PASS=fwd ;; esac
rm -rf "$J"; mkdir -p "$OUT" "$J" /tmp/ab-bin
export FLASHLAB_ASSETS=$PWD/assets
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for f in build-variants/flashlab-*.gz build-variants/flashlab-*.xz; do
  [ -e "$f" ] || continue
  n=$(basename "$f"); n=${n%.*}; n=${n#flashlab-}
  case $f in *.xz) xz -dc "$f" ;; *) gzip -dc "$f" ;; esac > /tmp/ab-bin/$n && chmod +x /tmp/ab-bin/$n
done
names=${AB_VARIANTS:-"$(ls /tmp/ab-bin | tr '\n' ' ') $(ls /tmp/ab-bin | head -1)"}
S=$OUT/ab-summary.txt
if [ "${AB_CHECK:-1}" = 1 ]; then
  echo "== fp64 checks of $K (ragged N, causal, bf16, N_q != N_kv, grouped heads, > 132 tiles): rows ok / all, worst rel error" >> "$S"
  for n in ${AB_CHECK_VARIANTS:-$(ls /tmp/ab-bin)}; do
    rm -f /tmp/ab-check-*.json
    # A variant that hangs (a barrier never completes) is dropped after small runs: the
    # short rows (persistent blocks walking several tiles at N 900) and the long ones.
    timeout 20 /tmp/ab-bin/$n bench --pass $PASS --kernels $K --batch 4 --heads 16 --seq 900,2048 --head-dim 64,128 \
      --causal both --check-only --check off --quiet > /dev/null 2>&1
    if [ $? -eq 124 ]; then echo "$n: HANG (20 s), dropped" >> "$S"; rm -f /tmp/ab-bin/$n; continue; fi
    for d in 64 128; do
      timeout 60 /tmp/ab-bin/$n bench --pass $PASS --kernels $K --batch 2 --heads 3 --seq 1,17,65,129,300,1000 --head-dim $d \
        --causal both --dtype fp16,bf16 --check-only --quiet --json /tmp/ab-check-$d-a.json > /dev/null 2>&1
      timeout 60 /tmp/ab-bin/$n bench --pass $PASS --kernels $K --batch 4 --heads 16 --seq 900,1000,2048 --head-dim $d \
        --causal both --dtype fp16 --check-only --quiet --json /tmp/ab-check-$d-b.json > /dev/null 2>&1
      timeout 60 /tmp/ab-bin/$n bench --pass $PASS --kernels $K --batch 2 --heads 2 --seq 1,65,1000 --seq-kv 17,2048 \
        --head-dim $d --causal no --dtype fp16 --check-only --quiet --json /tmp/ab-check-$d-c.json > /dev/null 2>&1
      timeout 60 /tmp/ab-bin/$n bench --pass $PASS --kernels $K --batch 2 --heads 8 --kv-heads 2 --seq 129,1000 \
        --head-dim $d --causal both --dtype bf16 --check-only --quiet --json /tmp/ab-check-$d-g.json > /dev/null 2>&1
    done
    python3 - "$n" /tmp/ab-check-*.json >> "$S" <<'PY'
import json, sys
rows = []
for f in sys.argv[2:]:
    try: rows += json.load(open(f))["rows"]
    except Exception as e: print("  unreadable", f, e)
ok = [r for r in rows if r["status"] == "ok"]
bad = [r for r in rows if r["status"] != "ok"]
worst = max((r["rel_error"] for r in ok), default=float("nan"))
print("%-10s %d / %d ok, worst %.1e" % (sys.argv[1], len(ok), len(rows), worst))
for r in bad[:6]:
    print("   %s B=%d H=%d N=%d/%d d=%d %s causal=%s: %s %s" % (r["status"], r["batch"], r["heads"], r["seq_q"], r["seq_kv"],
          r["head_dim"], r["dtype"], r["causal"], r.get("reason", ""), r.get("rel_error")))
PY
  done
fi
echo "== timing: flashlab bench --sweep perf --pass $PASS --kernels $K --check off" >> "$S"
i=0
for n in $names; do
  [ -x /tmp/ab-bin/$n ] || continue
  i=$((i + 1))
  timeout "${AB_SWEEP_TIMEOUT:-90}" /tmp/ab-bin/$n bench --sweep perf --pass $PASS --kernels $K --check off \
    --json "$J/$i-$n.json" > /tmp/ab-sweep.txt 2>&1
  echo "sweep $i $n rc=$? $(grep -m1 -i 'clock' /tmp/ab-sweep.txt)" >> "$S"
  # AB_EXTRA: more points (bench's problem options) timed after the grid, in the same column.
  if [ -n "${AB_EXTRA:-}" ]; then
    # shellcheck disable=SC2086
    timeout "${AB_SWEEP_TIMEOUT:-90}" /tmp/ab-bin/$n bench $AB_EXTRA --pass $PASS --kernels $K --check off \
      --json "$J/$i-$n-x.json" > /dev/null 2>&1
  fi
done
python3 - "$J" >> "$S" <<'PY'
import glob, json, os, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.json")), key=lambda f: int(os.path.basename(f).split("-")[0]))
cols, table = [], {}
for f in files:
    name = os.path.basename(f)[:-5]
    if name.endswith("-x"):  # AB_EXTRA's points of the same sweep
        name = name[:-2]
    if name not in cols:
        cols.append(name)
    for r in json.load(open(f))["rows"]:
        key = (r["batch"], r["heads"], r["seq_q"], r["head_dim"], r["causal"])
        table.setdefault(key, {})[name] = (r["time_ms_median"], r["tflops"]) if r["status"] == "ok" else None
print("median ms per point (TFLOP/s by the pass's FlashAttention convention)")
print("%-28s" % "B H N d causal" + "".join("%18s" % c for c in cols))
for key in sorted(table, key=lambda k: (k[4], k[3], k[2])):
    cells = ""
    for c in cols:
        t = table[key].get(c)
        cells += "%18s" % ("-" if t is None else "%.4f (%5.1f)" % t)
    print("%-28s" % ("%s %s %s %s %s" % key) + cells)
# Per build: the median of its sweeps, and its speed against the first build
# (its time over this one's: > 1 is faster), with the spread of its sweeps.
builds = []
for c in cols:
    b = c.split("-", 1)[1]
    if b not in builds:
        builds.append(b)
if len(builds) > 1:
    def median(xs):
        xs = sorted(xs)
        m = len(xs) // 2
        return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2
    print("per build: median ms of its sweeps, x its speed against %s (> 1: faster), [slowest, fastest sweep]" % builds[0])
    print("%-28s" % "B H N d causal" + "".join("%34s" % b for b in builds))
    for key in sorted(table, key=lambda k: (k[4], k[3], k[2])):
        times = {b: [table[key][c][0] for c in cols if c.split("-", 1)[1] == b and table[key].get(c)] for b in builds}
        ref = median(times[builds[0]]) if times[builds[0]] else None
        cells = ""
        for b in builds:
            t = times[b]
            if not t:
                cells += "%34s" % "-"
                continue
            m = median(t)
            speed = "%.3fx" % (ref / m) if ref else "-"
            cells += "%34s" % ("%.4f %s [%.4f, %.4f]" % (m, speed, max(t), min(t)))
        print("%-28s" % ("%s %s %s %s %s" % key) + cells)
PY
tar -czf "$OUT/ab-sweeps.tar.gz" -C "$J" .
cat "$S"
