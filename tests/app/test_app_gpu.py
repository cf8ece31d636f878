"""The app on a real GPU (run on the GPU machine: pytest -m gpu)."""

import asyncio
import time

import pytest
from textual.widgets import TextArea

from tutor.app.app import make_app

pytestmark = pytest.mark.gpu


def test_the_app_runs_a_kernel_on_the_gpu_and_says_so(tmp_path, catalog):
    async def main():
        app = make_app(data_dir=tmp_path, backend="gpu", seed=1, puzzle="dot")
        async with app.run_test(size=(120, 40)) as pilot:
            assert "backend: gpu" in app.sub_title
            app.query_one("#editor", TextArea).load_text(catalog.get("dot").reference)
            await pilot.press("ctrl+r")
            started = time.monotonic()
            while app.last_result is None and time.monotonic() - started < 120:
                await pilot.pause(0.1)
            verdict = app.last_result.verdict
            assert verdict.passed and verdict.backend == "gpu"
            assert all(c.kernel_ms for c in verdict.configs)
            assert app.store.progress("dot").solved

    asyncio.run(main())
