"""The coaching tasks' walkthroughs (tutor/coach/walkthrough.py): every step a whole kernel that
verifies on the simulator, in order from naive to expert; measured times read from the file the GPU
bench writes, and nothing shown as measured that was not; the CLI's errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tutor.coach.tasks import KERNELS_ENV, coaching_tasks, load_task
from tutor.coach.verify import verify
from tutor.coach.walkthrough import STEPS_FILE, TIMES_FILE, load_walkthrough

WITH = [t.name for t in coaching_tasks() if (t.folder / STEPS_FILE).is_file()]


def test_every_coaching_task_has_a_walkthrough():
    assert WITH == [t.name for t in coaching_tasks()]


@pytest.mark.parametrize("name", WITH)
def test_a_walkthrough_goes_from_the_naive_kernel_to_the_expert_one_a_change_at_a_time(name):
    walk = load_walkthrough(load_task(name))
    files = [s.file for s in walk.steps]
    assert files[0] == "naive.py" and files[-1] == "expert.py" and len(files) >= 3
    assert len(set(files)) == len(files)
    sources = [s.source for s in walk.steps]
    assert all(a != b for a, b in zip(sources, sources[1:]))
    assert all(s.title and len(s.why.split()) >= 15 for s in walk.steps)


# the attention steps take about 10 s each on the simulator: with the long tests (CI runs both)
@pytest.mark.parametrize("name, file", [pytest.param(n, s.file, marks=[pytest.mark.e2e] if n.startswith("attention") else [])
                                        for n in WITH for s in load_walkthrough(load_task(n)).steps
                                        if s.file not in ("naive.py", "expert.py")])
def test_every_step_of_a_walkthrough_verifies_on_the_simulator(name, file):
    verdict = verify(name, (load_task(name).folder / file).read_text())
    assert verdict.passed, verdict.failures


def _copy(tmp_path, name="reduce_sum"):
    root = tmp_path / "kernels"
    shutil.copytree(load_task(name).folder, root / name)
    return load_task(name, root)


def test_without_measurements_the_walkthrough_says_so_and_shows_each_change(tmp_path):
    task = _copy(tmp_path)
    (task.folder / TIMES_FILE).unlink(missing_ok=True)
    text = load_walkthrough(task).text()
    assert "Not measured on a GPU yet" in text and "Measured:" not in text
    assert "--- steps/2_grid_stride.py\n+++ steps/3_warp_shuffle.py" in text
    assert "+        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)" in text


def test_measured_times_make_a_table_with_each_steps_gain(tmp_path):
    task = _copy(tmp_path)
    files = [s.file for s in load_walkthrough(task).steps]
    runs = [{"device": "NVIDIA H100 80GB HBM3", "date": "2026-12-07", "shape": [16777223], "command": "python b.py",
             "ms": {f: 10.0 / (n + 1) for n, f in enumerate(files)} | {"steps/unknown.py": 1.0, files[1]: -3}},
            {"device": "NVIDIA H200", "date": "2026-12-07", "shape": [16777223], "command": "python b.py",
             "ms": {files[0]: 8.0}}]
    (task.folder / TIMES_FILE).write_text(json.dumps({"runs": runs}))
    walk = load_walkthrough(task)
    text = walk.text()
    assert "| step | NVIDIA H100 80GB HBM3 ms | NVIDIA H200 ms | vs naive (NVIDIA H100 80GB HBM3) |" in text
    assert f"| 0. {walk.steps[0].title} | 10 | 8 | 1x |" in text
    assert f"| 1. {walk.steps[1].title} | - | - | - |" in text  # a negative time is no time
    assert f"| 4. {walk.steps[4].title} | 2 | - | 5x |" in text
    assert "Measured: 2.5 ms on NVIDIA H100 80GB HBM3 (1.33x the step before)." in text
    assert "unknown" not in text


@pytest.mark.parametrize("broken", ["{", '{"runs": [{"device": "x"}]}', '{"runs": 3}', "[]"])
def test_a_broken_times_file_is_named_and_no_time_is_shown(tmp_path, broken):
    task = _copy(tmp_path)
    (task.folder / TIMES_FILE).write_text(broken)
    walk = load_walkthrough(task)
    assert walk.runs == [] and walk.problems and TIMES_FILE in walk.problems[0]
    assert "Not measured on a GPU yet" in walk.text()


def test_a_step_outside_the_tasks_folder_is_refused(tmp_path):
    task = _copy(tmp_path)
    path = task.folder / STEPS_FILE
    path.write_text(path.read_text().replace('file = "naive.py"', 'file = "../../../etc/hostname"', 1))
    with pytest.raises(ValueError, match="outside the task's folder"):
        load_walkthrough(task)


def test_the_cli_prints_a_walkthrough_and_names_the_tasks_that_have_one(tmp_path):
    def cli(*args, env=None):
        return subprocess.run([sys.executable, "-m", "tutor.cli", "walkthrough", *args], capture_output=True, text=True,
                              env=env)

    done = cli("reduce_sum", "--no-diff")
    assert done.returncode == 0 and done.stdout.startswith("# Sum reduction: from the naive kernel to the expert one")
    assert "```" not in done.stdout
    done = cli("no_such_task")
    assert done.returncode == 2 and "no coaching task 'no_such_task'" in done.stderr
    task = _copy(tmp_path)
    (task.folder / STEPS_FILE).unlink()
    done = cli("reduce_sum", env={**os.environ, KERNELS_ENV: str(tmp_path / "kernels")})
    assert done.returncode == 2 and "reduce_sum has no walkthrough yet; these have one: none" in done.stderr
