"""In a served room every learner's code runs as the server's user: a kernel that reaches for another
learner's folder or the server's environment gets a rejection and reads nothing.

"Reads nothing" is checked by the kernel's own answer and by inotify on the other learner's file:
not even an open of it happens. The first test starts from the case that fools an app that is not
served: there a kernel body is plain Python on our simulator, and where the OS lets the child read
(here a content folder of the runner's own, which its child may read) it reads the file."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tutor.engine.runner import SERVED_ENV, Runner
from watch import Watch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify and Landlock are Linux's")

ROOT = Path(__file__).resolve().parents[2]
PLANTED = "sk-planted-in-the-servers-environment"


def other_learners_code(folder: Path) -> Path:
    marker = folder / "learners" / "b0b" / "code" / "map.py"
    marker.parent.mkdir(parents=True)
    marker.write_text("# learner B's kernel, which nobody else may read\n")
    return marker


def reading_kernel(path: Path) -> str:
    return f"""from numba import cuda


@cuda.jit
def kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = len(open({str(path)!r}).read())
"""


def module_level(line: str, imports: str = "") -> str:
    return f"""from numba import cuda
{imports}
STOLEN = {line}


@cuda.jit
def kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + 10
"""


def test_a_kernel_body_that_reads_another_learners_file_is_refused_by_the_compiler_before_it_runs(tmp_path,
                                                                                                 monkeypatch):
    content = tmp_path / "content"
    shutil.copytree(ROOT / "content", content)
    marker = other_learners_code(content)  # where the OS would let the child read
    watch = Watch(marker)
    try:
        monkeypatch.delenv(SERVED_ENV, raising=False)
        with Runner("sim", content=content) as not_served:  # the case that fools an app that is not served
            verdict = not_served.check("map", reading_kernel(marker), "map.py").verdict
        assert watch.touched(), "the plain-Python kernel read the file"
        assert any("is 49 but should be" in f.message for f in verdict.failures)  # its length came back
        monkeypatch.setenv(SERVED_ENV, "1")
        with Runner("sim", content=content) as served:
            verdict = served.check("map", reading_kernel(marker), "map.py").verdict
        assert not verdict.passed and [f.kind for f in verdict.failures] == ["compile_error"]
        assert "Untyped global name 'open'" in verdict.failures[0].message and verdict.failures[0].line == 7
        assert not watch.touched() and not verdict.configs  # nothing ran, so no length came back
    finally:
        watch.close()


@pytest.mark.parametrize("attack", ["file", "environ_of_the_app", "os_environ"])
def test_a_served_learners_file_reaches_neither_another_folder_nor_the_servers_environment(tmp_path, monkeypatch,
                                                                                           attack):
    marker = other_learners_code(tmp_path / "room")
    monkeypatch.setenv(SERVED_ENV, "1")
    monkeypatch.setenv("ROOM_API_KEY", PLANTED)  # the server's environment: the app process has it
    source = {
        "file": module_level(f"open({str(marker)!r}).read()"),
        "environ_of_the_app": module_level("open('/proc/%d/environ' % os.getppid()).read()", "import os"),
        "os_environ": module_level("[v for v in os.environ.values() if v.startswith('sk-')][0]", "import os"),
    }[attack]
    watch = Watch(marker)
    try:
        with Runner("sim") as served:
            verdict = served.check("map", source, "map.py").verdict
    finally:
        touched = watch.touched()
        watch.close()
    assert not verdict.passed
    failure = verdict.failures[0]
    assert failure.kind == "compile_error" and failure.line == 3
    assert ("PermissionError" in failure.message) if attack != "os_environ" else ("IndexError" in failure.message)
    assert not touched and "learner B" not in str(verdict.to_json()) and PLANTED not in str(verdict.to_json())


def test_a_served_learners_right_kernel_still_passes_and_its_grid_is_drawn(monkeypatch):
    monkeypatch.setenv(SERVED_ENV, "1")
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n"
              "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n")
    with Runner("sim") as served:
        result = served.check("map", source, "map.py")
    assert result.verdict.passed, result.verdict.failures
    assert result.runs and result.runs[0].trace.events  # the simulator ran it, traced, after the compiler


def test_the_room_refuses_a_folder_inside_what_kernels_may_read(tmp_path, monkeypatch):
    """A file's top level is Python that the compiler does not see: the OS is what keeps it from
    other folders, so a room is never put where the sandbox lets children read."""
    from tutor.serve.command import readable_by_kernels

    assert readable_by_kernels(tmp_path / "room") is None
    assert readable_by_kernels(ROOT / "rooms" / "a") == str(ROOT)
    assert readable_by_kernels(Path(sys.prefix) / "share" / "room") is not None
    monkeypatch.setenv("GPU_TUTOR_CONTENT", str(tmp_path / "content"))
    assert readable_by_kernels(tmp_path / "content" / "room") == str(tmp_path / "content")
