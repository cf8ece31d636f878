"""The counters against what Nsight Compute reported on the H200 for the same access patterns
(../shared/device/README.md, 2026-12-02): a coalesced float32 copy is 4 sectors per request, a
stride of 32 elements 32, a naive transpose 4 per load and 32 per store, a 32x32 shared tile read
down its columns 31 extra wavefronts per request; every kernel had 32 active lanes per request."""

import textwrap

import numpy as np

from tutor.engine.judge import simulate
from tutor.engine.analysis.counters import count


def counters(source, blocks, threads, named, with_source: bool = False):
    source = textwrap.dedent(source).lstrip("\n")
    trace, failures = simulate(source, blocks, threads, named)
    assert not [f for f in failures if f.kind != "budget"], failures
    return count(trace, source if with_source else None)


STRIDED_COPY = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a, stride):
        i = cuda.grid(1)
        out[i] = a[i * stride]
    """


def test_a_coalesced_copy_is_4_sectors_per_request_and_a_stride_of_32_is_32():
    n = 2048
    for stride, per_request in ((1, 4), (32, 32)):
        c = counters(STRIDED_COPY, (n // 256,), (256,), [("out", np.zeros(n, np.float32)),
                                                         ("a", np.zeros(n * stride, np.float32)), ("stride", stride)])
        m = c.metrics()
        assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == n // 32
        assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == n // 32 * per_request
        assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == n // 32 * 4
        load = next(x for x in c.lines if x.op == "ld")
        assert load.efficiency == 4 / per_request and load.lanes_per_request == 32


NAIVE_TRANSPOSE = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        x, y = cuda.grid(2)
        out[x, y] = a[y, x]
    """


def test_a_naive_transpose_reads_4_sectors_per_request_and_writes_32():
    n = 64
    c = counters(NAIVE_TRANSPOSE, (n // 32, n // 8), (32, 8), [("out", np.zeros((n, n), np.float32)),
                                                               ("a", np.zeros((n, n), np.float32))])
    load, store = (next(x for x in c.lines if x.op == op) for op in ("ld", "st"))
    assert load.sectors_per_request == 4 and store.sectors_per_request == 32
    assert c.ranked()[0] is store  # the costly line comes first, as in ncu's source view


COLUMN_READ = """
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        tile = cuda.shared.array((32, 33), numba.float32)
        x = cuda.threadIdx.x
        y = cuda.threadIdx.y
        tile[y, x] = a[y, x]
        cuda.syncthreads()
        out[y, x] = tile[x, y]
    """


