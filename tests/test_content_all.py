"""The acceptance check of the Content issue, in CI: every puzzle passes `gpu-tutor content check`."""

import io

import pytest

from tutor.content_check import run_content_check


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_every_puzzle_passes_the_content_check_on_the_simulator(catalog):
    out = io.StringIO()
    code = run_content_check("sim", seed=20261202, out=out)
    text = out.getvalue()
    assert code == 0, text
    assert text.count("\nok ") + text.startswith("ok ") == len(catalog.ordered())
    assert len([p for p in catalog.ordered() if p.track == "classic"]) == 14
    assert len([p for p in catalog.ordered() if p.track == "advanced"]) >= 8
