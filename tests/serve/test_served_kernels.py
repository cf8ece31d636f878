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

from tutor.engine.runner import Runner
from tutor.session import Session, Trust

SERVED = Session(trust=Trust.SERVED)  # a served room's learner: what `gpu-tutor serve` sets up
from tutor.puzzles import load_catalog
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
        with Runner("sim", content=content) as not_served:  # the case that fools an app that is not served
            verdict = not_served.check("map", reading_kernel(marker), "map.py").verdict
        assert watch.touched(), "the plain-Python kernel read the file"
        assert any("is 49 but should be" in f.message for f in verdict.failures)  # its length came back
        with Runner("sim", content=content, session=SERVED) as served:
            verdict = served.check("map", reading_kernel(marker), "map.py").verdict
        assert not verdict.passed and [f.rule for f in verdict.failures] == ["builtin"]  # refused as it is built
        assert "`open`" in verdict.failures[0].message and verdict.failures[0].line == 7
        assert not watch.touched() and not verdict.configs  # nothing ran, so no length came back
    finally:
        watch.close()


@pytest.mark.parametrize("attack", ["file", "environ_of_the_app", "os_environ"])
def test_a_served_learners_file_reaches_neither_another_folder_nor_the_servers_environment(tmp_path, monkeypatch,
                                                                                           attack):
    marker = other_learners_code(tmp_path / "room")
    monkeypatch.setenv("ROOM_API_KEY", PLANTED)  # the server's environment: the app process has it
    source = {
        "file": module_level(f"open({str(marker)!r}).read()"),
        "environ_of_the_app": module_level("open('/proc/%d/environ' % os.getppid()).read()", "import os"),
        "os_environ": module_level("[v for v in os.environ.values() if v.startswith('sk-')][0]", "import os"),
    }[attack]
    watch = Watch(marker)
    try:
        with Runner("sim", session=SERVED) as served:
            verdict = served.check("map", source, "map.py").verdict
    finally:
        touched = watch.touched()
        watch.close()
    assert not verdict.passed
    failure = verdict.failures[0]
    assert failure.kind == "static" and not verdict.configs, verdict.failures  # built, never run
    assert [f.rule for f in verdict.failures] == {"file": ["module-state"], "environ_of_the_app": ["import", "module-state"],
                                                   "os_environ": ["import", "module-state"]}[attack]
    assert not touched and "learner B" not in str(verdict.to_json()) and PLANTED not in str(verdict.to_json())


REFERENCE = ROOT / "content" / "map" / "reference.py"
READ = "open(REFERENCE).read()"  # REFERENCE: the reference of a content folder the child may read
KERNEL_BODY = "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n"
EMPTY_MAP = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    pass\n"
# The reference run by the file itself: loaded through the catalog (the child may read the project),
# defined into the module, so that an empty kernel becomes the right one.
BECOME_THE_REFERENCE = ("exec(__import__('tutor.puzzles').puzzles.load_catalog().get('map').reference"
                        ".replace('from numba import cuda', ''), globals())")
LOADING_RUNS = {  # every place of a file that runs as Python when it is loaded, before the compiler
    "module_level": f"from numba import cuda\nraise ValueError({READ})\n\n\n@cuda.jit\ndef kernel(out, a):\n"
                    + KERNEL_BODY,
    "decorator": f"from numba import cuda\n\n\n@cuda.jit(device={READ} == '')\ndef kernel(out, a):\n" + KERNEL_BODY,
    "default": f"from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a, b={READ}):\n" + KERNEL_BODY,
    "helper_decorator": (f"from numba import cuda\n\n\ndef steal(f):\n    raise ValueError({READ})\n\n\n"
                         "@steal\ndef helper():\n    pass\n\n\n@cuda.jit\ndef kernel(out, a):\n" + KERNEL_BODY),
    # the screen before this dropped every finding on a line inside a function's lines: these ran
    "one_line_default": EMPTY_MAP + f"\ndef z(x=ValueError({READ})): pass\n",
    "signature_ending_in_its_body": EMPTY_MAP + f"\ndef z(a,\n      x=ValueError({READ})): return a\n",
}


@pytest.fixture
def content(tmp_path):
    """A content folder of the runner's own, which its child may read: its reference is watched
    alone (the project's is read by other tests running beside this one)."""
    folder = tmp_path / "content"
    shutil.copytree(ROOT / "content", folder)
    return folder


