"""Coaching tasks on a GPU: naive and expert kernels against the library, in one process.

    python bench/kernels.py [--tasks reduce_sum,softmax] [--runs 30] [--json out.json] [--no-flex]

For each task, on its largest GPU shape: median device time from CUDA events (tutor/engine/process/gpu_timing.py: warm-up
excluded, L2 flushed before every run, Python's enqueue hidden behind a hold and reported beside)
of the naive and the expert `launch`, and of the library call (torch:
sum, softmax, layer_norm, matmul with TF32 off); achieved GB/s (bytes the maths must move: inputs
read once, output written once) or TFLOP/s for matmul; the device-to-device copy bandwidth measured
in the same run as the ceiling (a 1 GiB copy), and beside it a copy moving the same bytes as the
task, timed as the kernels are: at 64 MB a launch and the ramp-up are a visible share of the time. Every timed output is checked against the float64 reference first.

Every attention variant is also timed against FlexAttention (torch.nn.attention.flex_attention,
compiled once, fp32 with TF32 off like everything here): its block mask (causal; causal within a
document; causal for ALiBi, whose bias is a score_mod) is built before the timed calls, as a model
built with it would reuse it, so only the attention itself is timed. SDPA stays the "torch" column.
The targets printed are the issue's ("Expert kernels that beat the libraries"): attention at least
10% faster than FlexAttention on causal, document and ALiBi, and faster on plain attention; the
memory-bound tasks at 85% or more of the copy bandwidth measured in the same run; matmul at 75% or
more of cuBLAS's fp32 rate.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from expert_sweep import checked_timing, device_name, work_of  # noqa: E402
from tutor.coach.tasks import load_task  # noqa: E402
from tutor.engine.process.gpu_timing import Timer  # noqa: E402
from tutor.engine.gpu import import_cuda  # noqa: E402

TASKS = ("reduce_sum", "softmax", "layernorm", "matmul", "attention", "attention_causal", "attention_document",
         "attention_alibi")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", default=None)
    parser.add_argument("--no-flex", action="store_true", help="leave FlexAttention out (no torch.compile)")
    args = parser.parse_args()
    cuda = import_cuda()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    timer = Timer(cuda)
    copy_gbs = _copy_moving(torch, timer, 2 << 30, args.runs)  # 1 GiB read, 1 GiB written
    name = device_name(cuda)
    print(f"device: {name}; torch {torch.__version__}; device-to-device copy: {copy_gbs:.0f} GB/s "
          "(read + write, measured now)")
    print(f"{'task':<11} {'shape':<20} {'naive ms':>9} {'expert ms':>9} {'torch ms':>9} "
          f"{'expert':>14} {'torch':>14} {'expert/torch':>12} {'x naive':>8} {'enqueue ms e/t':>15}")
    rows = []
    for task_name in args.tasks.split(","):
        task = load_task(task_name)
        shape = task.largest_shape("gpu")
        inputs_mod = task.module("inputs")
        rng = np.random.default_rng(0)
        inputs = tuple(np.ascontiguousarray(x) for x in inputs_mod.make_inputs(rng, shape))
        for label, layout in _layouts(task_name, inputs):
            rows.append(_time_task(cuda, timer, torch, task, shape, layout, label, copy_gbs, args))
    for row in rows:
        if "expert_of_copy_bandwidth" in row:
            share = row["expert_of_copy_bandwidth"]
            print(f"{row['task']}: expert at {100 * share:.0f}% of the copy bandwidth "
                  f"(target >= 85%: {'met' if share >= 0.85 else 'missed'}); "
                  f"{100 * row['expert_of_copy_same_bytes']:.0f}% of a copy moving the same bytes "
                  f"({row['copy_same_bytes_GBps']:.0f} GB/s), torch at "
                  f"{100 * row['GB/s']['torch'] / row['copy_same_bytes_GBps']:.0f}% of it")
        elif row["task"] == "matmul":
            share = row["expert_over_torch"]
            print(f"{row['task']}: expert at {100 * share:.0f}% of cuBLAS fp32 (TF32 off) "
                  f"(target >= 75%: {'met' if share >= 0.75 else 'missed'})")
        else:
            line = (f"{row['task']}{' (' + row['layout'] + ')' if row['layout'] else ''}: expert "
                    f"{row['ms']['expert'] / row['ms']['torch']:.2f}x SDPA's time")
            if "expert_over_flex" in row:
                need = 1.0 if row["task"] == "attention" else 1.1
                faster = row["expert_over_flex"]
                line += (f"; {faster:.2f}x FlexAttention's speed (target >= {need:.1f}x: "
                         f"{'met' if faster >= need else 'missed'})")
            print(line)
    ragged = _ragged_matmul(cuda, timer, torch, args.runs) if "matmul" in args.tasks.split(",") else []
    if args.json:
        Path(args.json).write_text(json.dumps({"device": name, "copy_GBps": copy_gbs, "rows": rows,
                                               "matmul_ragged": ragged}, indent=1))


def _time_task(cuda, timer, torch, task, shape, inputs, label, copy_gbs, args) -> dict:
    """One row: the naive and expert kernels, SDPA or torch, and FlexAttention for attention, each
    checked against the float64 reference before it is timed."""
    task_name = task.name
    inputs_mod, reference = task.module("inputs"), task.module("reference")
    out_shape = tuple(inputs_mod.output_shape(shape))
    expected = reference.reference(*[x.astype(np.float64) for x in inputs])
    rtol, atol = task.tolerance
    times, enqueue = {}, {}
    for kind in ("naive", "expert"):
        try:
            timed = checked_timing(cuda, timer, task, task.source(kind), [(shape, inputs, out_shape, expected)],
                                   args.runs)
        except ValueError:
            raise SystemExit(f"{task_name} {kind}: wrong output, not timed") from None
        times[kind], enqueue[kind] = timed["ms"], timed["host_enqueue_ms"]
    t_in = [torch.from_numpy(x).cuda() for x in inputs]
    libraries = {"torch": _library(torch, task_name, t_in)}
    if task_name.startswith("attention") and not args.no_flex:
        libraries["flex"] = _flex(torch, task_name, t_in)
    for kind, call in libraries.items():  # each checked against the reference before it is timed
        got = call().cpu().numpy().reshape(out_shape)
        if not np.allclose(got, expected, rtol=rtol, atol=atol):
            raise SystemExit(f"{task_name} {kind}: wrong output")
        timed = timer.time(call, args.runs)
        times[kind], enqueue[kind] = timed["ms"], timed["host_enqueue_ms"]
    work, unit = work_of(task_name, shape, inputs, out_shape)
    rate = {k: work / (v / 1000) for k, v in times.items()}
    row = {"task": task_name, "layout": label, "shape": list(shape), "ms": times, "host_enqueue_ms": enqueue,
           unit: rate, "expert_over_torch": rate["expert"] / rate["torch"],
           "expert_over_naive": times["naive"] / times["expert"]}
    if unit == "GB/s":
        row["expert_of_copy_bandwidth"] = rate["expert"] / copy_gbs
        # the ceiling at this size: a copy that moves the same bytes (half read, half written),
        # timed as the kernels are (L2 flushed, launch and ramp-up included)
        same = _copy_moving(torch, timer, int(work * 1e9), args.runs)
        row["copy_same_bytes_GBps"] = same
        row["expert_of_copy_same_bytes"] = rate["expert"] / same
    if "flex" in times:
        row["expert_over_flex"] = times["flex"] / times["expert"]
    print(f"{task_name:<11} {str(tuple(shape)):<20} {times['naive']:9.3f} {times['expert']:9.3f} "
          f"{times['torch']:9.3f} {rate['expert']:8.1f} {unit:<5} {rate['torch']:8.1f} {unit:<5} "
          f"{row['expert_over_torch']:11.2f}x {row['expert_over_naive']:7.1f}x "
          f"{enqueue['expert']:7.3f}/{enqueue['torch']:.3f}"
          + (f"  FlexAttention {times['flex']:.3f} ms" if "flex" in times else "")
          + (f"  [{label}]" if label else ""))
    return row


def _layouts(task_name: str, inputs: tuple) -> list[tuple[str, tuple]]:
    """The inputs each task is timed on: its own drawn ones; for attention_document also the
    issue's layout, every batch row cut into 4 documents of equal length.

    The two do different amounts of work, which is why this file's first document figures
    (expert 0.49 ms, FlexAttention 0.71 ms on an H100) were far from the issue's (0.21 and 0.19): the
    task's drawn rows hold one document spanning the whole row and others of one long document, so
    about twice as many 128 x 128 tiles of scores hold a pair in the same document
    (`document_tiles` prints both counts)."""
    if task_name != "attention_document":
        return [("", inputs)]
    doc = inputs[3]
    b, s = doc.shape
    even = np.ascontiguousarray(np.repeat(np.arange(4, dtype=np.int32), -(-s // 4))[:s][None].repeat(b, 0))
    drawn, four = inputs, (*inputs[:3], even)
    print(f"attention_document layouts: drawn rows {document_tiles(doc)}; 4 equal documents a row "
          f"{document_tiles(even)}")
    return [("drawn documents", drawn), ("4 documents a row", four)]


def document_tiles(doc: np.ndarray, tile: int = 128) -> str:
    """How many tile x tile blocks of every row's causal same-document scores hold any pair, and how
    many are wholly inside one document: a kernel that skips empty tiles does work in proportion
    to the first; FlexAttention's mask_mod runs only on the partial ones (the difference)."""
    b, s = doc.shape
    pos = np.arange(s)
    busy = full = 0
    for row in doc:
        keep = (row[:, None] == row[None, :]) & (pos[:, None] >= pos[None, :])
        for i in range(0, s, tile):
            for j in range(0, s, tile):
                block = keep[i:i + tile, j:j + tile]
                busy += bool(block.any())
                full += bool(block.all())
    return f"{busy} tiles of {b * (-(-s // tile)) ** 2} hold work, {full} of them whole"


