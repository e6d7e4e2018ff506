#!/usr/bin/env python3
"""PyTorch on the problems of a `flashlab bench` run, in the same command, and
one merged table with the ratios of the performance goals (forward:
naive_cublas >= 0.9x eager PyTorch, naive >= 0.3x eager, fa2_tc >= 0.7x SDPA
FLASH, fa3_hopper >= 1.0x SDPA cuDNN and >= 1.4x fa2_tc; backward: naive_bwd >= 0.9x eager's backward, fa2_tc_bwd >= 0.6x SDPA
FLASH's backward, fa3_hopper_bwd >= 1.0x SDPA cuDNN's backward and >= 1.4x fa2_tc_bwd).

    flashlab bench --sweep perf --json bench.json
    python3 scripts/torch_compare.py --ours bench.json --json torch.json --table compare.txt

The problems come from the rows of bench.json (so both sides run exactly the
same grid); for each one this script times

  torch_eager  matmul, scale, [causal masked_fill], softmax, matmul — what a lab
               report's "PyTorch implementation" does; S and P in HBM
  sdpa_flash   F.scaled_dot_product_attention with SDPBackend.FLASH_ATTENTION
  sdpa_cudnn   F.scaled_dot_product_attention with SDPBackend.CUDNN_ATTENTION

the way flashlab times its kernels: inputs N(0, 1) in [B, H, N, d], warm-up,
then repeats with CUDA events, each after a write of 2x the L2 size (unless
--no-l2-flush), median/min/max; TFLOP/s by the same convention
(4*B*H*N_q*N_kv*d, halved when causal).

It checks them as flashlab bench checks its rungs (--check sampled): before
every run the output is poisoned with NaN — PyTorch allocates each output
itself, so a NaN block of the output's size is freed just before the call
and the caching allocator hands that block to the output (the script prints
in how many runs the output's address shows it did); an output with a NaN or inf after the checked run or the timed
ones fails the row; and the checked run is compared against an fp64
reference on the heads and rows flashlab bench's plan picks within 2 GFLOP
of reference per case (all of them for a small case), a relative error over
2e-2 (fp16, bf16) or 1e-4 (fp32) failing the row.

Rows of direction "bwd" in bench.json get the same three timed backward: the
forward once with requires_grad, then torch.autograd.grad(o, (q, k, v), do,
retain_graph=True) timed alone after the flush (dO is N(0, 1)); models
"pytorch_bwd" (eager autograd: P, dP, dS in HBM) and "fa2_bwd" (SDPA). The
backward's TFLOP/s are by the backward convention, 2.5x the forward's FLOPs
(two GEMMs forward, five backward), for our rows too: the merged table
recomputes every backward rate from its median time, so ratios are ratios of
times whatever a results file's own rate column assumed. Peak memory is what PyTorch's caching
allocator saw (torch.cuda.max_memory_allocated, inputs included), not
cudaMemGetInfo as flashlab measures. Out of memory is a row, not a crash; a
value nobody measured (the time of an OOM row) is null, never 0.

The metadata records PyTorch's version, the CUDA it was built with and
cuDNN's version (torch_version, torch_cuda, cudnn_version) and, in `method`,
how the rows were taken and checked.

Writes the torch rows in flashlab's bench format (flashlab-bench/1, JSON), so
`flashlab` and the GUI read them beside our kernels; each row names its model,
the simulator algorithm with the kernel's HBM traffic (eager: "pytorch", S and P
in HBM one op at a time; SDPA's FlashAttention-2 and cuDNN kernels: "fa2"), so
the rooflines place it. Needs only torch.
"""
import argparse
import datetime
import json
import math
import socket
import statistics
import sys

import torch
import torch.nn.functional as F

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:  # torch < 2.3
    SDPBackend = None
    sdpa_kernel = None

FORMAT = "flashlab-bench/1"
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
TORCH_KERNELS = ["torch_eager", "sdpa_flash", "sdpa_cudnn"]
# The simulator algorithm whose HBM traffic each kernel has (the "model" of a row).
MODELS = {"fwd": {"torch_eager": "pytorch", "sdpa_flash": "fa2", "sdpa_cudnn": "fa2"},
          "bwd": {"torch_eager": "pytorch_bwd", "sdpa_flash": "fa2_bwd", "sdpa_cudnn": "fa2_bwd"}}

