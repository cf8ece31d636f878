"""Verdicts and traces as plain text, for the terminal and for prompts to a model.

The CLI prints these; the AI hint and the optimiser put the same words in front of a model, so a
learner and a model read one description of what went wrong.
"""

from __future__ import annotations

from ..trace import (ATOMIC, GLOBAL, LOCAL, OOB_READ, OOB_WRITE, READ, SHARED, UNINIT_READ, WRITE, Trace,
                    fmt_dim)
from ..verdict import KIND_TITLES, Verdict


def verdict_text(verdict: Verdict, *, color: bool = False) -> str:
    """The verdict as the terminal shows it. Messages quote the learner's code and a kernel's prints
    (a model's, in a hint or an optimiser round), so they are escaped before our own colours go on."""
    from tutor.textsafe import terminal_safe as safe

    ok = sum(1 for c in verdict.configs if c.passed)
    total = len(verdict.configs)
    green, red, dim, reset = ("\x1b[32m", "\x1b[31m", "\x1b[2m", "\x1b[0m") if color else ("",) * 4
    head = f"{verdict.puzzle} on {verdict.backend}: "
    if verdict.passed:
        head += f"{green}PASSED{reset} ({total} of {total} configs"
    elif not total:
        head += f"{red}FAILED{reset} (before any config ran"
    else:
        head += f"{red}FAILED{reset} ({ok} of {total} configs passed"
    head += f", seed {verdict.seed})" if verdict.seed is not None else ")"
    lines = [head]
    if verdict.device and verdict.device_passed is not None:
        lines.append(f"  {safe(verdict.device)}: outputs {'right' if verdict.device_passed else 'wrong'}; races, "
                     "bounds, barriers and budgets from the simulator's run of the same inputs")
    for f in verdict.failures:
        where = f" [config: {f.config}]" if f.config else ""
        if f.line is not None and f"line {f.line}" not in f.message:  # pinned to its line, where the text does not say it
            where += f" [line {f.line}]"
        also = [d["also_in"] for d in f.details if isinstance(d, dict) and "also_in" in d]
        if also:
            where += f" [also in {len(also[0])} other config(s)]"
        lines.append(f"  x {KIND_TITLES[f.kind]}{where}")
        lines.append(_indent(safe(f.message), 4))
    if verdict.configs:
        lines.append("configs:")
        for c in verdict.configs:
            mark = f"{green}ok{reset}" if c.passed else f"{red}x{reset} "
            time = f"  {c.kernel_ms:.4f} ms" if c.kernel_ms is not None else ""
            sizes = ", ".join(f"{k}={v}" for k, v in c.scalars.items())
            grid = f"  threads {fmt_dim(c.threads)} blocks {fmt_dim(c.blocks)}" if c.threads else ""
            lines.append(f"  {mark} {c.name}{dim}{grid}{'  ' + sizes if sizes else ''}{reset}{time}")
    lines += _measures(verdict)
    for note in verdict.notes:
        lines.append(f"{dim}note: {safe(note)}{reset}")
    if verdict.printed:
        lines.append("the kernel printed:")
        lines.append(_indent(safe(verdict.printed.rstrip()), 2))
    return "\n".join(lines)


def _measures(verdict: Verdict) -> list[str]:
    """What a coaching task's verification measured: bytes moved, GPU timing, flags for review."""
    lines = []
    for b in verdict.measures:
        lines.append(f"  global memory moved for shape {tuple(b.shape)}: {b.bytes:,} bytes")
        if b.modelled_s is not None:
            lines.append(f"  modelled H200 time at that shape: {b.modelled_s * 1e6:.3g} us (a model from the "
                         "trace and the compiled instructions, not a measurement)")
            for k in b.modelled or []:
                if isinstance(k, dict) and k.get("bound"):
                    margin = k.get("margin") or 0
                    lines.append(f"    {k.get('name', 'kernel')}: {k.get('seconds', 0) * 1e6:.3g} us, bound by "
                                 f"{k['bound']}" + (f", {margin:.3g}x the next bound" if margin else ""))
    t = verdict.timing
    if t:
        lines.append(f"  timing at shape {tuple(t.shape)}: {t.ms:.4f} ms against the naive "
                     f"{t.baseline_ms:.4f} ms ({t.speedup:.2f}x, median of {t.runs})")
    if verdict.unchecked_lines:
        lines.append("  lines that ran in no verified shape: " + ", ".join(str(n) for n in verdict.unchecked_lines))
    lines += [f"  flag: {flag}" for flag in verdict.flags]
    return lines


def _indent(text: str, n: int) -> str:
    import textwrap

    width = 100
    out = []
    for para in text.splitlines() or [""]:
        out.extend(textwrap.wrap(para, width=width - n, initial_indent=" " * n, subsequent_indent=" " * n)
                   or [" " * n])
    return "\n".join(out)


_VERB = {READ: "read", WRITE: "wrote", ATOMIC: "atomic", OOB_READ: "read OUT OF BOUNDS",
         OOB_WRITE: "wrote OUT OF BOUNDS", UNINIT_READ: "read UNWRITTEN"}


