"""A workshop's `gpu_turns`: how many of the room's GPU runs may share the GPU at once, checked like
every other key and given to each learner's process as GPU_TUTOR_GPU_TURNS, which the queue reads."""

import argparse
import os

import pytest

from tutor.engine.process.gpulock import TURNS_ENV, shared_queue
from tutor.session import Session
from tutor.workshop.cli import home_workshop
from tutor.workshop.config import EXAMPLE, WorkshopError, load_workshop
from cli_run import run_cli

HEAD = 'title = "x"\npuzzles = ["map"]\n'


def write(tmp_path, text):
    path = tmp_path / "w.toml"
    path.write_text(text)
    return path


@pytest.fixture
def no_turns_variable(monkeypatch):
    """This process's environment without the variable, and as it was again after the test (even
    where the code under test sets it)."""
    monkeypatch.setenv(TURNS_ENV, "")
    monkeypatch.delenv(TURNS_ENV)


def test_gpu_turns_is_read_and_left_out_means_the_queue_decides(tmp_path, catalog):
    assert load_workshop(write(tmp_path, HEAD + "gpu_turns = 3\n"), catalog).gpu_turns == 3
    assert load_workshop(write(tmp_path, HEAD), catalog).gpu_turns is None
    assert "# gpu_turns = 1" in EXAMPLE  # the example shows it, commented out: the queue's 4 unless asked


@pytest.mark.parametrize("value, wording", [
    ("0", "gpu_turns: 0 is not allowed; use a whole number from 1 to 16: how many GPU runs may be on the GPU at "
          "once (4, the default; 1: one at a time)"),
    ("17", "gpu_turns: 17 is not allowed; use a whole number from 1 to 16"),
    ("-2", "gpu_turns: -2 is not allowed; use a whole number from 1 to 16"),
    ("2.5", "gpu_turns: must be a whole number, not 2.5"),
    ('"2"', "gpu_turns: must be a whole number, not '2'"),
    ("true", "gpu_turns: must be a whole number, not True"),
])
def test_a_bad_gpu_turns_names_the_file_and_the_key(tmp_path, catalog, value, wording):
    path = write(tmp_path, HEAD + f"gpu_turns = {value}\n")
    with pytest.raises(WorkshopError) as e:
        load_workshop(path, catalog)
    assert str(e.value).startswith(f"{path}: {wording}")


def app_args(path):
    return argparse.Namespace(workshop=str(path), model=None, api_base=None, app_puzzle=None)


def test_the_workshop_sets_the_turns_of_every_queue_its_process_takes(tmp_path, monkeypatch, no_turns_variable):
    monkeypatch.setenv("GPU_TUTOR_GPU_QUEUE", str(tmp_path / "queue"))
    session = Session.from_environment()
    assert shared_queue(session.gpu_turns, session.gpu_queue).turns == 4
    home_workshop(app_args(write(tmp_path, HEAD + "gpu_turns = 1\n")))
    session = Session.from_environment()
    assert os.environ[TURNS_ENV] == "1" and shared_queue(session.gpu_turns, session.gpu_queue).turns == 1


def test_a_turns_variable_set_for_every_session_wins_over_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv(TURNS_ENV, "2")
    home_workshop(app_args(write(tmp_path, HEAD + "gpu_turns = 4\n")))
    assert os.environ[TURNS_ENV] == "2"


def test_workshop_check_says_how_many_runs_share_the_gpu(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != TURNS_ENV}
    env["GPU_TUTOR_NO_GPU"] = "1"

    def check(text, **more):
        done = run_cli("workshop", "check", str(write(tmp_path, text)), env={**env, **more})
        assert done.returncode == 0, done.stderr
        return [line for line in done.stdout.splitlines() if line.startswith("GPU turns:")]

    assert check(HEAD) == ["GPU turns: up to 4 runs at once (the default; gpu_turns sets it)"]
    assert check(HEAD + "gpu_turns = 1\n") == ["GPU turns: one run at a time"]
    assert check(HEAD + "gpu_turns = 3\n") == ["GPU turns: up to 3 runs at once"]
    assert check(HEAD + "gpu_turns = 3\n", **{TURNS_ENV: "2"}) == \
        [f"GPU turns: up to 2 runs at once ({TURNS_ENV}=2 in this environment wins over gpu_turns = 3)"]
    assert check(HEAD + "gpu_turns = 3\n", **{TURNS_ENV: "lots"}) == \
        [f"GPU turns: one run at a time ({TURNS_ENV}='lots' is not a whole number from 1 to 16; GPU runs take "
         f"one turn at a time (set it the same for every learner, e.g. {TURNS_ENV}=2))"]
