"""The simulator's score is a modelled H200 time: the naive kernel's over the candidate's, at the
scored shape, through the real verifier. Honest candidates that move the same bytes must still
score apart: one round of loads against many, coalesced against scattered. More bytes must score
worse. The model's own parts are checked here too, as the score reads them."""

import textwrap

import numpy as np
import pytest

import modelled_kernels as mk
from tutor.coach.optimise import SCORE_LABEL, Budget, TaskTarget, optimise
from tutor.engine.analysis.modelled_time import TIMINGS, floor_seconds, least_seconds, modelled_time, unroll_factors


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """Every candidate of modelled_kernels.py judged once by the verifier, against the one-warp
    strided walk as the naive kernel."""
    root = tmp_path_factory.mktemp("kernels")
    mk.write_task(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_TUTOR_KERNELS", str(root))
        target = TaskTarget(mk.TASK, "sim")
        return {name: target.judge(source) for name, source in mk.CANDIDATES.items()}


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_a_candidate_on_the_simulator_gets_a_modelled_speedup_labelled_as_such(judged):
    j = judged["per_element"]
    assert j.correct and j.score_kind == "modelled"
    assert SCORE_LABEL["modelled"] == "modelled speedup (simulator, H200 model)"
    t = j.timing
    assert t["shape"] == [4099] and j.score == pytest.approx(t["baseline_modelled_us"] / t["modelled_us"])
    assert judged["one_warp_strided"].score == pytest.approx(1.0)  # the naive kernel against itself


def test_the_same_bytes_in_one_round_of_loads_score_better_than_in_a_warps_long_walk(judged):
    one, walk = judged["per_element"], judged["one_warp_strided"]
    assert one.timing["bytes"] == walk.timing["bytes"] == 4099 * 4 * 2
    (k1,), (k2,) = one.timing["kernels"], walk.timing["kernels"]
    assert k1["rounds"] == 1 and k2["rounds"] > 100  # a store ends each trip's round
    assert one.score > 5 * walk.score


def test_the_same_bytes_coalesced_score_better_than_the_same_tiles_walked_down_their_columns(judged):
    rows, columns = judged["coalesced_tiles"], judged["transposed_tiles"]
    assert rows.timing["bytes"] == columns.timing["bytes"]
    (a,), (b,) = rows.timing["kernels"], columns.timing["kernels"]
    assert a["rounds"] == b["rounds"] == 1 and a["dram_bytes"] == b["dram_bytes"]
    assert b["pipe_s"] > 8 * a["pipe_s"] and b["bound"] == "memory pipe"
    assert rows.score > columns.score


def test_more_bytes_through_a_scratch_buffer_score_worse(judged):
    direct, scratch = judged["per_element"], judged["through_scratch"]
    assert scratch.correct and scratch.timing["bytes"] == 2 * direct.timing["bytes"]
    assert [k["name"] for k in scratch.timing["kernels"]] == ["copy", "scale"]
    assert scratch.score < direct.score


def test_a_candidate_at_the_models_floor_ends_the_session(tmp_path, monkeypatch):
    """One launch and one wait on DRAM, every input read once and the output written once: no
    kernel can score higher in the model, so the rounds left are not spent."""
    from scripted_llm import register
    from tutor.ai.config import AISettings

    mk.write_task(tmp_path)
    monkeypatch.setenv("GPU_TUTOR_KERNELS", str(tmp_path))
    register([f"```python\n{mk.PER_ELEMENT}```\n\n## Why it is faster\nOne element per thread."] * 3)
    result = optimise(TaskTarget(mk.TASK, "sim"), mk.ONE_WARP_STRIDED, AISettings(model="scripted/tutor", timeout=30),
                      Budget(rounds=3))
    assert result.stop_reason == "floor" and len(result.attempts) == 1
    best = result.best
    # the floor counts memory; one thread per element adds its index arithmetic, a few tens of cycles
    assert best.at_floor and best.timing["floor_us"] < best.timing["modelled_us"] < 1.03 * best.timing["floor_us"]
    assert "model's floor" in result.stop_text()


def test_a_modelled_time_below_a_launch_and_the_floors_bytes_is_implausible():
    from tutor.coach.tasks import load_task
    from tutor.coach.verify import _Judge, _modelled

    task = load_task("reduce_sum")
    floor = task.floor_bytes((20011,))
    judge = _Judge(task, "", "sim", 0.0, 1.0)
    kernel = {"name": "k", "seconds": 1e-6, "launch_s": 1e-6, "blocks_s": 0.0, "latency_s": 0.0, "pipe_s": 0.0,
              "dram_s": 0.0, "atomic_s": 0.0, "dram_bytes": 0, "rounds": 0, "barriers": 0, "waves": 1,
              "blocks_per_sm": 1, "bound": "launch"}
    forged = {"seconds": 1e-6, "kernels": [kernel]}
    (failure,) = judge.plausible_time(forged, _modelled(forged), floor, "shape (20011,)")
    assert failure.kind == "implausible" and "modelled time of 1 us" in failure.message
    honest = {"seconds": 5e-6, "kernels": [{**kernel, "seconds": 5e-6}]}
    assert judge.plausible_time(honest, _modelled(honest), floor, "shape (20011,)") == []
    # figures of the wrong type, or a total that is not the kernels' sum, are malformed
    assert _modelled({"seconds": 5e-6, "kernels": [{**kernel, "seconds": "5e-6"}]}) is None
    assert _modelled({"seconds": 9e-6, "kernels": [{**kernel, "seconds": 5e-6}]}) is None
    (malformed,) = judge.plausible_time({"seconds": "fast"}, None, floor, "shape (20011,)")
    assert "malformed" in malformed.message
    # the model's own fault costs the score, not the verdict
    assert judge.plausible_time({"error": "ValueError: x"}, None, floor, "shape (20011,)") == []
    assert least_seconds(floor) < floor_seconds(floor)


# -- the model's parts, as the score reads them ----------------------------------------------------
def _traced(source: str, *arrays):
    from tutor.engine.sim.devicearray import DeviceArray
    from tutor.engine.sim.launch import records
    from tutor.engine.loading.sim_loader import load_module_for_sim

    module = load_module_for_sim(source, "k.py")
    with records(module.cuda, trace_local=False) as done:
        module.namespace["launch"](*[DeviceArray(a, "out" if i == 0 else f"input:{i - 1}")
                                     for i, a in enumerate(arrays)])
    return modelled_time([t for t, _ in done.traces], source, names=[k for k, _ in done.launches])


def test_loops_of_constant_trip_count_keep_their_loads_in_flight_together():
    """A constant trip count (a literal, a module constant, an expression of them) is unrolled
    whole, nested loops multiplied; a trip count known only at run time, about four times."""
    source = textwrap.dedent("""
        from numba import cuda

        ITEMS = 8


        @cuda.jit
        def k(out, x, n):
            s = 0.0
            for t in range(ITEMS):
                s += x[t]
            for t in range(n):
                s += x[t + 1]
            for a in range(ITEMS // 2):
                for b in range(2):
                    s += x[a * 2 + b]
            for a in range(n):
                for b in (16, 8, 4):
                    s += x[a + b]
            out[0] = s
        """)
    factors = unroll_factors(source, TIMINGS["h200"])
    line = {text.strip(): n + 1 for n, text in enumerate(source.splitlines())}
    assert factors[line["s += x[t]"]] == 8 and factors[line["s += x[t + 1]"]] == 4
    assert factors[line["s += x[a * 2 + b]"]] == 8 and factors[line["s += x[a + b]"]] == 3


def test_bank_conflicts_and_barriers_lengthen_a_blocks_chain():
    template = textwrap.dedent("""
        import numba
        from numba import cuda


        @cuda.jit
        def k(out, x):
            tile = cuda.shared.array(1024, numba.float32)
            t = cuda.threadIdx.x
            tile[t] = x[t]
            cuda.syncthreads()
            out[t] = tile[INDEX]


        def launch(out, x):
            k[1, 1024](out, x)
        """)
    x = np.arange(1024, dtype=np.float32)
    clean = _traced(template.replace("INDEX", "t"), np.zeros(1024, np.float32), x)
    # lane l of each warp reads word 32 l (+ the warp): every lane on one bank, 32 wavefronts
    conflicted = _traced(template.replace("INDEX", "(t % 32) * 32 + t // 32"), np.zeros(1024, np.float32), x)
    (a,), (b,) = clean.kernels, conflicted.kernels
    assert a.barriers == b.barriers == 1 and a.rounds == b.rounds == 2
    assert b.latency_s - a.latency_s == pytest.approx(31 / TIMINGS["h200"].clock_hz)  # 31 extra wavefronts


def test_same_address_atomics_are_one_after_another():
    source = textwrap.dedent("""
        from numba import cuda


        @cuda.jit
        def k(out, x):
            cuda.atomic.add(out, 0, x[cuda.grid(1)])


        def launch(out, x):
            k[64, 256](out, x)
        """)
    (kernel,) = _traced(source, np.zeros(1, np.float32), np.ones(64 * 256, np.float32)).kernels
    assert kernel.bound == "atomics"
    assert kernel.atomic_s == pytest.approx(64 * 256 * TIMINGS["h200"].atomic_cycles / TIMINGS["h200"].clock_hz)


def test_the_model_says_it_is_a_model():
    m = _traced(mk.PER_ELEMENT, np.zeros(64, np.float32), np.ones(64, np.float32))
    text = m.text()
    assert "a model, not a measurement" in text and "registers" in text
    assert "instructions not counted" in text  # this trace came without its PTX: memory alone
    assert m.seconds == pytest.approx(floor_seconds(64 * 4 * 2))
