#!/usr/bin/env python3
"""scripts/bench_rounds.py on three made-up rounds: each row is its median round's
(counters included), a row that failed in any round stays failed, a problem
missing from a round is merged from the rounds that have it, and bad input is
one line with a non-zero exit."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(sys.argv[1], "scripts", "bench_rounds.py")


def row(n, ms, status="ok", dram=None):
    return {"kernel": "fa3_hopper", "direction": "fwd", "batch": 1, "heads": 2, "kv_heads": 2, "seq_q": n, "seq_kv": n,
            "head_dim": 64, "causal": False, "dtype": "fp16", "mem_limit_bytes": 0, "status": status,
            "time_ms_median": ms, "dram_read_bytes": dram}


def doc(rows, commit="abc"):
    return {"format": "flashlab-bench/1", "meta": {"commit": commit, "method": "m"}, "rows": rows}


rounds = [doc([row(64, 3.0, dram=30), row(128, 1.0), row(256, 5.0)]),
          doc([row(64, 1.0, dram=10), row(128, 0.5, status="failed")]),
          doc([row(64, 2.0, dram=20), row(128, 3.0), row(256, 7.0)])]
failures = []
with tempfile.TemporaryDirectory() as tmp:
    paths = []
    for i, d in enumerate(rounds):
        paths.append(os.path.join(tmp, f"r{i}.json"))
        json.dump(d, open(paths[-1], "w"))
    out = os.path.join(tmp, "merged.json")
    r = subprocess.run([sys.executable, SCRIPT, "--ours", *paths, "--json-ours", out], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"merge exited {r.returncode}: {r.stderr.strip()}")
    else:
        m = json.load(open(out))
        rows = {x["seq_q"]: x for x in m["rows"]}
        # N 64: rounds 3.0, 1.0, 2.0 ms -> the 2.0 ms round, with that round's counters.
        if (rows[64]["time_ms_median"], rows[64]["dram_read_bytes"]) != (2.0, 20):
            failures.append(f"N 64: want the 2.0 ms round with its 20 DRAM bytes, got {rows[64]}")
        if rows[64]["round_times_ms"] != [3.0, 1.0, 2.0]:
            failures.append(f"N 64: round times {rows[64]['round_times_ms']}")
        # N 128: failed in round 2 -> failed, whatever the others say.
        if rows[128]["status"] != "failed":
            failures.append(f"N 128: a failed round was outvoted: {rows[128]}")
        # N 256: in rounds 1 and 3 only -> the lower middle of two, 5.0 ms.
        if rows[256]["time_ms_median"] != 5.0:
            failures.append(f"N 256: want 5.0 ms (lower middle of two rounds), got {rows[256]['time_ms_median']}")
        if m["meta"].get("rounds") != 3 or "median of 3 rounds" not in m["meta"].get("method", ""):
            failures.append(f"meta does not name the rounds: {m['meta']}")
    # One file for the other side per round, or a clear error.
    r = subprocess.run([sys.executable, SCRIPT, "--ours", *paths, "--theirs", paths[0], "--json-ours", out],
                       capture_output=True, text=True)
    if r.returncode == 0 or "one file per round" not in r.stderr:
        failures.append(f"a short --theirs list was not refused: rc {r.returncode}, {r.stderr.strip()}")
    bad = os.path.join(tmp, "bad.json")
    json.dump({"format": "something-else", "rows": []}, open(bad, "w"))
    r = subprocess.run([sys.executable, SCRIPT, "--ours", bad, "--json-ours", out], capture_output=True, text=True)
    if r.returncode == 0 or "flashlab-bench/1" not in r.stderr:
        failures.append(f"a file of another format was not refused: rc {r.returncode}, {r.stderr.strip()}")

for f in failures:
    print("FAILED:", f)
sys.exit(1 if failures else 0)