def with_reference(source: str, content: Path) -> str:
    return source.replace("REFERENCE", repr(str(content / "map" / "reference.py")))


@pytest.mark.parametrize("where", sorted(LOADING_RUNS))
def test_what_runs_while_a_file_loads_never_reads_the_reference_the_sandbox_lets_its_child_read(monkeypatch, where,
                                                                                                content):
    """The content folder (the project) is readable by every child, for the puzzles' data: a
    served learner's file that read the puzzle's reference while it was loaded for the compiler got
    the answer back in the load error's message (it did, before the module level was screened; and
    in a one-line `def`, after it)."""
    source = with_reference(LOADING_RUNS[where], content)
    answer = REFERENCE.read_text().splitlines()[-1].strip()  # the reference's last line, its one write
    watch = Watch(content / "map" / "reference.py")
    try:
        with Runner("sim", content=content, session=SERVED) as served:
            verdict = served.check("map", source, "map.py").verdict
            compiled, _ = served.compile("map", source, "map.py")  # the compiler's own request is built too
        assert compiled.kind == "static" and answer not in compiled.message
        assert not verdict.passed and verdict.failures and {f.kind for f in verdict.failures} == {"static"}
        assert answer not in str(verdict.to_json()) and not verdict.configs
        lines = source.splitlines()
        assert all(f.line is not None and ("open(" in lines[f.line - 1] or "@steal" in lines[f.line - 1])
                   for f in verdict.failures), verdict.failures
        with Runner("sim", content=content) as for_a_model:  # the same for code a model wrote
            verdict = for_a_model.check("map", source, "map.py", untrusted=True).verdict
        assert {f.kind for f in verdict.failures} == {"static"} and answer not in str(verdict.to_json())
        assert not watch.touched()  # not even opened
    finally:
        watch.close()


def test_an_annotation_is_never_evaluated_so_it_reads_nothing_and_the_right_kernel_passes(monkeypatch, content):
    source = with_reference(f"from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a: {READ}) -> {READ}:\n"
                            + KERNEL_BODY, content)
    watch = Watch(content / "map" / "reference.py")
    try:
        with Runner("sim", content=content, session=SERVED) as served:
            verdict = served.check("map", source, "map.py").verdict
        assert verdict.passed, verdict.failures
        assert not watch.touched()
    finally:
        watch.close()


@pytest.mark.parametrize("hiding", ["one-line def", "signature ending in its body"])
def test_an_empty_kernel_that_loads_the_reference_while_the_file_loads_never_passes(monkeypatch, hiding):
    """Pasted under map's starter in a browser, this made an empty kernel PASS and marked map solved."""
    source = EMPTY_MAP + {"one-line def": f"\ndef z(x={BECOME_THE_REFERENCE}): pass\n",
                          "signature ending in its body": f"\ndef z(a,\n      x={BECOME_THE_REFERENCE}): return a\n"}[hiding]
    with Runner("sim", session=SERVED) as served:
        verdict = served.check("map", source, "map.py").verdict
    assert not verdict.passed and [f.rule for f in verdict.failures] == ["default-arg"]
    assert verdict.failures[0].line == {"one-line def": 8, "signature ending in its body": 9}[hiding]
    assert "a default value in `def z`" in verdict.failures[0].message


def test_a_served_learner_keeps_print_and_whatever_numba_compiles_inside_the_kernel(monkeypatch):
    """Only what loading runs is screened; the kernel's body is the compiler's to judge."""
    source = ('"""My map."""\nimport math\nfrom numba import cuda, float32\n\nTPB = 4\nTEN = 10.0\n\n\n'
              "@cuda.jit(device=True)\ndef plus(x):\n    return x + TEN\n\n\n@cuda.jit\ndef kernel(out, a):\n"
              "    i = cuda.threadIdx.x\n    if i == 0:\n        print('thread', i)\n"
              "    out[i] = plus(a[i]) + math.floor(0.5)\n")
    with Runner("sim", session=SERVED) as served:
        verdict = served.check("map", source, "map.py").verdict
    assert verdict.passed, verdict.failures


def test_a_served_learners_right_kernel_still_passes_and_its_grid_is_drawn(monkeypatch):
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n"
              "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n")
    with Runner("sim", session=SERVED) as served:
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


