#!/usr/bin/env python3
"""Missing is not zero, in every CSV FlashLab writes.

    python3 tests/cli/csv_missing_cells.py build/flashlab .

Writes the CSVs of runs from the committed results through the command line —
a lab's report (its runs table and every chart), a report of the labs' whole
results files, bench charts exported on their own, `flashlab check` on a
student's table with OOM rows, the ring's charts — reads each with Python's
csv module, and fails when a row whose status says OOM, skipped or failed holds
a 0 in a measured column: a value nobody measured is an empty cell. Each kind
of CSV is named by its first columns; a CSV of a kind this file does not know
fails too, so that a new writer is added here. It also fails when the results
give it no OOM row to look at, and it checks itself on a CSV that breaks the
rule.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MISSING = ("OOM", "skipped", "failed")

# Each kind: the columns it begins with, the column that says why a value is
# missing, the columns that hold measurements.
KINDS = {
    "runs": {
        "starts": ["kernel", "model", "direction"],
        "status": "status",
        "measured": ["br", "bc", "time_ms_median", "time_ms_min", "time_ms_max", "repeats", "tflops", "tflops_exact", "gbps",
                     "peak_memory_bytes", "rel_error", "ctas_per_sm", "dram_read_bytes", "dram_write_bytes",
                     "l2_read_bytes", "l2_write_bytes", "launch_host_us"],
    },
    "chart": {"starts": ["chart", "series", "x", "y"], "status": "note", "measured": ["y"]},
    "check": {
        "starts": ["line", "impl", "batch"],
        "status": "status",
        "measured": ["time_s", "reported_tflops", "recomputed_tflops", "ratio", "peak_tflops", "roof_tflops",
                     "bound_s", "memory_bytes", "rate_mismatch", "above_roof", "memory_below_inputs",
                     "repeat_spread"],
    },
    # The model's tables: nothing measured, no status.
    "model": {"starts": ["axis", "value", "algorithm"], "status": None, "measured": []},
}


def kind_of(header):
    for name, k in KINDS.items():
        if header[:len(k["starts"])] == k["starts"]:
            return name
    return None


def says_missing(status):
    return any(word in status.split() for word in MISSING)


def zero(cell):
    try:
        return float(cell) == 0.0
    except ValueError:
        return False


def violations(text, origin, strict=True):
    """(problems, rows whose status says a value is missing) of one CSV's text;
    `strict`: every measured column of its kind must be there."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return [f"{origin}: empty"], 0
    header = rows[0]
    kind = kind_of(header)
    if kind is None:
        return [f"{origin}: a CSV of a kind this test does not know (header {header[:4]}…): add it to KINDS"], 0
    k = KINDS[kind]
    if k["status"] is None:
        return [], 0
    at = {c: i for i, c in enumerate(header)}
    missing_rows = 0
    out = [f"{origin}: no column {c}" for c in k["measured"] if strict and c not in at]
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            out.append(f"{origin}:{n}: {len(row)} fields, the header has {len(header)}")
            continue
        status = row[at[k["status"]]]
        if not says_missing(status):
            continue
        missing_rows += 1
        for c in k["measured"]:
            if c in at and zero(row[at[c]]):
                out.append(f"{origin}:{n}: status '{status}' but {c} = {row[at[c]]!r} (a missing value is an empty cell)")
    return out, missing_rows


def run(exe, args, cwd):
    r = subprocess.run([exe] + args, cwd=cwd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"flashlab {' '.join(args)}: exit {r.returncode}\n{r.stdout}{r.stderr}")


def main():
    exe, root = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve()
    os.environ["FLASHLAB_ASSETS"] = str(root / "assets")
    labs = root / "docs" / "results" / "labs"
    ours, torch = str(labs / "labs-flashlab.json"), str(labs / "labs-pytorch.json")

    # The checker fails on what it must fail on.
    bad = "kernel,model,direction,status,time_ms_median,tflops\ntorch_eager,pytorch,fwd,OOM,0,0\n"
    problems, _ = violations(bad, "self-test.csv", strict=False)
    if len(problems) != 2:
        sys.exit(f"the checker missed the zeros of an OOM row: {problems}")

    with tempfile.TemporaryDirectory(prefix="flashlab-csv-") as tmp:
        t = Path(tmp)
        run(exe, ["report", "--lab", "torch-vs-flash2", "--out", "lab", "--width", "640", "--height", "420"], t)
        run(exe, ["report", "--results", ours, "--results", torch, "--out", "all", "--width", "640", "--height", "420"], t)
        for chart in ("bench-time", "bench-tflops", "bench-memory", "bench-speedup", "bench-heatmap",
                      "bench-heatmap-tflops", "bench-passes"):
            run(exe, ["export", "--chart", chart, "--results", ours, "--results", torch, "--filter", "batch=64",
                      "--out", f"export-{chart}.csv"], t)
        # A student's table with OOM rows, as the FlashAttention-2 lab's grid has them.
        (t / "student.csv").write_text(
            "batch_size,seq_len,num_heads,emb_dim,Forward Time (s),Total Flops (FLOPs/s),Peak Memory (MB)\n"
            "16,1024,32,2048,0.006150229772,29.77291386,644.0004883\n"
            "64,1024,32,2048,OOM,OOM,OOM\n"
            "64,2048,32,2048,OOM,,\n")
        run(exe, ["check", "student.csv", "--out", "check"], t)
        ring = str(root / "docs" / "results" / "ring" / "h200x4-ring.json")
        for chart in ("ring-scaling", "ring-time"):
            run(exe, ["ring", "--results", ring, "--chart", chart, "--out", f"{chart}.csv"], t)

        problems, missing, files = [], {}, 0
        for f in sorted(t.rglob("*.csv")):
            if f.name == "student.csv":
                continue
            files += 1
            p, n = violations(f.read_text(), str(f.relative_to(t)))
            problems += p
            kind = kind_of(next(csv.reader(io.StringIO(f.read_text())), []))
            missing[kind] = missing.get(kind, 0) + n
        for kind in ("runs", "chart", "check"):
            if not missing.get(kind):
                problems.append(f"no {kind} CSV holds a row with a missing value: the test looks at nothing there")
        for p in problems:
            print(p)
        print(f"{files} CSV files read; rows with a missing value: " +
              ", ".join(f"{k} {v}" for k, v in sorted(missing.items(), key=lambda kv: str(kv[0]))))
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