def trace_text(trace: Trace, *, max_threads: int = 64, max_blocks: int = 8, width: int = 80) -> str:
    """Per block, per barrier phase: what each thread read and wrote, then the arrays' cells. A
    thread's accesses (and an array's cells) wrap at `width` columns under a hanging indent, one
    access never split, so they read as a list."""
    lines = [f"grid: blocks {fmt_dim(trace.grid[:trace.grid_nd])}, "
             f"threads per block {fmt_dim(trace.block[:trace.block_nd])}"]
    by_block_phase: dict = {}
    for e in trace.events:
        by_block_phase.setdefault((e[0] // trace.threads_per_block, e[6]), {}).setdefault(e[0], []).append(e)
    barriers = {(b.block, b.phase): b for b in trace.barriers}
    blocks = sorted({k[0] for k in by_block_phase})
    shown = blocks if len(blocks) <= max_blocks else blocks[: max_blocks // 2] + blocks[-max_blocks // 2:]
    skipped = False
    for blin in shown:
        if len(blocks) > max_blocks and blin == blocks[max_blocks // 2] and not skipped:
            lines.append(f"... {len(blocks) - max_blocks} more blocks ...")
            skipped = True
        phases = sorted(p for (b, p) in by_block_phase if b == blin)
        block = trace.block_of(blin * trace.threads_per_block)
        tblock = block[:trace.grid_nd]
        for phase in phases:
            bar = barriers.get((tblock, phase))
            end = f" (ends at the barrier on line {bar.line})" if bar else ""
            lines.append(f"block {fmt_dim(tblock)}, phase {phase}{end}")
            threads = by_block_phase[(blin, phase)]
            for n, (tid, evs) in enumerate(sorted(threads.items())):
                if n == max_threads:
                    lines.append(f"  ... {len(threads) - max_threads} more threads")
                    break
                _, thread = trace.where(tid)
                acts = [_event_text(trace, e) for e in evs[:12]]
                if len(evs) > 12:
                    acts.append(f"... {len(evs) - 12} more")
                lines += _hanging(f"  thread {fmt_dim(thread)}:", acts, ";", width)
    for tid, why in sorted(trace.stopped.items())[:8]:
        block, thread = trace.where(tid)
        lines.append(f"thread {fmt_dim(thread)} of block {fmt_dim(block)}: {why}")
    lines.append("")
    lines.append("arrays at the end (cell: value <- who wrote it last)")
    for info in trace.arrays:
        if info.space == LOCAL:
            continue
        head, cells, more = _array_parts(trace, info)
        wrapped = _hanging(head + " [", cells, " |", width, glue="")
        wrapped[-1] += "]" + more
        lines += wrapped
    return "\n".join(lines)


def _hanging(head: str, items: list[str], sep: str, width: int, glue: str = " ") -> list[str]:
    """`head item1<sep> item2<sep> item3` in lines of at most `width` columns where the items allow,
    each line after the first indented to where the first item starts (or 6 columns, when the head
    is wider than half the width). An item is never split; one longer than a line stands alone."""
    start = len(head) + len(glue)
    indent = " " * (start if start <= width // 2 else 6)
    lines: list[str] = []
    current = None
    for n, item in enumerate(items):
        piece = item + (sep if n < len(items) - 1 else "")
        if current is None:
            current = head + glue + piece
        elif len(current) + 1 + len(piece) > width:
            lines.append(current)
            current = indent + piece
        else:
            current += " " + piece
    lines.append(head if current is None else current)
    return lines


def _event_text(trace: Trace, e) -> str:
    info = trace.arrays[e[2]]
    index = e[3] if isinstance(e[3], tuple) else info.unravel(e[3])
    name = info.name if info.space == GLOBAL else f"{info.space}:{info.name}"
    cell = f"{name}[{', '.join(str(i) for i in index)}]"
    value = "" if e[4] is None else f" = {_num(e[4])}"
    return f"{_VERB[e[1]]} {cell}{value} (line {e[5]})"


def _array_parts(trace: Trace, info) -> tuple[str, list[str], str]:
    """An array's label and shape, its cells (value <- the thread that wrote it last), and what
    was left out."""
    last = {}
    for e in trace.events:
        if e[2] == info.aid and e[1] in (WRITE, ATOMIC):
            last[e[3]] = e
    cells = list(info.initial) if info.initial is not None else [None] * info.size
    for flat, e in last.items():
        cells[flat] = e[4]
    label = info.name if info.space == GLOBAL else f"{info.space} '{info.name}' of block {fmt_dim(info.block)}"
    parts = []
    for flat, v in enumerate(cells[:64]):
        who = ""
        if flat in last:
            _, thread = trace.where(last[flat][0])
            who = f" <- t{fmt_dim(thread)}"
        parts.append(f"{'?' if v is None else _num(v)}{who}")
    more = f" ... ({info.size - 64} more)" if info.size > 64 else ""
    return f"  {label} {tuple(info.shape)}:", parts, more


def _num(v) -> str:
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}"
    return str(v)


__all__ = ["verdict_text", "trace_text", "SHARED"]
