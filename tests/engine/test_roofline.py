"""The roofline picture: the H200's slope (4.3 TB/s measured) meets its fp32 roof (67 TFLOP/s,
NVIDIA's datasheet) at 15.6 FLOP/byte; a kernel's point lands left of it when memory binds and on
the roof when arithmetic does; with no FLOPs declared the picture says the intensity is unknown.
Plus the marks the editor draws from the same counts, and `gpu-tutor profile`'s roofline."""

import json
import textwrap

import numpy as np

from cli_run import run_cli
from tutor.engine.judge import simulate
from tutor.engine.analysis.counters import count
from tutor.engine.analysis.device_model import DEVICES, memory_bound
from tutor.engine.analysis.roofline import NO_FLOPS, Roofline, roofline

H200 = DEVICES["h200"]


def plot(r: Roofline, width: int = 60) -> list[str]:
    """The picture's plot rows, without the title and the x axis."""
    return r.picture(width)[1:-2]


def where(rows: list[str], glyph: str) -> tuple[int, int]:
    """(row, column) of a glyph in the plot."""
    return next((y, line.index(glyph)) for y, line in enumerate(rows) if glyph in line)


def test_the_ridge_is_where_the_h200s_bandwidth_meets_its_fp32_peak():
    r = Roofline(H200, 1 << 20, 1e6)
    assert H200.fp32_flops == 67e12 and abs(r.ridge - 67e12 / 4.3e12) < 1e-9
    picture = r.picture()
    axis, labels = picture[-2], picture[-1]
    ticks = [x for x, ch in enumerate(axis) if ch == "┬"]
    ten, hundred = labels.index(" 10 ") + 2, labels.index(" 100 ") + 2
    ridge = [x for x, ch in enumerate(picture[5]) if ch == "┊"][0]
    assert ten in ticks and hundred in ticks and ten < ridge < hundred
    # log10(15.6) = 1.19: a fifth of the way from 10 to 100
    assert abs((ridge - ten) / (hundred - ten) - 0.19) < 0.05
    assert "ridge 15.6 FLOP/byte" in " ".join(r.caption())


def test_a_memory_bound_point_sits_on_the_slope_left_of_the_ridge():
    r = Roofline(H200, bytes_moved=8 * 4096, flops=4096)  # 0.125 FLOP/byte, as an add of two floats
    assert r.intensity == 0.125 and r.bound == "memory"
    assert r.seconds == r.memory_seconds == 8 * 4096 / 4.3e12
    assert r.attainable == 0.125 * 4.3e12
    rows = plot(r)
    (y, x), (_, ridge) = where(rows, "●"), where(rows, "┊")
    assert x < ridge and y > 0  # left of the ridge, below the roof's row
    assert "memory-bound: at most 538 GFLOP/s" in " ".join(r.caption())


def test_a_compute_bound_point_sits_on_the_roof_right_of_the_ridge():
    r = Roofline(H200, bytes_moved=4096, flops=4096 * 200)  # 200 FLOP/byte
    assert r.bound == "compute" and r.seconds == r.compute_seconds == 4096 * 200 / 67e12
    rows = plot(r)
    (y, x), (_, ridge) = where(rows, "●"), where(rows, "┊")
    assert y == 0 and x > ridge and rows[0].startswith("  67T┤")
    assert "compute-bound: at most 67 TFLOP/s" in " ".join(r.caption())
    assert "Bound: at least 12.2 ns (memory 0.953 ns, compute 12.2 ns)." in " ".join(r.caption())


def test_without_flops_the_roofline_is_drawn_with_no_point_and_the_caption_says_why():
    r = Roofline(H200, bytes_moved=4096, flops=None)
    assert r.intensity is None and r.bound is None and r.seconds == r.memory_seconds
    assert not any("●" in line for line in r.picture())
    caption = " ".join(r.caption())
    assert NO_FLOPS == "intensity unknown: this puzzle declares no FLOPs (the trace sees memory, not arithmetic)"
    assert NO_FLOPS in caption and "Memory-bound time: at least 0.953 ns (4,096 bytes)." in caption
    assert "Caches are not modelled" in caption
    assert r.line() == "roofline: intensity unknown (no FLOPs declared), memory's bound at least 0.953 ns"