# The performance goals: (direction, ours, theirs, at least)
GOALS = [("fwd", "naive_cublas", "torch_eager", 0.9), ("fwd", "naive", "torch_eager", 0.3),
         ("fwd", "fa2_tc", "sdpa_flash", 0.7),
         ("fwd", "fa3_hopper", "sdpa_cudnn", 1.0), ("fwd", "fa3_hopper", "fa2_tc", 1.4),
         ("bwd", "naive_bwd", "torch_eager", 0.9), ("bwd", "fa2_tc_bwd", "sdpa_flash", 0.6),
         ("bwd", "fa3_hopper_bwd", "sdpa_cudnn", 1.0), ("bwd", "fa3_hopper_bwd", "fa2_tc_bwd", 1.4)]
# Printed beside the goals, with no bound: the fastest library kernel.
ASIDE = {"fwd": ("fa2_tc", "sdpa_cudnn"), "bwd": ("fa2_tc_bwd", "sdpa_cudnn")}


def convention_flops(p, direction="fwd"):
    """4*B*H*N_q*N_kv*d, halved when causal; the backward 2.5x that (5 GEMMs to 2)."""
    f = 4 * p["batch"] * p["heads"] * p["seq_q"] * p["seq_kv"] * p["head_dim"]
    f = f // 2 if p["causal"] else f
    return f * 5 // 2 if direction == "bwd" else f


def direction_of(row):
    return row.get("direction", "fwd") or "fwd"


def problem_key(row):
    return (row["batch"], row["heads"], row["seq_q"], row["seq_kv"], row["head_dim"], row["causal"], row["dtype"])


def problem_of(key):
    b, h, nq, nkv, d, causal, dtype = key
    return {"batch": b, "heads": h, "seq_q": nq, "seq_kv": nkv, "head_dim": d, "causal": causal, "dtype": dtype}


def eager(q, k, v, causal, scale, mask):
    s = torch.matmul(q, k.transpose(-2, -1))
    s = s * scale
    if causal:
        s = s.masked_fill(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, v)


def sdpa(backend):
    def run(q, k, v, causal, scale, mask):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    return run


# What a row holds until it is measured: null (missing), never 0.
MEASURED = ("time_ms_median", "time_ms_min", "time_ms_max", "repeats", "tflops", "peak_memory_bytes", "rel_error")


def empty_row(kernel, p, direction="fwd"):
    row = {"kernel": kernel, "model": MODELS[direction][kernel], "direction": direction, "batch": p["batch"],
           "heads": p["heads"],
           "seq_q": p["seq_q"], "seq_kv": p["seq_kv"], "head_dim": p["head_dim"], "causal": p["causal"], "dtype": p["dtype"],
           "br": None, "bc": None, "status": "ok", "reason": "",  # PyTorch has no tiles of ours
           # Not computed here: flashlab derives them from the model where it places a row.
           "tflops_exact": None, "gbps": None, "predicted_memory_bytes": None,
           "mem_limit_bytes": p.get("mem_limit_bytes", 0) or None}
    for k in MEASURED:
        row[k] = None
    return row


# flashlab bench's check (kernels/src/runner/reference.cpp): the same heads
# and rows within the same budget of fp64 FLOPs per case, the same bounds.
CHECK_FLOP_BUDGET = 2e9


def error_bound(dtype):
    return 1e-4 if dtype == "fp32" else 2e-2


