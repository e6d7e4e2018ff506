#!/usr/bin/env python3
"""Nsight Compute over the 16k-token grid: the Hopper rungs beside PyTorch's
SDPA cuDNN backend, point by point (scripts/ncu_grid.sh drives it).

  ncu_grid.py points                 the grid's problems, one per line (B H N d causal)
  ncu_grid.py cudnn fwd|bwd          run SDPA cuDNN on every point once, each run
                                     inside a profiler range and followed by a
                                     marker kernel (torch.cuda._sleep), so that
                                     `ncu --profile-from-start off` sees each
                                     point's kernels between two markers
  ncu_grid.py table OURS.csv CUDNN.csv fwd|bwd
                                     per point: both sides' kernel time (every
                                     kernel of the pass summed) and the longest
                                     kernel's counters side by side

The grid is assets/sweeps/perf.json's: 16384 tokens, hidden 2048, N 1024/4096/16384,
d 64/128, causal and not, fp16.
"""
import csv
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def grid():
    axes = json.load(open(os.path.join(HERE, "..", "assets", "sweeps", "perf.json")))["axes"]
    pts = []
    # flashlab bench's order: causal outermost, then the head dim, then N.
    for causal in axes["causal"]:
        for d in axes["head_dim"]:
            for n in axes["seq"]:
                pts.append({"B": axes["tokens"][0] // n, "H": axes["emb_dim"][0] // d, "N": n, "d": d,
                            "causal": causal})
    return pts


def key(p):
    return "N %5d d %3d %s" % (p["N"], p["d"], "causal" if p["causal"] else "full  ")


def run_cudnn(direction):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cudart = torch.cuda.cudart()
    for p in grid():
        b, h, n, d = p["B"], p["H"], p["N"], p["d"]
        g = torch.Generator(device="cuda").manual_seed(1)
        q, k, v, do = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(4))
        for t in (q, k, v):
            t.requires_grad_(direction == "bwd")

        def fwd():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=p["causal"])

        out = fwd()
        if direction == "bwd":
            def call():
                torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
        else:
            call = fwd
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        cudart.cudaProfilerStart()
        call()
        torch.cuda._sleep(1000)  # the marker: this point's kernels end here
        torch.cuda.synchronize()
        cudart.cudaProfilerStop()
        print("cudnn %s %s: profiled" % (direction, key(p)), file=sys.stderr)
        del q, k, v, do, out
        torch.cuda.empty_cache()


METRICS = [  # (column, metric, how it reads)
    # The tensor pipe: on GH100 this ncu counts wgmma under the hmma pipe (the gmma name reads n/a).
    # sm__pipe_shared_cycles_active is the pipe the FP16 and tensor units share, not shared
    # memory: on these kernels it reads the same as the tensor pipe, so it is not a column.
    ("tensor %", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "{:.1f}"),
    ("issue %", "sm__issue_active.avg.pct_of_peak_sustained_active", "{:.1f}"),
    ("XU %", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "{:.1f}"),
    ("DRAM %", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "{:.1f}"),
    ("occ %", "sm__warps_active.avg.pct_of_peak_sustained_active", "{:.1f}"),
    ("regs", "launch__registers_per_thread", "{:.0f}"),
    ("CTAs", "launch__grid_size", "{:.0f}"),
    ("waves", "launch__waves_per_multiprocessor", "{:.2f}"),
]
STALLS = ["long_scoreboard", "barrier", "wait", "math_pipe_throttle", "mio_throttle", "short_scoreboard",
          "membar", "lg_throttle", "dispatch_stall", "not_selected", "branch_resolving", "sleeping"]


def read_raw(path):
    """ncu --page raw --csv: a header of metric names, a row of units, a row per kernel."""
    lines = [l for l in open(path) if l.startswith('"')]
    rows = list(csv.reader(lines))
    if not rows:
        return []
    head = rows[0]
    out = []
    for r in rows[1:]:
        if len(r) != len(head) or r[0] == "" or r[0] == "ID" or not r[0].isdigit():
            continue
        out.append(dict(zip(head, r)))
    return out


