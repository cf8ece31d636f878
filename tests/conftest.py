"""Shared fixtures: the catalog, and kernel files written to a temporary folder."""

import pytest

from tutor.puzzles import load_catalog


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
