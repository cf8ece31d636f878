"""The modelled time counts what the GPU executes: each warp's runs of each line (divergent paths
one after another) times the instructions Numba's real compile made of the line.

Each test starts from a kernel that main's memory-only model timed as if its arithmetic were free."""

import numpy as np
import pytest

from tutor.engine.analysis.instructions import _copies, instruction_class, line_costs
from tutor.engine.analysis.modelled_time import modelled_time
from tutor.engine.loading.compile import launches_ptx, nvvm_missing
from tutor.engine.loading.sim_loader import load_module_for_sim
from tutor.engine.sim.devicearray import DeviceArray
from tutor.engine.sim.launch import records
from tutor.engine.sim.linecounts import LineRuns, loop_anchors, warp_runs

needs_compiler = pytest.mark.skipif(nvvm_missing() is not None, reason="needs the real Numba compiler (NVVM)")

HEAD = "import math\nfrom numba import cuda\n\n\n"


def model(source: str, n: int = 32, threads: int = 32, memory_only: bool = False):
    """(modelled time, the launch's trace) of `launch(out, x)` over n float32 ones."""
    m = load_module_for_sim(source, "candidate.py")
    out, x = np.zeros(n, np.float32), np.ones(n, np.float32)
    with records(m.cuda, trace_local=False) as done, LineRuns(m.cuda, "candidate.py", source):
        m.namespace["launch"](DeviceArray(out, "out"), DeviceArray(x, "input:0"))
    traces = [t for t, _ in done.traces]
    ptx = None if memory_only else [launches_ptx(source, "candidate.py", done.launches).get(k) for k in done.launches]
    return modelled_time(traces, source, "h200", ptx=ptx), traces[0]


CHAIN = HEAD + """@cuda.jit
def k(out, x, steps):
    i = cuda.grid(1)
    z = x[i]
    if i == 0:
        for s in range(steps):
            z = math.sin(z)
    out[i] = x[i] + 0.0 * z


def launch(out, x):
    k[1, 32](out, x, STEPS)
"""

DIVERGENT = HEAD + """@cuda.jit
def k(out, x, steps):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    z = x[i]
    for l in range(32):
        if lane == l:
            for s in range(steps):
                z = math.sqrt(z + 1.0)
    out[i] = z


def launch(out, x):
    k[1, 32](out, x, 50)
"""

TOGETHER = DIVERGENT.replace("""    for l in range(32):
        if lane == l:
            for s in range(steps):
                z = math.sqrt(z + 1.0)""", """    for s in range(steps):
        z = math.sqrt(z + 1.0)""")


@needs_compiler
def test_a_dependent_chain_in_one_thread_costs_its_latency():
    # main's model saw one load and one store whatever STEPS was: both kernels timed alike
    short, _ = model(CHAIN.replace("STEPS", "1"))
    long, _ = model(CHAIN.replace("STEPS", "3000"))
    memory_only, _ = model(CHAIN.replace("STEPS", "3000"), memory_only=True)
    assert memory_only.seconds == pytest.approx(short.seconds, rel=0.2)
    assert long.seconds > 10 * short.seconds
    # one warp: its 3,000 dependent sines wait on each other and issue one after another
    assert long.kernels[0].bound in ("latency", "issue")
    assert long.kernels[0].compute_s > 3000 * 20 / 1.98e9


@needs_compiler
def test_lanes_in_their_own_branch_run_one_after_another():
    divergent, trace = model(DIVERGENT)
    together, _ = model(TOGETHER)
    runs = warp_runs(trace.line_runs)[0]
    chain_line = next(n for n, text in enumerate(DIVERGENT.splitlines(), 1) if "math.sqrt" in text)
    assert runs[chain_line] == 32 * 50   # each lane's 50 steps, lane after lane
    assert divergent.seconds > 15 * together.seconds