def num(r, m):
    v = r.get(m, "")
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return math.nan


def duration_us(r):
    # gpu__time_duration.sum in the unit of the units row; normalised on read by --print-units base.
    return num(r, "gpu__time_duration.sum") / 1e3  # ns -> us


def groups_of(kernels, marker):
    """The kernels between marker kernels, in order (cuDNN), or one group per
    launch of the rung's main kernel with the small kernels around it (ours)."""
    out, cur = [], []
    for k in kernels:
        if marker(k):
            out.append(cur)
            cur = []
        else:
            cur.append(k)
    if cur:
        out.append(cur)
    return out


def ours_groups(kernels, first):
    """One group per point: a group starts at the pass's first kernel (the
    backward's pre-pass, the forward's only kernel)."""
    out = []
    for k in kernels:
        if first in k["Kernel Name"] or not out:
            out.append([])
        out[-1].append(k)
    return out


def stall_text(r):
    vals = []
    for s in STALLS:
        m = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio" % s
        v = num(r, m)
        if not math.isnan(v):
            vals.append((v, s))
    vals.sort(reverse=True)
    return ", ".join("%s %.2f" % (s, v) for v, s in vals[:3])


def table(ours_csv, cudnn_csv, direction):
    pts = grid()
    ours = ours_groups(read_raw(ours_csv), "fa_bwd_preprocess" if direction == "bwd" else "fa3_hopper_forward")
    theirs = groups_of(read_raw(cudnn_csv), lambda k: "spin" in k["Kernel Name"].lower() or "sleep" in k["Kernel Name"].lower())
    theirs = [g for g in theirs if g]
    print("Nsight Compute (--clock-control none), one launch per point, %s; %d points, %d groups of ours, %d of cuDNN"
          % (direction, len(pts), len(ours), len(theirs)))
    print("time: every kernel of the pass summed (us); the counters: the pass's longest kernel; stalls: warps stalled "
          "per issued instruction, the three largest")
    cols = ["point", "side", "kernels", "time us"] + [c for c, _, _ in METRICS] + ["SM busy %", "L2 red GB", "stalls"]
    print(" | ".join(cols))
    for i, p in enumerate(pts):
        for side, groups in (("ours", ours), ("cuDNN", theirs)):
            if i >= len(groups):
                print("%s | %s | - | missing" % (key(p), side))
                continue
            g = groups[i]
            total = sum(duration_us(k) for k in g)
            longest = max(g, key=duration_us)
            cells = [key(p), side, str(len(g)), "%.1f" % total]
            for _, m, f in METRICS:
                v = num(longest, m)
                cells.append("-" if math.isnan(v) else f.format(v))
            # SM busy: cycles an SM was active over the kernel's elapsed cycles (the tail, the waves).
            busy = num(longest, "sm__cycles_active.avg") / num(longest, "sm__cycles_elapsed.avg") * 100
            cells.append("-" if math.isnan(busy) else "%.1f" % busy)
            # Reductions into L2 (red.global: dQ's fp32 additions), 32-byte sectors, every kernel of the pass.
            red = sum(num(k, "lts__t_sectors_op_red.sum") for k in g) * 32 / 1e9
            cells.append("-" if math.isnan(red) else "%.2f" % red)
            cells.append(stall_text(longest))
            print(" | ".join(cells))
        print("%s | ours/cuDNN time | %.2f" % (key(p), (sum(duration_us(k) for k in ours[i]) /
                                                      max(1e-9, sum(duration_us(k) for k in theirs[i])))
                                             if i < len(ours) and i < len(theirs) else math.nan))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "points":
        for p in grid():
            print(p["B"], p["H"], p["N"], p["d"], "yes" if p["causal"] else "no")
    elif len(sys.argv) == 3 and sys.argv[1] == "cudnn" and sys.argv[2] in ("fwd", "bwd"):
        run_cudnn(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