def _ragged_matmul(cuda, timer, torch, runs: int) -> list:
    """The expert against cuBLAS at every GPU shape of the matmul task but the largest (the
    issue's "within 1.3x on the ragged shapes"), each output checked first."""
    task = load_task("matmul")
    inputs_mod, reference = task.module("inputs"), task.module("reference")
    rtol, atol = task.tolerance
    largest = task.largest_shape("gpu")
    out = []
    print(f"matmul, ragged shapes: {'shape':<20} {'expert ms':>9} {'cuBLAS ms':>9} {'expert/cuBLAS':>13}")
    for shape in task.shapes("gpu"):
        if tuple(shape) == largest:
            continue
        rng = np.random.default_rng(1)
        inputs = tuple(np.ascontiguousarray(x) for x in inputs_mod.make_inputs(rng, shape))
        out_shape = tuple(inputs_mod.output_shape(shape))
        expected = reference.reference(*[x.astype(np.float64) for x in inputs])
        try:
            expert = checked_timing(cuda, timer, task, task.source("expert"),
                                    [(shape, inputs, out_shape, expected)], runs)["ms"]
        except ValueError:
            raise SystemExit(f"matmul expert at {shape}: wrong output, not timed") from None
        a, b = (torch.from_numpy(x).cuda() for x in inputs)
        got = (a @ b).cpu().numpy()
        if not np.allclose(got, expected, rtol=rtol, atol=atol):
            raise SystemExit(f"matmul cuBLAS at {shape}: wrong output")
        lib = timer.time(lambda: a @ b, runs)["ms"]
        ratio = expert / lib
        out.append({"shape": list(shape), "expert_ms": expert, "cublas_ms": lib, "expert_over_cublas_time": ratio})
        print(f"{'':<22}{str(tuple(shape)):<20} {expert:9.4f} {lib:9.4f} {ratio:12.2f}x "
              f"(target <= 1.3x: {'met' if ratio <= 1.3 else 'missed'})")
    return out