def test_a_shared_tile_read_down_its_columns_conflicts_31_times_per_request_and_padding_removes_it():
    named = [("out", np.zeros((32, 32), np.float32)), ("a", np.zeros((32, 32), np.float32))]
    unpadded = counters(COLUMN_READ.replace("(32, 33)", "(32, 32)"), (1,), (32, 32), named)
    assert unpadded.metrics()["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 992
    assert unpadded.metrics()["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 0
    padded = counters(COLUMN_READ, (1,), (32, 32), named)
    assert padded.metrics()["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0


BROADCAST_AND_BRANCH = """
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        s = cuda.shared.array(32, numba.float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncthreads()
        if t % 4 == 0:
            out[t] = s[0]
    """


def test_lanes_reading_one_word_do_not_conflict_and_a_branch_leaves_lanes_idle():
    c = counters(BROADCAST_AND_BRANCH, (1,), (32,), [("out", np.zeros(32, np.float32)),
                                                      ("a", np.zeros(32, np.float32))])
    read = next(x for x in c.lines if x.space == "shared" and x.op == "ld")
    assert read.bank_conflicts == 0 and read.lanes_per_request == 8
    store = next(x for x in c.lines if x.space == "global" and x.op == "st")
    assert store.lanes_per_request == 8 and store.sectors_per_request == 4 and store.ideal_sectors == 1


ATOMIC_COUNT = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        i = cuda.grid(1)
        cuda.atomic.add(out, 0, a[i])
    """


def test_atomics_on_one_address_count_every_lane_of_the_request():
    c = counters(ATOMIC_COUNT, (2,), (64,), [("out", np.zeros(1, np.float32)), ("a", np.ones(128, np.float32))])
    atom = next(x for x in c.lines if x.op == "atom")
    assert c.metrics()["atomics"] == 128 and atom.requests == 4 and atom.same_address == 32


ZERO_FILLED_TILE = """
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out, a, n):
        tile = cuda.shared.array(32, numba.float32)
        t = cuda.threadIdx.x
        if t < n:
            tile[t] = a[t]
        else:
            tile[t] = 0.0
        cuda.syncthreads()
        out[t] = tile[31 - t]
    """


def test_an_if_else_storing_to_one_target_is_one_store_instruction_as_numba_compiles_it():
    """Measured on the H200: matmul_tiled's zero-filled tiles had ncu's shared-store conflicts only
    once the two branches' stores counted as one instruction."""
    source = textwrap.dedent(ZERO_FILLED_TILE).lstrip("\n")
    trace, _ = simulate(source, (1,), (32,), [("out", np.zeros(32, np.float32)), ("a", np.ones(32, np.float32)),
                                              ("n", 20)])
    apart, together = count(trace), count(trace, source)
    assert [x.requests for x in apart.lines if x.space == "shared" and x.op == "st"] == [1, 1]
    stores = [x for x in together.lines if x.space == "shared" and x.op == "st"]
    assert len(stores) == 1 and stores[0].requests == 1 and stores[0].lanes_per_request == 32


def test_occupancy_follows_the_launch_shape_and_shared_memory_and_says_registers_are_unknown():
    from tutor.engine.analysis.device_model import DEVICES, memory_bound, occupancy

    h200 = DEVICES["h200"]
    trace, _ = simulate(textwrap.dedent(COLUMN_READ).lstrip("\n"), (1,), (32, 32),
                        [("out", np.zeros((32, 32), np.float32)), ("a", np.zeros((32, 32), np.float32))])
    occ = occupancy(trace, h200)
    assert occ.shared_per_block == 32 * 33 * 4 and occ.blocks_per_sm == 2 and occ.limited_by == "threads per SM"
    assert occ.occupancy == 1.0 and "registers are unknown" in occ.text(h200)
    bound = memory_bound(count(trace), h200)
    assert bound.bytes_moved == 2 * 32 * 4 * 32 and bound.seconds == bound.bytes_moved / 4.3e12


def test_every_simulator_verdict_carries_its_counters_and_the_costly_lines_in_words(catalog):
    from tutor.engine.judge import check_sim
    from tutor.engine.analysis.counters import advice, verdict_advice

    puzzle = catalog.get("transpose")
    result = check_sim(puzzle, puzzle.reference, seed=1, compile=False)
    assert all(c.counters and "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in c.counters["metrics"]
               for c in result.verdict.configs)
    assert "counters" in result.verdict.to_json()["configs"][0]
    source = textwrap.dedent(NAIVE_TRANSPOSE).lstrip("\n")
    trace, _ = simulate(source, (2, 8), (32, 8), [("out", np.zeros((64, 64), np.float32)),
                                                  ("a", np.zeros((64, 64), np.float32))])
    words = advice(count(trace).summary(), source.splitlines())
    assert words == ["line 7 (`out[x, y] = a[y, x]`): global store, 32.0 sectors per request, 8.0x the ideal"]
    # what the child sent is data: a summary of the wrong shape says nothing and raises nothing
    for forged in (None, {"lines": "x"}, {"lines": [{"line": "7", "space": "global"}, 3, {"requests": "many"}]}):
        assert advice(forged, source.splitlines()) == []
    assert verdict_advice(object(), []) == []


def test_a_lines_costliest_request_lane_by_lane_shows_the_sectors_and_the_banks():
    from tutor.engine.analysis.counters import line_detail

    source = textwrap.dedent(NAIVE_TRANSPOSE).lstrip("\n")
    trace, _ = simulate(source, (2, 8), (32, 8), [("out", np.zeros((64, 64), np.float32)),
                                                  ("a", np.zeros((64, 64), np.float32))])
    detail = line_detail(trace, 7, source)
    assert "global load of a, warp 0 of block (0, 0), execution 1 of the line: 4 sectors for 32 lanes" in detail
    assert "  sector 0: lanes 0-7" in detail
    assert "global store of out, warp 0 of block (0, 0), execution 1 of the line: 32 sectors for 32 lanes" in detail
    source = textwrap.dedent(COLUMN_READ.replace("(32, 33)", "(32, 32)")).lstrip("\n")
    trace, _ = simulate(source, (1,), (32, 32), [("out", np.zeros((32, 32), np.float32)),
                                                 ("a", np.zeros((32, 32), np.float32))])
    detail = line_detail(trace, 12, source)
    assert any(d.startswith("shared load of tile") and d.endswith("32 wavefronts") for d in detail)
    assert "  bank 0: lanes 0-31; 32 different words" in detail
    assert line_detail(trace, 1, source) == []


SKIP_IN_THE_MIDDLE = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a, keep):
        i = cuda.grid(1)
        total = 0.0
        for j in range(8):
            if keep[i, j] == 0:
                continue
            total += a[j, i]
        out[i] = total
    """

SKIP_AT_THE_END = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a, keep):
        i = cuda.grid(1)
        total = 0.0
        for j in range(8):
            if j < i % 8:
                total += a[j, i]
        out[i] = total
    """


def test_lanes_skipping_middle_iterations_after_a_continue_are_said_to_be_undercounted():
    """ncu on the H200 counted 379 load requests for attention_document's naive kernel, where the
    k-th-execution grouping gives 219: its lanes `continue` past other documents' keys, and the GPU
    issues each iteration's loads once for whichever lanes are in it. Here lane i skips j == i % 8:
    8 iterations, each with 31 lanes in it, are 8 requests on the GPU, 7 as we group them."""
    keep = np.ones((32, 8), np.int32)
    for i in range(32):
        keep[i, i % 8] = 0
    named = [("out", np.zeros(32, np.float32)), ("a", np.zeros((8, 32), np.float32)), ("keep", keep)]
    c = counters(SKIP_IN_THE_MIDDLE, (1,), (32,), named, with_source=True)
    load = next(x for x in c.lines if x.array == "a")
    assert load.requests == 7  # the grouping's count, not the GPU's 8: hence the note
    assert any(n.startswith("line(s) 11 follow a `continue`") for n in c.notes), c.notes
    # an `if` without `continue` is not flagged (FORMAT of the note: said where it is known)
    ended = counters(SKIP_AT_THE_END, (1,), (32,), named, with_source=True)
    assert len(ended.notes) == 1 and next(x for x in ended.lines if x.array == "a").requests == 7


ONE_LANE_PER_PHASE = """
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        s = cuda.shared.array(32, numba.float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncthreads()
        for step in range(1, 32):
            if t == step:
                s[t] += s[t - 1]
            cuda.syncthreads()
        out[t] = s[t]
    """


def test_a_request_is_one_warp_instruction_in_one_barrier_phase():
    """Each lane runs the chain's line once, each in its own barrier phase: 31 requests of one lane,
    not one request of 31 lanes (which grouping each lane's first run of the line together gave)."""
    c = counters(ONE_LANE_PER_PHASE, (1,), (32,), [("out", np.zeros(32, np.float32)),
                                                    ("a", np.ones(32, np.float32))])
    chain = [x for x in c.lines if x.space == "shared" and x.line == 13]
    assert {x.op: x.requests for x in chain} == {"ld": 62, "st": 31}  # two loads and a store per step
    assert all(x.lanes_per_request == 1 for x in chain)
    first = next(x for x in c.lines if x.space == "shared" and x.line == 9)
    assert first.requests == 1 and first.lanes_per_request == 32  # one phase, one request


def test_a_lines_worst_request_says_after_how_many_barriers_it_ran():
    from tutor.engine.analysis.counters import line_detail

    source = textwrap.dedent(ONE_LANE_PER_PHASE).lstrip("\n")
    trace, _ = simulate(source, (1,), (32,), [("out", np.zeros(32, np.float32)), ("a", np.ones(32, np.float32))])
    detail = line_detail(trace, 13, source)
    assert "shared load of s, warp 0 of block (0,), execution 1 of the line after 1 barrier: 1 wavefront" in detail
    assert "  bank 1: lane 1" in detail
    # before any barrier, no word of them
    assert "shared store of s, warp 0 of block (0,), execution 1 of the line: 1 wavefront" in \
        line_detail(trace, 9, source)


def _one_line_per_lane(access: str) -> str:
    body = "".join(f"    if t == {lane}:\n        {access}\n" for lane in range(32))
    return ("import numba\nfrom numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n"
            "    tile = cuda.shared.array((32, 32), numba.float32)\n    t = cuda.threadIdx.x\n" + body)


def test_a_copy_split_into_one_line_per_lane_moves_a_sector_per_lane_against_the_four_it_needs():
    """One request per lane, each one sector for one float: ideal request by request, while the
    warp pulled 32 sectors where the 32 floats it read fill 4."""
    c = counters(_one_line_per_lane("out[t] = a[t]"), (1,), (32,), [("out", np.zeros(32, np.float32)),
                                                                     ("a", np.ones(32, np.float32))])
    loads = [x for x in c.lines if x.op == "ld"]
    assert len(loads) == 32 and all(x.sectors == x.ideal_sectors == x.requests == 1 for x in loads)
    assert c.needed_load_sectors == 4 and c.needed_store_sectors == 4
    assert sum(x.needed for x in loads) == 4  # the first lane of each sector fetched it; 28 fetched again


def test_a_reread_counts_its_sectors_again_in_what_loads_moved():
    source = """
        from numba import cuda


        @cuda.jit
        def kernel(out, a):
            t = cuda.threadIdx.x
            out[t] = a[t] + a[t]
        """
    c = counters(source, (1,), (32,), [("out", np.zeros(32, np.float32)), ("a", np.ones(32, np.float32))])
    assert c.total("global", "ld", "sectors") == 8 and c.needed_load_sectors == 4


def test_a_column_read_split_per_lane_needs_one_wavefront_per_warp_and_takes_32():
    """No request conflicts (each holds one lane), and the busiest lane made one access."""
    fill = "    t = cuda.threadIdx.x\n    for r in range(32):\n        tile[r, t] = a[t]\n    cuda.syncthreads()\n"
    c = counters(_one_line_per_lane("out[t] = tile[t, 0]").replace("    t = cuda.threadIdx.x\n", fill),
                 (1,), (32,), [("out", np.zeros(32, np.float32)), ("a", np.ones(32, np.float32))])
    reads = [x for x in c.lines if x.space == "shared" and x.op == "ld"]
    assert sum(x.bank_conflicts for x in reads) == 0 and sum(x.wavefronts for x in reads) == 32
    assert c.needed_wavefronts == 32 + 1  # the fill (32 rows, one full-warp store each) and the read
    assert sum(x.needed for x in reads) == 1


SHARED_ATOMIC = """
    import numba
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        total = cuda.shared.array(1, numba.float32)
        t = cuda.threadIdx.x
        if t == 0:
            total[0] = 0
        cuda.syncthreads()
        cuda.atomic.add(total, 0, a[t])
        cuda.syncthreads()
        out[t] = total[0]
    """


def test_lanes_of_a_shared_atomic_on_one_word_are_served_one_after_another_and_a_read_is_broadcast():
    c = counters(SHARED_ATOMIC, (1,), (64,), [("out", np.zeros(64, np.float32)), ("a", np.ones(64, np.float32))])
    atom = next(x for x in c.lines if x.space == "shared" and x.op == "atom")
    assert atom.requests == 2 and atom.wavefronts == 64 and atom.needed == 2
    read = next(x for x in c.lines if x.space == "shared" and x.op == "ld")
    assert read.requests == 2 and read.wavefronts == 2 and read.bank_conflicts == 0


def test_global_atomics_on_one_address_are_counted_per_block_whichever_request_made_them():
    c = counters(ATOMIC_COUNT, (2,), (64,), [("out", np.zeros(1, np.float32)), ("a", np.ones(128, np.float32))])
    assert c.hot_address == 64 and c.hot_line == 7  # two warps of one block, 32 lanes each
    split = ATOMIC_COUNT.replace("        cuda.atomic.add(out, 0, a[i])\n",
                                 "".join(f"        if i % 32 == {lane}:\n            cuda.atomic.add(out, 0, a[i])\n"
                                         for lane in range(32)))
    c = counters(split, (2,), (64,), [("out", np.zeros(1, np.float32)), ("a", np.ones(128, np.float32))])
    assert max(x.same_address for x in c.lines if x.op == "atom") == 1 and c.hot_address == 64


def test_the_totals_come_back_from_json_and_a_forged_total_is_refused():
    import pytest

    from tutor.engine.analysis.counters import Counters

    c = counters(SHARED_ATOMIC, (1,), (64,), [("out", np.zeros(64, np.float32)), ("a", np.ones(64, np.float32))])
    back = Counters.from_json(c.to_json())
    assert back.needs() == c.needs() and [x.needed for x in back.ranked()] == [x.needed for x in c.ranked()]
    forged = c.to_json()
    forged["needs"]["needed_wavefronts"] = "0"
    with pytest.raises(ValueError):
        Counters.from_json(forged)