@needs_compiler
def test_independent_work_in_many_warps_is_bound_by_issue():
    src = HEAD + """@cuda.jit
def k(out, x):
    i = cuda.grid(1)
    a = x[i]
    b = a * 2.0
    c = a * 3.0
    d = a * 5.0
    for s in range(64):
        a = a * 1.0001 + 0.5
        b = b * 1.0002 + 0.25
        c = c * 1.0003 + 0.125
        d = d * 1.0004 + 0.0625
    out[i] = x[i] + 0.0 * (a + b + c + d)


def launch(out, x):
    k[8, 1024](out, x)
"""
    modelled, _ = model(src, n=8 * 1024)
    k = modelled.kernels[0]
    assert k.instructions > 8 * 32 * 64 * 4  # every warp's 64 trips of four multiply-adds at least
    assert k.issue_s > 0 and k.compute_s > 0


@needs_compiler
def test_a_runtime_unrolled_loop_is_counted_once_per_trip():
    src = HEAD + """@cuda.jit
def k(out, x, n):
    acc = 0.0
    for j in range(n):
        acc += x[j] * x[j]
    out[0] = acc


def launch(out, x):
    k[1, 1](out, x, x.shape[0])
"""
    m = load_module_for_sim(src, "candidate.py")
    with records(m.cuda, record_only=True) as planned:
        m.namespace["launch"](DeviceArray(np.zeros(4, np.float32), "out"), DeviceArray(np.ones(4, np.float32), "input:0"))
    ptx = launches_ptx(src, "candidate.py", planned.launches)[planned.launches[0]]
    body = next(n for n, text in enumerate(src.splitlines(), 1) if "acc +=" in text)
    cost = line_costs(ptx)[body]
    # one float64 add per trip, however many copies LLVM's unrolling made of it
    assert cost.classes["fp64"] == 1


def test_instruction_classes():
    assert instruction_class("sin.approx.f32") == "sfu"
    assert instruction_class("div.rn.f64") == "fp64_div"
    assert instruction_class("rem.s64") == "int64_div"
    assert instruction_class("div.s32") == "int_div"
    assert instruction_class("ld.local.u32") == "local"
    assert instruction_class("ld.global.f32") is None  # the memory model counts it
    assert instruction_class("fma.rn.f32") == "fp32"
    assert instruction_class("mul.lo.s64") == "int64_mul"
    assert instruction_class("cvt.f64.f32") == "conv"


def test_copies_of_an_unrolled_body():
    assert _copies(["mul", "add", "mul", "add", "mul", "add"]) == 3
    assert _copies(["mul", "add", "mul"]) == 1
    assert _copies([]) == 1


def test_a_line_is_run_once_per_trip_of_every_loop_around_it():
    src = "for a in range(3):\n    x = 1\n    for b in range(2):\n        y = 2\nz = 3\n"
    anchors = loop_anchors(src)
    assert anchors[2] == (1,) and anchors[4] == (1, 3) and anchors[3] == (1, 3) and 5 not in anchors


@needs_compiler
def test_loads_that_chase_each_others_values_wait_one_after_another():
    # main counted a constant-trip loop of 64 loads as one round, even where each load's address
    # is the value the one before it read
    chase = HEAD + """@cuda.jit
def k(out, x):
    i = cuda.grid(1)
    j = i
    for s in range(64):
        j = int(x[j]) % 32
    out[i] = j


def launch(out, x):
    k[1, 32](out, x)
"""
    spread = chase.replace("j = int(x[j]) % 32", "j += int(x[s])")
    chased, _ = model(chase)
    independent, _ = model(spread)
    assert chased.kernels[0].rounds >= 64
    assert independent.kernels[0].rounds < 8
    assert chased.seconds > 1.5 * independent.seconds


@needs_compiler
def test_a_chain_written_over_several_lines_is_counted_once_per_run():
    # the compiler's line information and Python's line events name different lines of one
    # statement; a chain split over lines must cost the same as on one line
    # (on one line per line, the sine's line ran no Python line event and cost nothing: 101 us
    # against the one-line statement's 168 us)
    chain = CHAIN.replace("STEPS", "2000")
    one = chain.replace("            z = math.sin(z)", "            z = (0.0 + math.sin(z) * 1.0)")
    split = chain.replace("            z = math.sin(z)", "            z = (0.0 +\n                math.sin(z) *\n                1.0)")
    a, _ = model(one)
    b, _ = model(split)
    assert b.seconds == pytest.approx(a.seconds, rel=0.02)