def _library(torch, task, t_in):
    if task == "reduce_sum":
        return lambda: t_in[0].sum().reshape(1)
    if task == "softmax":
        return lambda: torch.softmax(t_in[0], dim=1)
    if task == "layernorm":
        x, g, b = t_in
        return lambda: torch.nn.functional.layer_norm(x, (x.shape[1],), g, b, eps=1e-5)
    if task == "matmul":
        return lambda: t_in[0] @ t_in[1]
    if task.startswith("attention"):
        import math

        q, k, v = t_in[:3]
        sdpa = torch.nn.functional.scaled_dot_product_attention
        s = q.shape[2]
        if task == "attention":
            return lambda: sdpa(q, k, v)
        if task == "attention_causal":
            return lambda: sdpa(q, k, v, is_causal=True)
        idx = torch.arange(s, device=q.device)
        causal = idx[None, :] <= idx[:, None]
        if task == "attention_document":
            doc = t_in[3]
            same = doc[:, :, None] == doc[:, None, :]
            mask = (same & causal)[:, None, :, :]
            return lambda: sdpa(q, k, v, attn_mask=mask)
        if task == "attention_alibi":
            h = q.shape[1]
            slopes = torch.tensor([2 ** (-8 * (i + 1) / h) for i in range(h)], device=q.device)
            bias = slopes[:, None, None] * (idx[None, None, :] - idx[None, :, None]).float()
            bias = bias.masked_fill(~causal, -math.inf)[None]
            return lambda: sdpa(q, k, v, attn_mask=bias)
    raise KeyError(task)