def test_the_picture_fits_60_columns_and_14_rows_and_narrows_to_40():
    for r in (Roofline(H200, 3200, 100.0), Roofline(H200, 40, 1e6), Roofline(H200, 4096, 0.0)):
        for width in (60, 40):
            picture, caption = r.picture(width), r.caption(width)
            assert len(picture) <= 14 and all(len(line) <= width for line in picture + caption)
    far_left = plot(Roofline(H200, 4096, 0.0))  # no FLOPs per byte: no place on a log axis
    y, x = where(far_left, "◀")
    assert x == far_left[y].index("│") + 1  # the first column, by the axis


ADD = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a, b):
        i = cuda.grid(1)
        out[i] = a[i] + b[i]
    """


def test_a_traced_launchs_roofline_counts_the_global_sectors_it_was_served():
    n = 4096
    trace, _ = simulate(textwrap.dedent(ADD).lstrip("\n"), (n // 256,), (256,),
                        [("out", np.zeros(n, np.float32)), ("a", np.ones(n, np.float32)),
                         ("b", np.ones(n, np.float32))])
    c = count(trace)
    r = roofline(c, H200, float(n))
    assert r.bytes_moved == memory_bound(c, H200).bytes_moved == 3 * 4 * n
    assert abs(r.intensity - 1 / 12) < 1e-12 and r.bound == "memory"
    assert r.to_json()["caches_modelled"] is False and r.to_json()["ridge"] == 15.581


STRIDED = """
    from numba import cuda


    @cuda.jit
    def kernel(out, a):
        t = cuda.threadIdx.x
        out[t] = a[t * 8]
        if t % 4 == 0:
            out[t] += 1
    """


def test_the_marks_name_uncoalesced_lines_and_one_where_most_lanes_idle():
    source = textwrap.dedent(STRIDED).lstrip("\n")
    trace, _ = simulate(source, (1,), (64,), [("out", np.zeros(64, np.float32)), ("a", np.zeros(512, np.float32))])
    marks = count(trace, source).summary()["marks"]
    assert marks == [
        {"line": 7, "kind": "uncoalesced", "text": "global load of a: 32.0 sectors per request (ideal 4.0)"},
        {"line": 9, "kind": "uncoalesced", "text": "global load of out: 4.0 sectors per request (ideal 1.0); "
                                                   "global store of out: 4.0 sectors per request (ideal 1.0)"},
        {"line": 9, "kind": "divergent", "text": "global load of out: 8.0 of 32 lanes active per request; "
                                                 "global store of out: 8.0 of 32 lanes active per request"}]
    # a block smaller than a warp is all its warp's lanes: no lane is called idle there
    small, _ = simulate(source, (1,), (8,), [("out", np.zeros(8, np.float32)), ("a", np.zeros(64, np.float32))])
    assert [(m["line"], m["kind"]) for m in count(small, source).marks()] == [(7, "uncoalesced")]


def test_profile_prints_the_roofline_and_puts_its_numbers_in_the_json(tmp_path, catalog):
    kernel = tmp_path / "t.py"
    kernel.write_text(catalog.get("transpose").reference)
    text = run_cli("profile", "transpose", kernel).stdout
    assert "roofline: intensity unknown (no FLOPs declared)" in text
    assert "NVIDIA H200 roofline: FLOP/s over FLOP/byte, log-log" in text and NO_FLOPS in text.replace("\n", " ")
    data = json.loads(run_cli("profile", "transpose", kernel, "--json").stdout)
    roof = data["configs"][0]["roofline"]
    assert roof["flops"] is None and roof["intensity"] is None and roof["peak_flops"] == 67e12
    assert roof["bytes"] == data["configs"][0]["memory_bound"]["bytes_moved"]
