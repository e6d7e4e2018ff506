#!/usr/bin/env python3
"""The median of several alternating rounds of `flashlab bench` and
scripts/torch_compare.py, as one pair of results files and one compare table.

A GPU's clock and temperature drift over a call: one sweep of our kernels
followed by one of PyTorch's puts each side at a different moment of the drift,
and a ratio near 1.0 then flips between calls. Rounds alternate the two sides
(ours, PyTorch, ours, PyTorch, ...) and each row keeps the round whose median
time is the median of the rounds' (the lower middle one for an even count), so
both sides are read at the same share of the drift:

    python3 scripts/bench_rounds.py --ours b1.json b2.json b3.json \\
        --theirs t1.json t2.json t3.json \\
        --json-ours bench.json --json-theirs torch.json --table compare.txt

A row is the whole row of that round (its counters, peak memory and check
included) with `round_times_ms`, every round's median in round order. A row
that is not "ok" in some round (a failed check, an OOM, a refusal) is that
round's row: a failure is never outvoted by the rounds that passed. A problem
missing from a round is missing from the merge's medians, and a row present in
no "ok" round keeps its status.

--table needs torch (the table is torch_compare.py's); the merge itself does not.
"""
import argparse
import json
import sys

FORMAT = "flashlab-bench/1"


def row_key(r):
    return (r["kernel"], r.get("direction", "fwd") or "fwd", r["batch"], r["heads"], r.get("kv_heads"), r["seq_q"],
            r["seq_kv"], r["head_dim"], r["causal"], r["dtype"], int(r.get("mem_limit_bytes", 0) or 0))


def merge(docs):
    """docs: the rounds' results documents of one side, in round order. Returns one document."""
    if not docs:
        raise ValueError("no rounds")
    for d in docs:
        if d.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} document")
    order, by_key = [], {}
    for i, d in enumerate(docs):
        for r in d["rows"]:
            k = row_key(r)
            if k not in by_key:
                by_key[k] = []
                order.append(k)
            by_key[k].append((i, r))
    rows = []
    for k in order:
        runs = by_key[k]
        bad = [r for _, r in runs if r.get("status") != "ok"]
        if bad:
            row = dict(bad[0])
        else:
            ranked = sorted(runs, key=lambda ir: (ir[1]["time_ms_median"], ir[0]))
            row = dict(ranked[(len(ranked) - 1) // 2][1])
        row["round_times_ms"] = [r.get("time_ms_median") for _, r in runs]
        rows.append(row)
    meta = dict(docs[0].get("meta", {}))
    method = meta.get("method", "")
    meta["rounds"] = len(docs)
    meta["method"] = ((method + "; ") if method else "") + (
        f"each row the median of {len(docs)} rounds alternating with the other side's "
        "(scripts/bench_rounds.py: the row of the round whose median time is the rounds' median)")
    return {"format": FORMAT, "meta": meta, "rows": rows}


def load(path):
    with open(path) as f:
        return json.load(f)


def write(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", nargs="+", required=True, help="flashlab bench's JSON of each round, in round order")
    ap.add_argument("--theirs", nargs="*", default=[], help="torch_compare.py's JSON of each round, in round order")
    ap.add_argument("--json-ours", required=True)
    ap.add_argument("--json-theirs")
    ap.add_argument("--table", help="torch_compare.py's merged table of the medians (needs torch)")
    args = ap.parse_args()
    if args.theirs and len(args.theirs) != len(args.ours):
        sys.exit("bench_rounds.py: error: --theirs needs one file per round of --ours "
                 f"({len(args.ours)} rounds, {len(args.theirs)} files)")
    if (args.table or args.json_theirs) and not args.theirs:
        sys.exit("bench_rounds.py: error: --table and --json-theirs need --theirs")
    try:
        ours = merge([load(p) for p in args.ours])
        theirs = merge([load(p) for p in args.theirs]) if args.theirs else None
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"bench_rounds.py: error: {e}")
    write(ours, args.json_ours)
    if theirs is not None and args.json_theirs:
        write(theirs, args.json_theirs)
    if args.table:
        import torch_compare as tc  # imports torch
        header = tc.table_header(ours["meta"], theirs["meta"]) + f"; the median of {len(args.ours)} alternating rounds\n"
        ours_rows = [r for r in ours["rows"] if tc.direction_of(r) in ("fwd", "bwd")]
        text = header + tc.merged_table(ours_rows, theirs["rows"])
        with open(args.table, "w") as f:
            f.write(text)
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