def spread(n, count, extra=()):
    """`count` indices spread evenly over [0, n), first and last included, plus `extra`; sorted, unique."""
    if count >= n:
        return list(range(n))
    v = set(extra)
    v.update(0 if count == 1 else i * (n - 1) // (count - 1) for i in range(count))
    return sorted(x for x in v if 0 <= x < n)


def plan_check(p, budget):
    """(flat heads b*H + h, rows): plan_check of reference.cpp."""
    n_heads, n = p["batch"] * p["heads"], p["seq_q"]
    per_row = 4.0 * p["seq_kv"] * p["head_dim"]
    per_head = per_row * n
    if per_head * n_heads <= budget:
        return list(range(n_heads)), list(range(n))
    if per_head * 2 <= budget:
        return spread(n_heads, max(2, int(budget / per_head))), list(range(n))
    extra = [0, 1, n - 2, n - 1]
    for b in (64, 128):
        last = (n - 1) // b * b
        extra += [last, last - 1]
    return spread(n_heads, 2), spread(n, max(8, int(budget / (2 * per_row))), extra)


def plan_check_backward(p, budget):
    """(heads, rows, keys): plan_check_backward of reference.cpp for H_kv = H."""
    per_head = 12.0 * p["seq_q"] * p["seq_kv"] * p["head_dim"]
    if per_head * 2 <= budget or per_head * p["batch"] * p["heads"] <= budget:
        heads, rows = plan_check(p, budget * 4.0 / 12.0)
        return heads, rows, True
    heads, rows = plan_check(p, budget * 4.0 / 10.0)
    return heads, rows, False


def causal_mask(rows, n_kv, device):
    """Key j is hidden from query row r when j > r (PyTorch's is_causal, top-left aligned)."""
    r = torch.as_tensor(rows, device=device).unsqueeze(1)
    return torch.arange(n_kv, device=device).unsqueeze(0) > r


def rel_error_fwd(out, q, k, v, causal, scale, p):
    """Relative Frobenius error against fp64 over the heads and rows of flashlab's plan (on the GPU)."""
    heads, rows = plan_check(p, CHECK_FLOP_BUDGET)
    H = p["heads"]
    idx = torch.as_tensor(rows, device=q.device)
    diff2 = ref2 = 0.0
    for flat in heads:
        b, h = divmod(flat, H)
        q0, k0, v0 = (t[b, h].double() for t in (q, k, v))
        s = (q0[idx] @ k0.T) * scale
        if causal:
            s = s.masked_fill(causal_mask(rows, k0.shape[0], s.device), float("-inf"))
        ref = torch.softmax(s, dim=-1) @ v0
        got = out[b, h].double()[idx]
        diff2 += float(((got - ref) ** 2).sum())
        ref2 += float((ref ** 2).sum())
    return math.sqrt(diff2 / ref2) if ref2 > 0 else (0.0 if diff2 == 0 else math.inf)


def rel_error_bwd(grads, q, k, v, do, causal, scale, p):
    """The worst relative Frobenius error of dQ (plan rows) and, when whole heads fit, dK and dV against fp64."""
    heads, rows, keys = plan_check_backward(p, CHECK_FLOP_BUDGET)
    H = p["heads"]
    idx = torch.as_tensor(rows, device=q.device)
    sums = {"dq": [0.0, 0.0], "dk": [0.0, 0.0], "dv": [0.0, 0.0]}

    def add(name, got, ref):
        sums[name][0] += float(((got - ref) ** 2).sum())
        sums[name][1] += float((ref ** 2).sum())

    for flat in heads:
        b, h = divmod(flat, H)
        q0, k0, v0, g0 = (t[b, h].detach().double() for t in (q, k, v, do))
        if keys:
            q0, k0, v0 = (t.requires_grad_(True) for t in (q0, k0, v0))
            s = (q0 @ k0.T) * scale
            if causal:
                s = s.masked_fill(causal_mask(list(range(q0.shape[0])), k0.shape[0], s.device), float("-inf"))
            o = torch.softmax(s, dim=-1) @ v0
            rq, rk, rv = torch.autograd.grad(o, (q0, k0, v0), g0)
            add("dq", grads[0][b, h].double()[idx], rq[idx])
            add("dk", grads[1][b, h].double(), rk)
            add("dv", grads[2][b, h].double(), rv)
        else:
            # dQ rows alone: dS = P (dP - rowsum(dO * O)), dQ = dS K scale, from the rows' own P.
            s = (q0[idx] @ k0.T) * scale
            if causal:
                s = s.masked_fill(causal_mask(rows, k0.shape[0], s.device), float("-inf"))
            pr = torch.softmax(s, dim=-1)
            o = pr @ v0
            dp = g0[idx] @ v0.T
            ds = pr * (dp - (g0[idx] * o).sum(dim=-1, keepdim=True))
            add("dq", grads[0][b, h].double()[idx], (ds @ k0) * scale)

    def rel(name):
        d2, r2 = sums[name]
        return math.sqrt(d2 / r2) if r2 > 0 else (0.0 if d2 == 0 else math.inf)

    return max(rel("dq"), rel("dk"), rel("dv")) if keys else rel("dq")


class Poison:
    """NaN in the block the next output of `shape` gets: the caching allocator
    hands a freed block of the same size to the next allocation of that size.
    `hit` counts the runs where the output's address shows it got that block."""

    def __init__(self):
        self.runs = 0
        self.hit = 0

    def before(self, shapes, dtype):
        blocks = [torch.full(shape, float("nan"), dtype=dtype, device="cuda") for shape in shapes]
        ptrs = [b.data_ptr() for b in blocks]
        del blocks  # freed together: each output takes one of them
        return ptrs

    def after(self, ptrs, outs):
        self.runs += 1
        self.hit += int(sorted(ptrs) == sorted(o.data_ptr() for o in outs))


POISON = Poison()


def finite(*ts):
    return all(bool(torch.isfinite(t).all()) for t in ts)


def failed(row, why):
    row["status"], row["reason"] = "failed", why
    for k in MEASURED:
        if k != "peak_memory_bytes" and k != "rel_error":
            row[k] = None
    return row


def timed(run, shapes, dtype, args, flush):
    """Warm-up runs, then args.repeats runs, each after the L2 flush with its
    outputs poisoned, timed by CUDA events: the times (ms) and the last run's
    outputs."""
    for _ in range(max(1, args.warmup)):
        if flush is not None:
            flush.zero_()
        run()
    torch.cuda.synchronize()
    times = []
    outs = None
    for _ in range(args.repeats):
        if flush is not None:
            flush.zero_()
        ptrs = POISON.before(shapes, dtype)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        outs = run()
        stop.record()
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        POISON.after(ptrs, outs)
        times.append((start, stop))
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in times], outs


