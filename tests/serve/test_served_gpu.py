"""A served room's GPU checks (run on the GPU machine: pytest -m gpu): loaded the same way as on the
simulator (built from the syntax tree, nothing of the file run), each in a fresh process forked from
a fork server that holds no CUDA context of its own."""

from __future__ import annotations

import os

import pytest

from tutor.engine.runner import Runner
from tutor.session import Session, Trust

SERVED = Session(trust=Trust.SERVED)  # a served room's learner: what `gpu-tutor serve` sets up
from tutor.puzzles import load_catalog

pytestmark = pytest.mark.gpu
PUZZLES = [p.id for p in load_catalog().ordered()]
EMPTY_MAP = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    pass\n"
BECOME_THE_REFERENCE = ("\ndef z(x=exec(__import__('tutor.puzzles').puzzles.load_catalog().get('map').reference"
                        ".replace('from numba import cuda', ''), globals())): pass\n")
WRONG_MAP = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i] * 3\n"


@pytest.fixture(scope="module")
def served():
    with Runner("gpu", timeout=60, gpu_queue=False, session=SERVED) as r:
        yield r


@pytest.mark.parametrize("pid", PUZZLES)
def test_every_reference_passes_as_a_served_learners_gpu_check(served, catalog, pid):
    result = served.check(pid, catalog.get(pid).reference, "ref.py", seed=11)
    assert result.verdict.passed, result.verdict.failures
    assert result.verdict.device_passed is True and any(c.kernel_ms for c in result.verdict.configs)


def test_a_one_line_default_never_runs_and_a_wrong_kernel_after_it_still_fails(served):
    verdict = served.check("map", EMPTY_MAP + BECOME_THE_REFERENCE, "map.py", seed=1).verdict
    assert not verdict.passed and {f.rule for f in verdict.failures} == {"default-arg"}
    assert not served.check("map", WRONG_MAP, "map.py", seed=1).verdict.passed


def test_each_gpu_check_is_a_fresh_process_and_the_fork_server_holds_no_cuda_context(served, catalog):
    pids = []
    server = served._fork_server()
    spawn = server._spawn

    def spawned(*args):
        pid, pidfd = spawn(*args)
        pids.append(pid)
        return pid, pidfd

    server._spawn = spawned
    try:
        for _ in range(2):
            assert served.check("map", catalog.get("map").reference, "ref.py", seed=2).verdict.passed
    finally:
        server._spawn = spawn
    assert len(set(pids)) == len(pids) >= 2  # a new process for each check (and the spare after them)
    opened = [os.readlink(f"/proc/{server.proc.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{server.proc.pid}/fd")]
    assert not [path for path in opened if path.startswith("/dev/nvidia")], opened
