"""How many times each warp of a launch ran each source line, lanes in lockstep counted once.

The memory model sees every access, but a line of arithmetic leaves nothing in the trace. A GPU
issues one instruction for all the lanes of a warp that run it together, and runs a warp's
divergent paths one after another. So the count that costs is per warp: the distinct runs of a
line that any of its lanes made, where two lanes' runs are the same run when they were at the
same trip of the same loop, at the same call site, in the same barrier phase. A loop whose trip
`l` lets only lane `l` work is then 32 runs per trip of the loop, as on the GPU, not one.

`LineRuns` follows the candidate's frames with sys.settrace (greenlets carry it into every
simulated thread) and writes, for each launch that runs while it is on, into
`trace.line_runs`: {warp key: {(phase, line, caller line, trip)}}, one entry per run. It also keeps the set of
lines that ran at all (`lines`), which the verifier's coverage reads.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict


def statement_lines(source: str) -> dict[int, int]:
    """{line: the first line of the statement it belongs to}, for the lines of statements that
    span several (a compound statement's header only: its body's statements are their own). The
    compiler's line information and Python's line events both name lines inside a statement, and
    not always the same ones: both are counted by statement."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = body[0].lineno - 1  # a header: from its first line to the line before its body
        else:
            last = node.end_lineno or node.lineno
        for line in range(node.lineno, last + 1):
            out[line] = node.lineno
    return {line: first for line, first in out.items() if line != first}


def loop_anchors(source: str) -> dict[int, tuple]:
    """{line: the loop headers whose counts say which run of it this is}: every loop around the
    line, outermost first (a loop header is one of its own), or the line itself for a line outside
    every loop (its k-th run)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    anchors: dict = {}

    def walk(node, headers):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.For, ast.While, ast.AsyncFor)):
                inner = headers + (child.lineno,)
                for stmt in child.body + child.orelse:
                    for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
                        anchors[line] = inner
                walk(child, inner)
                anchors[child.lineno] = inner
            else:
                walk(child, headers)

    walk(tree, ())
    return anchors


class LineRuns:
    """Counts each warp's runs of each line while the simulator runs launches of `filename`'s
    kernels (see the module's docstring). `cuda` is the simulator's FakeCuda, whose `launch`
    says which launch and thread is running."""

    def __init__(self, cuda, filename: str, source: str):
        self.cuda = cuda
        self.filename = filename
        self.anchors = loop_anchors(source)
        self.statements = statement_lines(source)
        self.lines: set[int] = set()

    def __enter__(self):
        cuda, filename, anchors, lines = self.cuda, self.filename, self.anchors, self.lines
        first_line = self.statements
        spans = set(first_line.values())     # first lines of statements over several lines
        last: dict = {}                      # tid -> the statement it last reported
        counts: dict = defaultdict(int)      # (tid, loop header or line) -> runs so far
        state = {"launch": None, "runs": None, "tpb": 1}

        def runs_of(launch):
            if state["launch"] is not launch:
                trace = launch.trace
                if getattr(trace, "line_runs", None) is None:
                    trace.line_runs = defaultdict(set)
                state["launch"], state["runs"], state["tpb"] = launch, trace.line_runs, trace.threads_per_block
            return state["runs"], state["tpb"]

        def frame_tracer(caller):
            def on_line(frame, event, arg):
                if event != "line":
                    return on_line
                line = frame.f_lineno
                lines.add(line)
                launch = cuda.launch
                if line in first_line or line in spans:
                    # A statement over several lines is one run however many of its lines Python
                    # reports, and a loop's test may be reported on its second line only (`while (`
                    # then `k < n):`): a run of the statement is counted once per stretch of its lines.
                    line = first_line.get(line, line)
                    tid = launch.tid if launch is not None else -1
                    if last.get(tid) == line:
                        return on_line
                    last[tid] = line
                elif launch is not None:
                    last[launch.tid] = line
                if launch is None or not getattr(launch, "running", False):
                    return on_line
                runs, tpb = runs_of(launch)
                tid = launch.tid
                headers = anchors.get(line)
                if headers is None or headers[-1] == line:  # a loop header, or a line in no loop
                    counts[(tid, line)] += 1
                if headers is None:
                    trip = counts[(tid, line)]
                else:
                    trip = tuple([counts[(tid, h)] for h in headers])
                block, t = divmod(tid, tpb)
                runs[block * 64 + (t >> 5)].add((launch.phase, line, caller, trip))
                return on_line
            return on_line

        def calls(frame, event, arg):
            if frame.f_code.co_filename != filename:
                return None
            back = frame.f_back
            caller = back.f_lineno if back is not None and back.f_code.co_filename == filename else 0
            lines.add(frame.f_lineno)
            return frame_tracer(caller)

        # what a launch run as lanes (sim/lanes.py) needs to count as this does: the lines seen, and
        # each thread's counts and last statement, carried from launch to launch
        calls.lines_sink, calls.line_runs = lines, self
        self.counts, self.last, self.first_line, self.spans = counts, last, first_line, spans
        self._before = sys.gettrace()
        sys.settrace(calls)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._before)


def warp_runs(line_runs) -> dict:
    """{warp key: {line: runs}} from a trace's line_runs (the distinct runs of each line)."""
    out = {}
    for warp, keys in (line_runs or {}).items():
        per: dict = defaultdict(int)
        for _, line, _, _ in keys:
            per[line] += 1
        out[warp] = dict(per)
    return out