def record_times(row, ms, flops):
    row["time_ms_median"], row["time_ms_min"], row["time_ms_max"] = statistics.median(ms), min(ms), max(ms)
    row["repeats"] = len(ms)
    row["tflops"] = flops / (row["time_ms_median"] * 1e-3) / 1e12


def refused(row, e):
    """A case torch did not run: out of memory (OOM), or a backend that cannot
    run it (head dim, dtype, GPU: skipped); the error's first line is the reason."""
    if isinstance(e, torch.cuda.OutOfMemoryError):
        first = str(e).splitlines()[0] if str(e) else "CUDA out of memory"
        row["status"], row["reason"] = "OOM", "torch: " + first
    else:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        row["status"], row["reason"] = "skipped", "torch: " + first[:300]
    row["peak_memory_bytes"] = row["rel_error"] = None


def draw_inputs(p, args, dtype, grad=False):
    """Q, K, V drawn N(0, 1) from args.seed (requiring gradients for a backward),
    the causal mask (None when not causal) and the generator, for the draws after."""
    b, h, nq, nkv, d = p["batch"], p["heads"], p["seq_q"], p["seq_kv"], p["head_dim"]
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=gen).requires_grad_(grad)
               for n in (nq, nkv, nkv))
    mask = torch.ones(nq, nkv, dtype=torch.bool, device="cuda").triu(1) if p["causal"] else None
    return q, k, v, mask, gen