def _flex(torch, task, t_in):
    """FlexAttention for an attention task, compiled, its block mask built here (outside the timed
    call): causal, causal within a document, or causal with ALiBi's bias as a score_mod."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    q, k, v = t_in[:3]
    b, h, s, _ = q.shape
    compiled = torch.compile(flex_attention, dynamic=False)
    if task == "attention":
        return lambda: compiled(q, k, v)

    def causal(b_, h_, q_idx, kv_idx):
        return q_idx >= kv_idx

    if task == "attention_causal":
        mask = create_block_mask(causal, None, None, s, s, device=q.device)
        return lambda: compiled(q, k, v, block_mask=mask)
    if task == "attention_document":
        doc = t_in[3]

        def same_document(b_, h_, q_idx, kv_idx):
            return (q_idx >= kv_idx) & (doc[b_, q_idx] == doc[b_, kv_idx])

        mask = create_block_mask(same_document, b, None, s, s, device=q.device)
        return lambda: compiled(q, k, v, block_mask=mask)
    if task == "attention_alibi":
        slopes = torch.tensor([2 ** (-8 * (i + 1) / h) for i in range(h)], device=q.device, dtype=torch.float32)

        def alibi(score, b_, h_, q_idx, kv_idx):
            return score + slopes[h_] * (kv_idx - q_idx)

        mask = create_block_mask(causal, None, None, s, s, device=q.device)
        return lambda: compiled(q, k, v, score_mod=alibi, block_mask=mask)
    raise KeyError(task)


def _copy_moving(torch, timer, nbytes: int, runs: int) -> float:
    """GB/s of a device-to-device copy that moves `nbytes` in all (nbytes / 2 read, as many written)."""
    src = torch.empty(max(1, nbytes // 8), dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    ms = timer.time(lambda: dst.copy_(src), runs)["ms"]
    return 2 * src.numel() * 4 / 1e9 / (ms / 1000)


if __name__ == "__main__":
    main()