# Four neighbouring floats of a 16-byte-aligned shared array, at a known multiple of 4: NVVM reads
# them with one ld.shared.v4.f32, and the hardware serves a warp's 512 bytes in 4 wavefronts. The
# trace records four scalar reads; each, at a stride of 4 words, hits 8 banks 4 times: main's model
# counted 16 wavefronts, four times the vector load's, and ranked the experts' vector-load variants
# below the scalar ones the GPU runs slower.
NEIGHBOURS = HEAD + """import numba


@cuda.jit
def k(out, x):
    s = cuda.shared.array(512, numba.float32ALIGN)
    t = cuda.threadIdx.x
    for r in range(16):
        s[t + 32 * r] = x[t]
    cuda.syncthreads()
    acc = numba.float32(0)
    for rep in range(8):
        base = (4 * t + 128 * rep) & 508
        a = s[base]
        b = s[base + 1]
        c = s[base + 2]
        d = s[base + 3]
        acc += a * b + c * d
    out[t] = acc


def launch(out, x):
    k[1, 32](out, x)
"""


@needs_compiler
def test_neighbouring_shared_reads_that_compile_to_one_vector_load_cost_its_wavefronts():
    from tutor.engine.loading.compile import launches_ptx as ptx_of
    from tutor.engine.analysis.instructions import vector_widths

    vector, scalar = NEIGHBOURS.replace("ALIGN", ", alignment=16"), NEIGHBOURS.replace("ALIGN", "")
    widths = {}
    for name, src in (("vector", vector), ("scalar", scalar)):
        m = load_module_for_sim(src, "candidate.py")
        with records(m.cuda, trace_local=False) as done, LineRuns(m.cuda, "candidate.py", src):
            m.namespace["launch"](DeviceArray(np.zeros(32, np.float32), "out"),
                                  DeviceArray(np.ones(32, np.float32), "input:0"))
        widths[name] = vector_widths(next(iter(ptx_of(src, "candidate.py", done.launches).values())))
    assert widths == {"vector": {18: 4}, "scalar": {}}, widths
    (mv, _), (ms, _) = model(vector), model(scalar)
    pv, ps = mv.kernels[0].pipe_s, ms.kernels[0].pipe_s
    # the stores: 16 requests of 1 wavefront each; the reads: 8 x 4 (vector) or 8 x 16 (scalar)
    cycle = 1 / 1.98e9
    assert round(pv / cycle) < round(ps / cycle), (pv, ps)
    assert (ps - pv) / cycle == pytest.approx(8 * 16 - 8 * 4, rel=0.05), ((ps - pv) / cycle)


def test_only_aligned_neighbours_of_every_lane_are_folded_into_one_vector_request():
    from tutor.engine.analysis.modelled_time import _Request, _merge_vectors

    def groups(starts, step=1, lines=False):
        # four requests of one warp: a loop over neighbours on line 7 (runs k = 0..3), or one
        # access a line on lines 7..10 (run 0)
        out = {}
        for u in range(4):
            key = (0, 0, 7 + u, "ld", 1, 0, 0) if lines else (0, 0, 7, "ld", 1, 0, u)
            out[key] = _Request(key[2], "ld", 1, 0, u, [s + u * step for s in starts])
        return out

    lanes = [4 * t for t in range(32)]
    for lines in (False, True):
        g = groups(lanes, lines=lines)
        _merge_vectors(g, {7: 4})
        assert len(g) == 1 and sorted(next(iter(g.values())).flats) == list(range(128))
        for bad, vectors in ((groups([f + 1 for f in lanes], lines=lines), {7: 4}),  # not on a 16-byte boundary
                             (groups(lanes, step=2, lines=lines), {7: 4}),           # not neighbours
                             (groups(lanes, lines=lines), {8: 4})):                  # no vector access on line 7
            _merge_vectors(bad, vectors)
            assert len(bad) == 4, (lines, vectors)