def measure(kernel, fn, p, args, flush, direction="fwd"):
    if direction == "bwd":
        return measure_backward(kernel, fn, p, args, flush)
    row = empty_row(kernel, p)
    dtype = DTYPES[p["dtype"]]
    b, h, nq, nkv, d = p["batch"], p["heads"], p["seq_q"], p["seq_kv"], p["head_dim"]
    scale = 1.0 / math.sqrt(d)
    q = k = v = mask = out = None
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    try:
        torch.cuda.reset_peak_memory_stats()
        q, k, v, mask, _ = draw_inputs(p, args, dtype)
        o_shape = (b, h, nq, d)
        ptrs = POISON.before([o_shape], dtype)
        out = fn(q, k, v, p["causal"], scale, mask)
        POISON.after(ptrs, [out])
        torch.cuda.synchronize()
        row["peak_memory_bytes"] = int(torch.cuda.max_memory_allocated() - base)
        if not finite(out):
            return failed(row, "output has NaN or inf (unwritten elements stay NaN)")
        row["rel_error"] = rel_error_fwd(out, q, k, v, p["causal"], scale, p)
        if not row["rel_error"] <= error_bound(p["dtype"]):
            return failed(row, f"wrong result: relative error {row['rel_error']:.2e} vs fp64 is above "
                               f"{error_bound(p['dtype']):.0e}")
        out = None
        ms, out = timed(lambda: fn(q, k, v, p["causal"], scale, mask), [o_shape], dtype, args, flush)
        if not finite(*out):
            return failed(row, "a timed run's output has NaN or inf")
        record_times(row, ms, convention_flops(p))
    except RuntimeError as e:  # torch.cuda.OutOfMemoryError included
        refused(row, e)
    finally:
        q = k = v = mask = out = None
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return row


def measure_backward(kernel, fn, p, args, flush):
    """The backward alone: the forward once with requires_grad, then
    torch.autograd.grad(o, (q, k, v), do, retain_graph=True) timed after each flush."""
    row = empty_row(kernel, p, "bwd")
    dtype = DTYPES[p["dtype"]]
    b, h, nq, nkv, d = p["batch"], p["heads"], p["seq_q"], p["seq_kv"], p["head_dim"]
    scale = 1.0 / math.sqrt(d)
    q = k = v = do = mask = out = grads = None
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    try:
        torch.cuda.reset_peak_memory_stats()
        q, k, v, mask, gen = draw_inputs(p, args, dtype, grad=True)
        do = torch.randn(b, h, nq, d, device="cuda", dtype=dtype, generator=gen)
        out = fn(q, k, v, p["causal"], scale, mask)
        shapes = [(b, h, nq, d), (b, h, nkv, d), (b, h, nkv, d)]
        ptrs = POISON.before(shapes, dtype)
        grads = torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
        POISON.after(ptrs, grads)
        torch.cuda.synchronize()
        row["peak_memory_bytes"] = int(torch.cuda.max_memory_allocated() - base)
        if not finite(*grads):
            return failed(row, "a gradient has NaN or inf (unwritten elements stay NaN)")
        row["rel_error"] = rel_error_bwd(grads, q, k, v, do, p["causal"], scale, p)
        if not row["rel_error"] <= error_bound(p["dtype"]):
            return failed(row, f"wrong result: relative error {row['rel_error']:.2e} vs fp64 is above "
                               f"{error_bound(p['dtype']):.0e}")
        grads = None
        ms, grads = timed(lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True), shapes, dtype, args,
                          flush)
        if not finite(*grads):
            return failed(row, "a timed run's gradient has NaN or inf")
        record_times(row, ms, convention_flops(p, "bwd"))
    except RuntimeError as e:  # torch.cuda.OutOfMemoryError included
        refused(row, e)
    finally:
        q = k = v = do = mask = out = grads = None
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return row


def fmt(x, digits=1):
    return "" if x is None else f"{x:.{digits}f}"


def rate(r, direction):
    """TFLOP/s of a row by the convention of its direction, from its median time."""
    if r is None or r["status"] != "ok" or not r["time_ms_median"] > 0:
        return None
    return convention_flops(r, direction) / (r["time_ms_median"] * 1e-3) / 1e12


