"""The real program, as a learner starts it: the console script in its own process, its output
read from pipes. The other CLI tests call the same main() in the test's process (cli_run.py); these
keep what only a process shows (the script's entry point, its environment, its exit status and its
pipes) tested, end to end, at the cost of an interpreter start and numba's and litellm's imports."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from loopback_llm import ChatServer

from tutor.coach.tasks import load_task

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("gpu-tutor")
WRONG = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i]\n"


def gpu_tutor(*args, tmp_path, env_extra=None):
    (tmp_path / "none.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    env.update({"GPU_TUTOR_DATA": str(tmp_path / "data"), "GPU_TUTOR_CONFIG": str(tmp_path / "none.toml"),
                "GPU_TUTOR_NO_GPU": "1", **(env_extra or {})})
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)


def test_the_console_script_checks_a_kernel_file(tmp_path, catalog):
    kernel = tmp_path / "map.py"
    kernel.write_text(catalog.get("map").reference)
    done = gpu_tutor("check", "map", kernel, "--json", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["passed"] is True
    kernel.write_text(WRONG)
    assert gpu_tutor("check", "map", kernel, tmp_path=tmp_path).returncode == 1


def test_the_console_script_streams_a_hint_from_a_local_server_with_no_key_set(tmp_path):
    kernel = tmp_path / "map.py"
    kernel.write_text(WRONG)
    with ChatServer(["Your line 7 stores `a[i]` unchanged: what should be added?"]) as server:
        done = gpu_tutor("hint", "map", kernel, "--model", "openai/tiny", "--api-base", server.url, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Your line 7 stores `a[i]` unchanged: what should be added?"
    assert server.requests[0]["authorization"] == "Bearer sk-no-key-required"


def test_the_console_script_runs_one_optimiser_round_over_http_and_replays_its_log(tmp_path):
    task = load_task("reduce_sum")
    start = tmp_path / "naive.py"
    start.write_text(task.source("naive"))
    reply = f"```python\n{task.source('expert')}```\n\n## Why it is faster\none atomic per block"
    with ChatServer([reply]) as server:
        done = gpu_tutor("optimise", "reduce_sum", start, "--model", "openai/tiny", "--api-base", server.url,
                         "--rounds", "1", "--backend", "sim", "--json", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["best"]["correct"] and Path(out["saved_to"]).read_text() == task.source("expert")
    replay = gpu_tutor("optimise", "--replay", out["log"], tmp_path=tmp_path)
    assert replay.returncode == 0 and "round 1: correct" in replay.stdout
