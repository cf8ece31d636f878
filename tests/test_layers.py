"""The engine never imports the UI, and listing puzzles never imports numba."""

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_engine_does_not_import_textual():
    mods = _modules_after("import tutor.engine.check, tutor.engine.runner, tutor.engine.sim, "
                          "tutor.engine.detect, tutor.engine.textview, tutor.engine.gpu, tutor.engine.compile")
    assert not any(m == "textual" or m.startswith("textual.") for m in mods)


def test_the_ai_and_coach_layers_do_not_import_textual_or_litellm_until_a_model_is_called():
    mods = _modules_after("import tutor.ai.config, tutor.ai.llm, tutor.ai.hints, tutor.ai.leakguard, "
                          "tutor.coach.verify, tutor.coach.screen")
    assert not any(m == "textual" or m.startswith("textual.") for m in mods)
    assert "litellm" not in mods


def test_listing_puzzles_does_not_import_numba():
    mods = _modules_after("import tutor.cli\nfrom tutor.puzzles import load_catalog\nload_catalog()")
    assert "numba" not in mods and "litellm" not in mods


def test_the_app_starts_without_numba_numpy_or_litellm():
    mods = _modules_after("import tutor.app.app")
    assert not {"numba", "numpy", "litellm"} & mods