def direction_table(ours, theirs, direction):
    """One line per problem of one direction: TFLOP/s of every kernel, then the ratios of the goals."""
    goals = [(a, b, g) for dr, a, b, g in GOALS if dr == direction]
    aside = ASIDE[direction]
    by_problem = {}
    order = []
    kernels = []
    for r in ours + theirs:
        if direction_of(r) != direction:
            continue
        key = problem_key(r)
        if key not in by_problem:
            by_problem[key] = {}
            order.append(key)
        by_problem[key][r["kernel"]] = r
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    if not order:
        return []
    header = ["B", "H", "N", "d", "causal", "dtype"] + kernels + [f"{a}/{b}" for a, b, _ in goals] + \
             [f"{aside[0]}/{aside[1]}"]
    lines = []
    verdicts = []
    for key in order:
        rows = by_problem[key]
        p = problem_of(key)

        def tf(k):
            return rate(rows.get(k), direction)

        def cell(k):
            r = rows.get(k)
            if r is None:
                return "-"
            return fmt(tf(k)) if tf(k) is not None else r["status"]

        cells = [str(p["batch"]), str(p["heads"]), str(p["seq_q"]) + ("" if p["seq_kv"] == p["seq_q"] else f"/{p['seq_kv']}"),
                 str(p["head_dim"]), "yes" if p["causal"] else "no", p["dtype"]] + [cell(k) for k in kernels]
        for a, b, goal in goals + [(aside[0], aside[1], None)]:
            ta, tb = tf(a), tf(b)
            if ta is None or tb is None:
                cells.append("-")
                continue
            ratio = ta / tb
            mark = "" if goal is None else (" ok" if ratio >= goal else " LOW")
            cells.append(f"{ratio:.2f}{mark}")
            if goal is not None:
                verdicts.append((a, b, goal, ratio, p))
        lines.append(cells)
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(header)]
    title = "forward" if direction == "fwd" else "backward"
    conv = ("4*B*H*N_q*N_kv*d (halved when causal)" if direction == "fwd"
            else "2.5 x 4*B*H*N_q*N_kv*d (halved when causal), from each row's median time")
    out = [f"== {title}", "  ".join(h.rjust(w) for h, w in zip(header, widths)),
           "-" * (sum(widths) + 2 * (len(widths) - 1))]
    out += ["  ".join(c.rjust(w) for c, w in zip(l, widths)) for l in lines]
    out.append("")
    out.append(f"TFLOP/s by the convention {conv}; ratios are TFLOP/s ours / theirs "
               "(= their time / ours). Goals: " + ", ".join(f"{a} >= {g}x {b}" for a, b, g in goals) + ".")
    for a, b, goal in goals:
        rs = [v for v in verdicts if v[0] == a and v[1] == b]
        if not rs:
            out.append(f"  {a} vs {b}: no pair measured")
            continue
        low = [v for v in rs if v[3] < goal]
        worst = min(rs, key=lambda v: v[3])
        out.append(f"  {a} vs {b}: {len(rs) - len(low)}/{len(rs)} points meet {goal}x; worst {worst[3]:.2f}x at "
                   f"B={worst[4]['batch']} H={worst[4]['heads']} N={worst[4]['seq_q']} d={worst[4]['head_dim']} "
                   f"causal={'yes' if worst[4]['causal'] else 'no'}")
    out.append("")
    return out


def table_header(ours_meta, theirs_meta):
    """The table's first line: the GPU, our build, the PyTorch that ran, the L2's state."""
    return (f"GPU {theirs_meta.get('gpu', '?')}; flashlab commit {ours_meta.get('commit', '?')}; "
            f"torch {theirs_meta.get('torch_version', '?')} (CUDA {theirs_meta.get('torch_cuda', '?')}); "
            f"L2 {'flushed' if theirs_meta.get('l2_flush') else 'warm'}")


