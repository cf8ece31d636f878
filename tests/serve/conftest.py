"""The browser tests' screenshots: in the test's folder (printed), or in $GPU_TUTOR_SCREENSHOTS."""

import os
from pathlib import Path

import pytest


@pytest.fixture
def shots(tmp_path):
    folder = Path(os.environ.get("GPU_TUTOR_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    yield folder
    print(f"\nscreenshots: {folder}")
