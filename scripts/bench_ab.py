#!/usr/bin/env python3
"""Two builds of the same rungs, point by point: the median time of each row of
flashlab bench results (JSON) of build B over build A, matched by kernel, pass
and problem. Give each build's files in the order they were run, alternating
(A B A B ...): the figure per point is the median over its runs, and the table
shows the spread between a build's own runs (what noise is, on this machine).

  python3 scripts/bench_ab.py --a old-1.json old-2.json --b new-1.json new-2.json [--names old new]
"""
import argparse
import json
import statistics
import sys


def rows(path):
    with open(path) as f:
        doc = json.load(f)
    for r in doc["rows"]:
        if r.get("status") != "ok" or not r.get("time_ms_median"):
            continue
        key = (r["kernel"], r.get("direction", "fwd"), r["batch"], r["heads"], r["seq_q"], r["seq_kv"],
               r["head_dim"], bool(r["causal"]), r["dtype"])
        yield key, float(r["time_ms_median"]), float(r.get("tflops", 0.0))


def gather(paths):
    by = {}
    for p in paths:
        for key, ms, tf in rows(p):
            by.setdefault(key, []).append((ms, tf))
    return by


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", nargs="+", required=True, help="build A's results files")
    ap.add_argument("--b", nargs="+", required=True, help="build B's results files")
    ap.add_argument("--names", nargs=2, default=["A", "B"])
    o = ap.parse_args()
    a, b = gather(o.a), gather(o.b)
    keys = sorted(set(a) & set(b))
    if not keys:
        print("bench_ab: no row is in both builds' files", file=sys.stderr)
        return 2
    na, nb = o.names
    # Columns as wide as the builds' names need, one space between any two.
    wa, wb = max(10, len(na) + 4), max(10, len(nb) + 4)
    wr, wt = max(10, len(na) + len(nb) + 2), max(14, len(nb) + 9)
    print(f"{'kernel':<12}{'pass':<5}{'B':>4}{'H':>4}{'N':>7}{'d':>5}{'mask':>8} "
          f"{na + ' ms':>{wa}}{'spread':>8}{nb + ' ms':>{wb}}{'spread':>8}{nb + '/' + na:>{wr}}{nb + ' TFLOP/s':>{wt}}")
    ratios = []
    for k in keys:
        ta = [m for m, _ in a[k]]
        tb = [m for m, _ in b[k]]
        ma, mb = statistics.median(ta), statistics.median(tb)
        sa = (max(ta) - min(ta)) / ma if len(ta) > 1 else 0.0
        sb = (max(tb) - min(tb)) / mb if len(tb) > 1 else 0.0
        ratios.append(mb / ma)
        tf = statistics.median([t for _, t in b[k]])
        print(f"{k[0]:<12}{k[1]:<5}{k[2]:>4}{k[3]:>4}{k[4]:>7}{k[6]:>5}{'causal' if k[7] else 'full':>8} "
              f"{ma:>{wa}.3f}{100 * sa:>7.1f}%{mb:>{wb}.3f}{100 * sb:>7.1f}%{mb / ma:>{wr}.3f}{tf:>{wt}.1f}")
    print(f"{len(keys)} points: time {nb}/{na} median {statistics.median(ratios):.3f}, "
          f"min {min(ratios):.3f}, max {max(ratios):.3f} (above 1: {nb} slower)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