def merged_table(ours, theirs):
    """One table per direction present: TFLOP/s of every kernel, then the ratios of the goals."""
    out = []
    for direction in ("fwd", "bwd"):
        out += direction_table(ours, theirs, direction)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", required=True, help="the JSON of a flashlab bench run (its problems are re-run here)")
    ap.add_argument("--json", help="write the torch rows here (flashlab-bench/1)")
    ap.add_argument("--table", help="write the merged table here too")
    ap.add_argument("--kernels", default=",".join(TORCH_KERNELS), help="comma list of " + ", ".join(TORCH_KERNELS))
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-l2-flush", action="store_true")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    if args.repeats < 10:
        sys.exit("torch_compare.py: error: --repeats: at least 10")
    if not torch.cuda.is_available():
        sys.exit("torch_compare.py: error: no CUDA device visible to torch")

    with open(args.ours) as f:
        ours_doc = json.load(f)
    if ours_doc.get("format") != FORMAT:
        sys.exit(f"torch_compare.py: error: {args.ours}: not a {FORMAT} file")
    ours = [r for r in ours_doc["rows"] if direction_of(r) in ("fwd", "bwd")]
    keys = []  # (direction, problem, allocation limit), in the order of the file
    for r in ours:
        key = (direction_of(r), problem_key(r), int(r.get("mem_limit_bytes", 0) or 0))
        if key not in keys:
            keys.append(key)

    fns = {"torch_eager": eager}
    if sdpa_kernel is not None:
        fns["sdpa_flash"] = sdpa(SDPBackend.FLASH_ATTENTION)
        fns["sdpa_cudnn"] = sdpa(SDPBackend.CUDNN_ATTENTION)
    wanted = [k for k in args.kernels.split(",") if k]
    for k in wanted:
        if k not in TORCH_KERNELS:
            sys.exit(f"torch_compare.py: error: --kernels: unknown '{k}' (known: {', '.join(TORCH_KERNELS)})")

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
    flush = None if args.no_l2_flush else torch.empty(2 * l2 // 4 + 1, dtype=torch.float32, device="cuda")

    theirs = []
    total = len(keys) * len(wanted)
    total_memory = props.total_memory
    for direction, key, limit in keys:
        p = problem_of(key)
        p["mem_limit_bytes"] = limit
        # A smaller GPU emulated as flashlab bench does (a sweep's mem_limit): the
        # caching allocator refuses to grow past the limit, the flush buffer included.
        torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total_memory) if limit > 0 else 1.0)
        for k in wanted:
            if k not in fns:
                row = empty_row(k, p, direction)
                row["status"], row["reason"] = "skipped", "torch has no torch.nn.attention.sdpa_kernel (torch < 2.3)"
            else:
                row = measure(k, fns[k], p, args, flush, direction)
            theirs.append(row)
            done = len(theirs)
            msg = f"{row['time_ms_median']:.4f} ms, {row['tflops']:.1f} TFLOP/s" if row["status"] == "ok" else row["reason"]
            print(f"[{done}/{total}] {k} {direction} B={p['batch']} H={p['heads']} N={p['seq_q']} d={p['head_dim']} "
                  f"{p['dtype']}{' causal' if p['causal'] else ''}: {row['status']} {msg}", file=sys.stderr)
    torch.cuda.set_per_process_memory_fraction(1.0)
    print(f"poisoned outputs: {POISON.hit} of {POISON.runs} runs took the freed NaN block (by address)", file=sys.stderr)

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    method = (f"PyTorch's rows (scripts/torch_compare.py): the median of --repeats {args.repeats} timed runs after "
              f"--warmup {args.warmup}, CUDA events, " +
              ("the L2 flushed before each; " if flush is not None else "no L2 flush; ") +
              "each output poisoned with NaN before the run through the caching allocator (a freed NaN block of the "
              "output's size, which the output takes: the script prints in how many runs its address showed it did); "
              "a NaN or inf after the checked or the timed runs fails the row; the checked run against fp64 "
              "on the heads and rows flashlab bench's sampled check picks (2 GFLOP of reference per case), "
              "failing above 2e-2 (fp16, bf16) or 1e-4 (fp32)")
    meta = {"gpu": torch.cuda.get_device_name(0), "driver": "", "cuda_runtime": str(torch.version.cuda),
            "commit": ours_doc.get("meta", {}).get("commit", ""),
            "flop_convention": ours_doc.get("meta", {}).get("flop_convention", ""),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "host": socket.gethostname(), "sm_count": props.multi_processor_count, "sm_clock_mhz": 0,
            "mem_clock_mhz": 0, "l2_flush": flush is not None,
            "torch_version": torch.__version__, "torch_cuda": str(torch.version.cuda),
            "cudnn_version": str(cudnn) if cudnn is not None else "none", "method": method}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"format": FORMAT, "meta": meta, "rows": theirs}, f, indent=2)
            f.write("\n")
    table = merged_table(ours, theirs)
    header = table_header(ours_doc.get("meta", {}), meta) + "\n"
    if args.table:
        with open(args.table, "w") as f:
            f.write(header + table)
    sys.stdout.write(header + table)


if __name__ == "__main__":
    main()
