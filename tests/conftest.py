"""Shared fixtures: the catalog, kernel files written to a temporary folder, and the session's
warm children (warm_runners.py), closed when the session ends. `--shuffle SEED` runs the tests in
an order drawn from SEED, to show that none leans on another having run first."""

import random

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


def pytest_addoption(parser):
    parser.addoption("--shuffle", metavar="SEED", type=int, default=None,
                     help="run the tests in an order drawn from SEED (every xdist worker draws the same)")


def pytest_collection_modifyitems(config, items):
    """The files in a drawn order, and each file's tests in a drawn order: any file may run after any
    other, and any test before its neighbours. A file's tests stay together, so that its module-scoped
    fixtures (a warm child, a served runner) start once, as in a plain run."""
    seed = config.getoption("--shuffle")
    if seed is None:
        return
    draw = random.Random(seed)
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = list(files.values())
    draw.shuffle(order)
    for tests in order:
        draw.shuffle(tests)
    items[:] = [item for tests in order for item in tests]


def pytest_report_header(config):
    seed = config.getoption("--shuffle")
    return f"tests shuffled with seed {seed}" if seed is not None else None
