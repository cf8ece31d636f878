"""The app on a real GPU (run on the GPU machine: pytest -m gpu)."""

import asyncio

import pytest
from textual.widgets import TextArea

from tutor.app.app import make_app
from tutor.app.widgets.verdict import VerdictView
from waiting import until

pytestmark = pytest.mark.gpu


def test_the_app_runs_a_kernel_on_the_gpu_and_says_so(tmp_path, catalog):
    async def main():
        app = make_app(data_dir=tmp_path, backend="gpu", seed=1, puzzle="dot")
        async with app.run_test(size=(120, 40)) as pilot:
            assert "backend: gpu" in app.sub_title
            app.query_one("#editor", TextArea).load_text(catalog.get("dot").reference)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: app.last_result is not None, timeout=120, what="the GPU run")
            verdict = app.last_result.verdict
            assert verdict.passed and verdict.backend == "gpu"
            assert any(c.kernel_ms for c in verdict.configs)  # the largest config, timed in the GPU's turn
            assert app.store.progress("dot").solved
            # the grid is the simulator's run of the same inputs; the GPU's outcome and time beside it
            assert app.last_result.runs[0].trace is not None
            head = app.query_one(VerdictView).head_text
            assert verdict.device in head and "outputs right" in head and " ms" in head, head

    asyncio.run(main())


def _wrong(case_id):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "content"))
    from test_wrong_solutions import WRONG

    return next(p.values for p in WRONG if p.id == case_id)


def test_a_racing_kernel_is_not_solved_on_the_gpu(tmp_path, catalog):
    pid, _, source, seed = _wrong("pooling-no_barrier")  # within one warp a GPU gets it right

    async def main():
        app = make_app(data_dir=tmp_path, backend="gpu", seed=seed, puzzle=pid)
        async with app.run_test(size=(120, 40)) as pilot:
            app.query_one("#editor", TextArea).load_text(source)
            await pilot.press("ctrl+r")
            await until(pilot, lambda: app.last_result is not None, timeout=120, what="the GPU run")
            verdict = app.last_result.verdict
            assert not verdict.passed and "race" in verdict.kinds(), verdict.to_json()
            assert not app.store.progress(pid).solved

    asyncio.run(main())