@pytest.fixture(scope="module")
def served_runner():
    with Runner("sim", timeout=60, session=SERVED) as runner:
        yield runner


@pytest.mark.parametrize("pid", [p.id for p in load_catalog().ordered()])
def test_every_reference_passes_as_a_served_learners_check_on_every_seed(served_runner, catalog, pid):
    """Built from its syntax tree, compiled first, run in a fresh process: the references pass as
    they do for a learner on their own machine."""
    for seed in (1, 2, 3):
        verdict = served_runner.check(pid, catalog.get(pid).reference, f"{pid}.py", seed=seed).verdict
        assert verdict.passed, (seed, verdict.failures)


# A branch Numba's compiler decides on a constant and cuts as dead is never type-checked: the
# simulator must take the branch Numba kept, or the cut one runs as plain Python. On main's builder
# `float32(0.1)` was a Python float on the simulator and numpy's float32 in Numba, so `K == 0.1`
# was True when compiling and False when simulating, and an empty compiled kernel PASSED while its
# cut branch read the reference (found by a reviewer; see the commit that adds this test).
DEAD_BRANCH = """from numba import cuda, float32
K = float32({value})


@cuda.jit
def kernel(out, a):
    i = cuda.threadIdx.x
    if K == {value}:
        pass
    else:
        if i == 0:
            print("REF:", open(REFERENCE).read())
        out[i] = a[i] + 10
"""


@pytest.mark.parametrize("value", ["0.1", "16777217", "1e-45"])
def test_a_branch_numba_cuts_as_dead_is_never_run_by_the_simulator(monkeypatch, content, value):
    source = with_reference(DEAD_BRANCH.format(value=value), content)
    answer = REFERENCE.read_text().splitlines()[-1].strip()
    with Runner("sim", content=content, session=SERVED) as served:
        verdict = served.check("map", source, "map.py", seed=1).verdict
    assert not verdict.passed and answer not in verdict.printed and answer not in str(verdict.to_json())


def test_a_value_numbas_placeholders_stand_for_cannot_be_a_constant(monkeypatch):
    with Runner("sim", session=SERVED) as served:
        verdict = served.check("map", "from numba import cuda\nW = cuda.warpsize\n" + EMPTY_MAP.split("\n", 1)[1],
                               "map.py", seed=1).verdict
    assert [f.rule for f in verdict.failures] == ["module-state"] and "only inside a kernel" in verdict.failures[0].message


# Found by a reviewer on the commit before this test: Numba's closure inliner drops a statement whose
# value is unused before it types anything, so `max((...,), key=exec)` after an inner function's
# call never met the compiler and ran on the simulator as Python (it printed the reference and
# PASSED). Here the line only prints a marker, with no name the builder refuses.
UNTYPED_LINE = """from numba import cuda


@cuda.jit
def kernel(out, a):
    i = cuda.threadIdx.x

    def ten():
        return 10

    out[i] = a[i] + ten()
    t = max(("LEAKED-BY-A-LINE-NUMBA-NEVER-TYPED",), key=print)
"""


def test_a_line_numba_drops_before_typing_never_runs_on_the_simulator(monkeypatch):
    with Runner("sim", session=SERVED) as served:
        verdict = served.check("map", UNTYPED_LINE, "map.py", seed=1).verdict
    assert not verdict.passed and "LEAKED" not in verdict.printed
    assert [f.kind for f in verdict.failures] == ["compile_error"] and verdict.failures[0].line == 12
    with Runner("sim") as own:  # a learner's own file on their machine runs as the Python it is
        assert "LEAKED" in own.check("map", UNTYPED_LINE, "map.py", seed=1).verdict.printed


@pytest.mark.parametrize("body", ["exec('x = 1')", "print(open(REFERENCE).read())", "f = getattr(a, 'shape')",
                                  "print(max.__self__)", "print(a._private)"])
def test_a_kernel_body_never_names_what_only_plain_python_has(monkeypatch, body):
    source = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n"
              f"    if i > 100:\n        {body}\n    out[i] = a[i] + 10\n")
    with Runner("sim", session=SERVED) as served:
        verdict = served.check("map", source, "map.py", seed=1).verdict
    assert not verdict.passed and verdict.failures[0].kind == "static" and verdict.failures[0].line == 8
