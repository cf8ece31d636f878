"""Red-team cases on the perf targets that tests/perf_attacks/ (test_perf_totals.py) does not hold.

Fixed: tests/perf_attacks/perf_reduce_sequential/syncwarp_chain.py (a request is one warp phase's too),
run by test_perf_totals.py with the others.

Open (strict xfail, so the day it is fixed the test says so): tests/perf_attacks_open/. A request is
each lane's k-th run of a line in a barrier and warp phase; lanes that run the line in different
passes of a loop (a lane-dependent `if` inside it) are different instructions on a GPU and one
request here. Counting them right needs each access tagged with its loop trips, which the tracer
knows (sim/linecounts.py, trace.line_runs) but does not put on the access events.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.engine.judge import check_sim
from tutor.puzzles import load_catalog

OPEN = Path(__file__).resolve().parents[1] / "perf_attacks_open"
CATALOG = load_catalog()


@pytest.mark.xfail(strict=True, reason="requests group each lane's k-th run across loop passes (no trip on accesses)")
def test_a_copy_issued_a_quarter_warp_per_pass_fails_its_efficiency():
    path = OPEN / "perf_copy" / "staggered_turns.py"
    verdict = check_sim(CATALOG.get("perf_copy"), path.read_text(), path.name, seed=1, compile=False,
                        keep_traces=False, timeout=180.0).verdict
    assert not verdict.passed
    assert set(verdict.kinds()) == {"perf_target"}
    assert {f.details[0]["counter"] for f in verdict.failures} >= {"global_load_efficiency",
                                                                    "global_store_efficiency"}
