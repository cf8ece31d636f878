"""Shared fixtures: the catalog, kernel files written to a temporary folder, and the session's
warm children (warm_runners.py), closed when the session ends."""

import pytest

import warm_runners
from tutor.puzzles import load_catalog


@pytest.fixture(scope="session", autouse=True)
def _close_the_warm_children():
    yield
    warm_runners.close_all()


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture
def kernel_file(tmp_path):
    def write(source: str, name: str = "kernel.py"):
        path = tmp_path / name
        path.write_text(source)
        return path

    return write
