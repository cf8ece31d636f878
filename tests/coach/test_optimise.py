"""The optimiser driven end to end through litellm's real code path (a scripted CustomLLM) and the
real verifier on our simulator: compile error, cheat, slow, fast; budgets; the log; resuming."""

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from scripted_llm import register

from tutor.ai.config import AISettings
from tutor.coach.optimise import Attempt, Budget, TaskTarget, extract_candidate, optimise, read_log
from tutor.durations import parse_duration
from tutor.coach.tasks import load_task
from cli_run import run_cli
from once import once_per_run

TASK = load_task("reduce_sum")
NAIVE, EXPERT = TASK.source("naive"), TASK.source("expert")
COMPILE_ERROR = NAIVE.replace("@cuda.jit\n", "@cuda.jit\ndef broken(out):\n    xs = [1.0]\n    out[0] = xs[0]\n\n\n@cuda.jit\n", 1)
COMPILE_ERROR = COMPILE_ERROR.replace("def launch(out, x):\n", "def launch(out, x):\n    broken[1, 1](out)\n", 1)
CHEAT = ("import numpy as np\nfrom numba import cuda\n\n\ndef launch(out, x):\n"
         "    out.copy_to_host()\n    host = x.copy_to_host()\n    out[0] = np.sum(host)\n")
SETTINGS = AISettings(model="scripted/tutor", timeout=30)
ROOT = Path(__file__).resolve().parents[2]


def reply(code, why="Fewer passes over memory."):
    return f"Here is my kernel.\n```python\n{code}```\n\n## Why it is faster\n{why}"


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_the_loop_feeds_back_each_failure_keeps_the_best_and_logs_every_round(tmp_path):
    assert "broken[1, 1](out)" in COMPILE_ERROR
    provider = register([reply(COMPILE_ERROR), reply(CHEAT), reply(NAIVE), reply(EXPERT), reply(NAIVE)])
    log = tmp_path / "log.jsonl"
    events = []
    result = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=8, target=1.5),
                      log_path=log, on_event=lambda kind, data: events.append(kind))
    kinds = [sorted({f["kind"] for f in a.failures}) for a in result.attempts]
    assert "compile_error" in kinds[0] and kinds[1] == ["static"] and kinds[2] == [] and kinds[3] == []
    # the feedback sent back names each failure
    second_prompt = provider.calls[1][-1]["content"]
    assert "REJECTED" in second_prompt and "compile_error" in second_prompt and "`broken`" in second_prompt
    assert "static" in provider.calls[2][-1]["content"]
    assert "CORRECT" in provider.calls[3][-1]["content"]
    # the cheat never becomes best; the fast one is; the target stops the loop
    assert result.best is result.attempts[3] and result.best.score > 1.5 and result.best.score_kind == "modelled"
    assert result.stop_reason == "target" and len(result.attempts) == 4
    assert "Fewer passes" in result.best.explanation and "+" in result.diff()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["event"] for r in records] == ["start", "attempt", "attempt", "attempt", "attempt", "end"]
    assert records[2]["correct"] is False and records[4]["code_hash"] and records[1]["prompt_hash"]
    assert events.count("round") == 4 and "delta" in events


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_budgets_stop_the_loop_rounds_tokens_and_cancel(tmp_path):
    register([reply(NAIVE)] * 3)
    result = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=2))
    assert result.stop_reason == "rounds" and len(result.attempts) == 2
    register([reply(NAIVE)] * 3)
    result = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=5, tokens=50))
    assert result.stop_reason == "tokens" and len(result.attempts) == 1  # the first reply spends 100+ tokens
    cancel = threading.Event()
    register([("slow", 0.05, reply(NAIVE))])
    result = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=5), cancel=cancel,
                      on_event=lambda kind, data: cancel.set() if kind == "delta" else None)
    assert result.stop_reason == "cancelled" and result.best is None


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_several_samples_per_round_and_resuming_from_the_log(tmp_path):
    log = tmp_path / "log.jsonl"
    register([reply(CHEAT), reply(NAIVE)])
    first = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=1, samples=2), log_path=log)
    assert [(a.round, a.sample) for a in first.attempts] == [(1, 1), (1, 2)] and first.best.round == 1
    provider = register([reply(EXPERT)])
    _, earlier = read_log(log)
    resumed = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=2), log_path=log,
                       resume=earlier)
    assert [a.round for a in resumed.attempts] == [1, 1, 2] and resumed.best.round == 2
    assert "Round 1 sample 1: REJECTED" in provider.calls[0][-1]["content"]
    assert len([line for line in log.read_text().splitlines() if '"attempt"' in line]) == 3


def test_a_reply_without_code_and_a_failing_model_are_fed_back_not_fatal():
    from tutor.ai.llm import import_litellm

    litellm = import_litellm()
    provider = register(["I would use shared memory.",
                         litellm.APIConnectionError(message="Connection refused", llm_provider="scripted",
                                                    model="scripted/tutor"),
                         reply(NAIVE)])
    result = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=3))
    assert result.attempts[0].code is None and result.attempts[1].error and result.attempts[2].correct
    assert "no ```python block" in provider.calls[1][-1]["content"]
    assert "model call failed" in provider.calls[2][-1]["content"]


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_the_loop_stops_on_an_error_whose_kind_repeats_not_on_words_in_its_text():
    """A refused key stops the session at once (every call would be refused the same way); a
    timeout goes on to the next round even when its text says "key" or "auth"."""
    from tutor.ai.llm import import_litellm

    litellm = import_litellm()
    register([litellm.AuthenticationError(message="Incorrect API key provided", llm_provider="scripted",
                                          model="scripted/tutor"), reply(NAIVE)])
    refused = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=3))
    assert refused.stop_reason == "model_error" and len(refused.attempts) == 1
    assert refused.attempts[0].error_kind == "auth"
    register([litellm.Timeout(message="the auth proxy held the key request too long", llm_provider="scripted",
                              model="scripted/tutor"), reply(NAIVE)])
    slow = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=2))
    assert slow.attempts[0].error_kind == "timeout" and slow.stop_reason == "rounds"
    assert len(slow.attempts) == 2 and slow.attempts[1].correct


def test_extracting_the_candidate_and_durations():
    code, why = extract_candidate("```python\nx = 1\n```\ntext\n```python\ndef launch(out):\n    pass\n```\n"
                                  "**Why it is faster:** coalesced.", "task")
    assert code.startswith("def launch") and why == "coalesced."
    assert extract_candidate("no code", "task") == (None, "")
    assert parse_duration("15m") == 900 and parse_duration("90s") == 90 and parse_duration("1h") == 3600
    with pytest.raises(ValueError):
        parse_duration("soon")


def optimise_over_http(tmp_path, replies: list, rounds: int, key: str | None = "sk-loopback", flags=(), config=""):
    """`gpu-tutor optimise reduce_sum` from the naive kernel, its model a loopback HTTP server that
    sends `replies`: (the finished process, the server, the starting file, the environment). With
    `key` None no provider key is in the environment, as on a machine with only a local server;
    `flags` go on the command line, `config` is the settings file's text."""
    import os

    from loopback_llm import ChatServer

    tmp_path.mkdir(parents=True, exist_ok=True)
    start = tmp_path / "naive.py"
    start.write_text(NAIVE)
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    env.update({"GPU_TUTOR_DATA": str(tmp_path / "data"), "GPU_TUTOR_CONFIG": str(tmp_path / "none.toml")})
    if key is not None:
        env["OPENAI_API_KEY"] = key
    (tmp_path / "none.toml").write_text(config)
    with ChatServer(replies) as server:
        done = run_cli("optimise", "reduce_sum", str(start), "--model", "openai/tiny", "--api-base", server.url,
                       "--rounds", str(rounds), "--backend", "sim", "--json", *flags, env=env, cwd=ROOT)
    return done, server, start, env


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_one_round_over_real_http_through_the_cli_scores_the_modelled_time(tmp_path):
    """The expert reads the floor's bytes at the scored shape (every input read once, the output
    written once), but in two launches and three rounds of loads: its modelled speedup is the naive
    kernel's modelled time over its own, and it is not at the model's floor, so the session goes on."""
    done, server, start, env = optimise_over_http(tmp_path, [reply(EXPERT, "one atomic per block")] * 2, 2)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["stop_reason"] == "rounds" and len(server.requests) == 2, out["stop_reason"]
    best, timing = out["best"], out["best"]["timing"]
    assert best["correct"] and not best["at_floor"] and best["score_kind"] == "modelled"
    # the expert over the naive kernel: 1.86x modelled with its instructions counted (5.3x measured on an H100)
    assert best["score"] == pytest.approx(timing["baseline_modelled_us"] / timing["modelled_us"]) and best["score"] > 1.5
    assert timing["floor_us"] < timing["modelled_us"] < timing["baseline_modelled_us"]
    assert timing["shape"] == [20011] and timing["floor_bytes"] == 20011 * 4 + 4
    assert [k["name"] for k in timing["kernels"]] == ["zero", "block_sums"]
    assert Path(out["saved_to"]).read_text() == EXPERT and start.read_text() == NAIVE
    assert "one atomic per block" in best["explanation"]
    prompt = server.requests[0]["body"]["messages"][1]["content"]
    assert "launch(out, *inputs)" in prompt and "Sum reduction" in prompt
    # the model is told how it is scored and where, with the numbers
    assert "scored shape (20011,)" in prompt and "80,048 bytes" in prompt and "rtol=" in prompt
    assert "modelled time at (20011,)" in prompt and "It is not a measurement" in prompt
    assert "rounds of loads" in prompt and "DRAM (303 ns)" in prompt and "a launch (2 us)" in prompt
    assert "seed you never see" in prompt and "cuda.fma" in prompt and "dynamic shared memory" in prompt
    # and the feedback says what bounds each of its kernels
    feedback = server.requests[1]["body"]["messages"][1]["content"]
    assert "modelled speedup (simulator, H200 model)" in feedback and "kernel `block_sums`" in feedback
    replay = run_cli("optimise", "--replay", out["log"], env=env, cwd=ROOT)
    assert replay.returncode == 0 and "round 1:" in replay.stdout and "(modelled; calibrated)" in replay.stdout


# -- a scripted model's session over loopback HTTP: each round a case today's verifier got wrong --
# Host maths on what launch() receives: with numpy arrays standing in for device arrays it passed,
# its one kernel moving 8 bytes (a 20,000x "traffic ratio"); a GPU's device arrays have no arithmetic.
HOST_MATHS = """from numba import cuda


@cuda.jit
def put(out, v):
    if cuda.grid(1) == 0:
        out[0] = v[0]


def launch(out, x):
    acc = x[0:1]
    for i in range(1, x.shape[0]):
        acc = acc + x[i:i + 1]
    put[1, 1](out, acc)
"""
# A compile error (a 1-d array indexed with two): Numba's message came without the kernel's line.
MISINDEXED = NAIVE.replace("cuda.atomic.add(out, 0, x[i])", "cuda.atomic.add(out, 0, x[i, 0])")
# Writes into its input: the message named neither the array nor the line.
MUTATES = NAIVE.replace("        cuda.atomic.add(out, 0, x[i])\n", "        cuda.atomic.add(out, 0, x[i])\n        x[i] = 0\n")
# The same traffic as the naive kernel, sent later: the tie goes to the later round.
RESENT = NAIVE.replace("TPB = 256", "TPB = 256  # the same work, sent again")
SCRIPT = [HOST_MATHS, MISINDEXED, MUTATES, NAIVE, RESENT]


@pytest.fixture(scope="module")
def scripted_session(tmp_path_factory):
    """One CLI session, five rounds, no provider key in the environment (a local server): (its JSON
    output, the prompts the model was sent, the requests as the server saw them). Made once in the
    run: the workers that share these tests read it."""
    assert "x[i, 0])" in MISINDEXED and "x[i] = 0" in MUTATES and RESENT != NAIVE

    def session():
        done, server, _, _ = optimise_over_http(tmp_path_factory.mktemp("scripted"), [reply(c) for c in SCRIPT],
                                                len(SCRIPT), key=None)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), server.requests

    out, requests = once_per_run(tmp_path_factory, "optimise-scripted-session", session)
    prompts = [r["body"]["messages"][1]["content"] for r in requests]
    return out, prompts, requests


def _feedback(prompt: str) -> str:
    """What the verifier said about the last round's candidate, in a prompt."""
    return prompt.split("## What the verifier said about it")[1].split("## Earlier rounds")[0]


def _last_candidate(prompt: str) -> str:
    """The last round's candidate as the prompt shows it, between its fences."""
    return prompt.split("## Your last candidate")[1].split("```python\n", 1)[1].split("\n```", 1)[0]


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_over_http_host_maths_on_device_arrays_is_refused_as_on_a_gpu(scripted_session):
    out, prompts, _ = scripted_session
    first = out["attempts"][0]
    assert not first["correct"] and {f["kind"] for f in first["failures"]} == {"runtime_error"}
    assert "no host arithmetic" in first["failures"][0]["message"]
    assert "no host arithmetic" in _feedback(prompts[1]) and "Do the maths in a kernel" in _feedback(prompts[1])


def test_over_http_no_score_is_past_what_the_floor_allows(scripted_session):
    """The impossible ratio the host maths claimed: now no attempt scores above the naive kernel's
    modelled time over the model's floor (one launch, one wait on DRAM)."""
    out, _, _ = scripted_session
    scored = [a for a in out["attempts"] if a["score"] is not None]
    assert scored
    for a in scored:
        assert a["score"] <= a["timing"]["baseline_modelled_us"] / a["timing"]["floor_us"]


def test_over_http_a_compile_error_names_the_kernels_line(scripted_session):
    out, prompts, _ = scripted_session
    line = MISINDEXED.splitlines().index("        cuda.atomic.add(out, 0, x[i, 0])") + 1
    (failure,) = out["attempts"][1]["failures"]
    assert failure["kind"] == "compile_error" and failure["line"] == line
    assert "`x[i, 0]` gives `x` 2 indexes, but `x` is a 1-d array" in failure["message"]  # Numba's getitem, in words
    assert f"line {line}" in _feedback(prompts[2])


def test_over_http_an_input_mutation_names_the_array_and_line_once(scripted_session):
    out, prompts, _ = scripted_session
    line = MUTATES.splitlines().index("        x[i] = 0") + 1
    failures = out["attempts"][2]["failures"]
    assert {f["kind"] for f in failures} == {"input_mutated"}  # the changed second run follows from it
    assert all(f["array"] == "x" and f["line"] == line for f in failures)
    said = _feedback(prompts[3])
    assert "input `x`" in said and f"line {line}" in said and said.count("input_mutated") == 1


def test_over_http_the_model_sees_the_code_its_feedbacks_line_numbers_count(scripted_session):
    """A model keeps no memory between calls: each prompt shows the last candidate exactly as the
    verifier ran it, so "line 16" is line 16 of the code beside it."""
    out, prompts, _ = scripted_session
    for n, code in enumerate(SCRIPT[:3]):
        shown = _last_candidate(prompts[n + 1])
        assert shown == code.rstrip("\n"), n
        for f in out["attempts"][n]["failures"]:
            if isinstance(f.get("line"), int):
                assert f"line {f['line']}" in _feedback(prompts[n + 1])
                assert shown.splitlines()[f["line"] - 1] == code.splitlines()[f["line"] - 1]
    line = MISINDEXED.splitlines().index("        cuda.atomic.add(out, 0, x[i, 0])") + 1
    assert _last_candidate(prompts[2]).splitlines()[line - 1].strip() == "cuda.atomic.add(out, 0, x[i, 0])"


def test_over_http_each_prompt_keeps_what_failed_in_every_earlier_round_and_why(scripted_session):
    _, prompts, _ = scripted_session
    earlier = [p.split("## Earlier rounds")[1] if "## Earlier rounds" in p else "" for p in prompts]
    assert earlier[0] == earlier[1] == ""  # the first prompt has no rounds; the second only the last one
    for n in (2, 3, 4):
        assert "round 1: REJECTED: runtime_error" in earlier[n] and "no host arithmetic" in earlier[n]
    for n in (3, 4):
        assert "round 2: REJECTED: compile_error at line 16" in earlier[n] and "`x` is a 1-d array" in earlier[n]
    assert "round 3: REJECTED: input_mutated at line 17" in earlier[4] and "its input `x`" in earlier[4]
    assert earlier[4].index("round 3") < earlier[4].index("round 2") < earlier[4].index("round 1")  # newest first
    assert "It tried (your words): Fewer passes over memory." in earlier[4]


def test_earlier_rounds_fill_the_prompt_only_up_to_its_token_budget(scripted_session):
    """Summaries newest first, as many as fit the budget (tokens estimated as characters / 4), and
    a line that says how many older ones were left out."""
    from dataclasses import replace

    from tutor.coach.optimise import approx_tokens, history_lines

    assert approx_tokens("abcd" * 100) == 100 and approx_tokens("abcde") == 2 and approx_tokens("") == 0
    out, _, _ = scripted_session
    rejected = _attempts(out)[:3]
    many = [replace(rejected[n % 3], round=n + 1) for n in range(60)]
    lines = history_lines(many, None, "task", tokens=1000)
    assert sum(approx_tokens(line) + 1 for line in lines) <= 1000
    kept, note = lines[:-1], lines[-1]
    assert kept[0].startswith("- round 60: REJECTED") and len(kept) >= 3
    assert [int(line.split(":")[0].split()[-1]) for line in kept] == list(range(60, 60 - len(kept), -1))
    assert note == f"- {60 - len(kept)} earlier attempt(s) left out to keep this prompt short."
    whole = history_lines(many, None, "task", tokens=10**6)
    assert len(whole) == 60 and "left out" not in whole[-1]


def test_over_http_a_tie_keeps_the_incumbent(scripted_session):
    """A later candidate only as good as the best shows nothing more, and may be wrong where the
    verifier did not look; the prompts build on the best, so it stays."""
    out, _, _ = scripted_session
    naive, resent = out["attempts"][3], out["attempts"][4]
    assert naive["correct"] and resent["correct"] and naive["score"] == resent["score"]
    assert out["best"]["round"] == 4 and out["best"]["code"] == NAIVE


def _attempts(out) -> list[Attempt]:
    return [Attempt(**a) for a in out["attempts"]]


def test_the_best_moves_only_for_a_strictly_better_verified_candidate(scripted_session):
    from dataclasses import replace

    from tutor.coach.optimise import better

    out, _, _ = scripted_session
    naive = _attempts(out)[3]
    assert naive.verified and naive.score is not None
    faster = replace(naive, round=6, score=naive.score * 1.5)
    unscored = replace(naive, round=6, score=None, score_kind=None)
    assert better(faster, naive) and not better(naive, faster)
    assert not better(replace(naive, round=6), naive)  # a tie keeps the incumbent
    assert not better(unscored, naive) and better(naive, unscored)  # a score beats none
    # two unscored candidates (each too slow to simulate whole at the scored shape) are a tie too
    assert not better(replace(unscored, round=7), unscored)
    flagged = replace(faster, round=7, score=naive.score * 3, flags=["speedup over 10x"])
    assert not better(flagged, naive) and better(naive, flagged)


def test_a_wrong_candidate_never_becomes_the_best_whatever_a_log_claims(scripted_session):
    """A wrong candidate is never the best, at any score: the best is chosen on the whole record
    (a judged module, no failure, every line run), not on a `correct` flag a log read back may hold.
    Resumed from a log whose line says the candidate that wrote into its input was correct and
    twice as fast, the session keeps the naive kernel."""
    from dataclasses import replace

    out, _, _ = scripted_session
    attempts = _attempts(out)
    mutates, naive = attempts[2], attempts[3]
    assert not mutates.correct and {f["kind"] for f in mutates.failures} == {"input_mutated"}
    claimed = replace(mutates, round=5, correct=True, score=naive.score * 2, score_kind=naive.score_kind)
    unchecked = replace(naive, round=6, score=naive.score * 2, unchecked=[12])
    for wrong in (mutates, claimed, unchecked, replace(claimed, failures=[], code=None)):
        assert not wrong.verified
        result = optimise(TaskTarget("reduce_sum", "sim"), NAIVE, SETTINGS, Budget(rounds=wrong.round),
                          resume=[naive, wrong])
        assert result.stop_reason == "rounds" and len(result.attempts) == 2
        assert result.best is naive, (wrong.round, result.best and result.best.round)


@pytest.mark.e2e  # long: a whole verification or session (CI runs e2e)
def test_over_http_a_local_server_gets_a_placeholder_key_and_answers(scripted_session):
    out, _, requests = scripted_session
    assert all(r["authorization"] == "Bearer sk-no-key-required" for r in requests)
    assert len(requests) == len(SCRIPT) and not any(a["error"] for a in out["attempts"])


def test_without_a_model_the_cli_says_so_and_shows_the_expert_only_if_policy_allows(tmp_path):
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    start = tmp_path / "naive.py"
    start.write_text(NAIVE)
    config = tmp_path / "c.toml"
    env = {**os.environ, "GPU_TUTOR_DATA": str(tmp_path / "data"), "GPU_TUTOR_CONFIG": str(config)}

    def run():
        return run_cli("optimise", "reduce_sum", str(start), "--backend", "sim", env=env, cwd=root)

    config.write_text("")
    closed = run()
    assert closed.returncode == 2 and "no model is configured" in closed.stderr and "def launch" not in closed.stdout
    config.write_text("[policy]\nfull_code_hints = true\n")
    opened = run()
    assert opened.returncode == 2 and "expert kernel" in opened.stdout and EXPERT.strip() in opened.stdout


# Escaped today's main (42f2d21): served by a scripted model, this candidate was judged correct,
# scored 257.5x (the expert scores 2.0x) and kept as best: its last kernel erased the simulator's
# records of every launch before it, so the verifier counted 8 bytes of traffic.
ERASER = NAIVE.replace("def launch(out, x):", """@cuda.jit
def erase(out):
    cuda.traces.clear()
    cuda.launches.clear()
    out[0] = out[0] + 0.0


def launch(out, x):""").rstrip() + "\n    erase[1, 1](out)\n"

# The same trick one layer down: a frame walk that the screen does not understand as one.
FORGER = NAIVE.replace("    if i < n:\n        cuda.atomic.add(out, 0, x[i])",
                       "    g = (k for k in range(1))\n    o = g.gi_frame.f_builtins['__import__']('os')\n"
                       "    o.close(o.open(MARKER, 65))\n    o._exit(0)")


def test_over_http_an_escaping_candidate_is_never_accepted_nor_run(tmp_path):
    assert "erase[1, 1](out)" in ERASER and "gi_frame" in FORGER
    marker = tmp_path / "ran"
    forger = FORGER.replace("MARKER", repr(str(marker)))
    done, _, _, _ = optimise_over_http(tmp_path, [reply(ERASER, "it reads less"), reply(forger, "it exits early")], 2)
    out = json.loads(done.stdout)
    assert out["best"] is None, out
    assert [a["correct"] for a in out["attempts"]] == [False, False]
    assert all({f["kind"] for f in a["failures"]} == {"static"} for a in out["attempts"])
    assert not marker.exists() and out.get("saved_to") is None


def test_past_the_screen_erasing_the_records_is_impossible():
    """Defence in depth: the simulator's launch records are not attributes a candidate can reach, and
    the real compiler refuses a kernel that names them."""
    from tutor.engine.loading.sim_loader import load_module_for_sim

    module = load_module_for_sim(ERASER, "candidate.py")
    with pytest.raises(Exception) as caught:
        module.namespace["erase"].py_func(np.zeros(1, np.float32))
    assert "cuda.traces" in str(caught.value)
    from tutor.engine.loading.compile import compile_launches

    failures = compile_launches(ERASER, "candidate.py", [("erase", (("array", "float32", 1),))])
    assert failures and failures[0]["kind"] == "compile_error" and "`erase`" in failures[0]["message"]


def test_a_puzzles_prompt_and_feedback_name_its_costly_lines_by_the_memory_counters(catalog):
    """The model is told where the bytes go: the starting kernel's costliest lines, and each correct
    candidate's, as the simulator's trace counts them (sectors per request against the ideal)."""
    from tutor.coach.optimise import PuzzleTarget, feedback_for

    puzzle = catalog.get("transpose")
    target = PuzzleTarget(puzzle, puzzle.reference, "sim")
    try:
        assert target.check_start().passed
        described = target.describe()
        assert "memory counters" in described and "sectors per request" in described
        judged = target.judge(puzzle.reference)
    finally:
        target.close()
    assert judged.correct and any("sectors per request" in c for c in judged.timing["counters"])
    attempt = Attempt(round=1, sample=0, model="m", prompt_hash="h", prompt_tokens=1, completion_tokens=1,
                      cost_usd=None, latency_s=0.0, code_hash="c", code=puzzle.reference, correct=True, compiled=True,
                      failures=[], score=None, score_kind=None, timing=judged.timing, flags=[], explanation="")
    assert "- memory counters: line 28" in feedback_for(attempt, None, "puzzle")


def test_the_optimiser_verifies_with_the_time_limit_verify_has():
    """A candidate the optimiser kept must verify the same way when the learner runs `gpu-tutor
    verify` on it: one limit, defined once (verify's), not 300 s here and 120 s there."""
    import inspect

    from tutor.coach import verify as verify_module

    limit = inspect.signature(verify_module.verify).parameters["timeout"].default
    assert TaskTarget("reduce_sum", "sim").timeout == limit == verify_module.DEFAULT_TIMEOUT


def _runs_and_lacks(text: str) -> tuple[str, str]:
    runs, _, lacks = text.partition("It does not run")
    return runs, lacks


def test_the_prompt_lists_what_the_simulator_runs_syncwarp_and_the_shuffles_included(scripted_session):
    _, prompts, _ = scripted_session
    runs, lacks = _runs_and_lacks(prompts[0].split("The simulator runs")[1])
    for name in ("cuda.syncwarp", "cuda.shfl_sync", "cuda.shfl_up_sync", "cuda.shfl_down_sync", "cuda.shfl_xor_sync",
                 "cuda.ballot_sync", "cuda.syncthreads_count", "cuda.atomic.add", "cuda.fma", "cuda.shared.array"):
        assert name in runs, name
    assert "cuda.match_any_sync" in lacks and "cooperative groups" in lacks


def test_a_function_added_to_the_simulator_is_offered_to_the_model(monkeypatch):
    """The list is read from the simulated module, not written beside it: a warp function the
    simulator gains moves from "does not run" to "runs" with no edit to the prompt."""
    from tutor.coach.optimise import sim_support_text
    from tutor.engine.sim.fakecuda import FakeCuda

    runs, lacks = _runs_and_lacks(sim_support_text())
    assert "cuda.match_any_sync" not in runs and "cuda.match_any_sync" in lacks
    monkeypatch.setattr(FakeCuda, "match_any_sync", lambda self, mask, value: mask, raising=False)
    monkeypatch.setattr(FakeCuda, "reduce_add_sync", lambda self, mask, value: value, raising=False)
    runs, lacks = _runs_and_lacks(sim_support_text())
    assert "cuda.match_any_sync" in runs and "cuda.match_any_sync" not in lacks
    assert "cuda.reduce_add_sync" in runs


def test_the_defaults_fit_a_reasoning_model_on_your_own_machine(scripted_session):
    """Its first reply in the optimiser took 5.6 minutes: each call waits at least 15 minutes, asks
    for replies of 16k tokens (it thinks before it writes; 4,000 cut it off), and the session's wall
    time holds the default rounds of such replies, each with a verification of a minute."""
    from tutor.ai.config import OPTIMISE_REPLY_TOKENS, OPTIMISE_TIMEOUT

    _, _, requests = scripted_session
    assert all(r["body"]["max_tokens"] == OPTIMISE_REPLY_TOKENS >= 16_000 for r in requests)
    local = AISettings(model="openai/tiny", api_base="http://127.0.0.1:8080/v1").for_optimiser()
    assert local.request_timeout == OPTIMISE_TIMEOUT >= 15 * 60
    assert Budget().wall_s >= Budget().rounds * (5.6 * 60 + 60)


def test_the_request_timeout_the_reply_cap_and_the_budget_are_flags_and_settings(tmp_path):
    """Flags over the [ai] settings over the defaults, as the log's start record and the requests
    the server saw tell; a reply slower than the setting's wait is a timeout that names the setting."""
    said = "I would tile it in shared memory."
    done, server, _, _ = optimise_over_http(
        tmp_path / "flags", [said], 1, flags=("--request-timeout", "20m", "--reply-tokens", "20000", "--budget", "3h"),
        config='[ai]\noptimise_request_timeout = "40m"\noptimise_reply_tokens = 30000\noptimise_wall_time = "4h"\n')
    assert done.returncode == 1, done.stderr  # no code in the reply: nothing to keep
    start, attempts = read_log(Path(json.loads(done.stdout)["log"]))
    assert (start["request_timeout_s"], start["reply_tokens"], start["budget"]["wall_s"]) == (1200, 20000, 10800)
    assert server.requests[0]["body"]["max_tokens"] == 20000 and attempts[0].code is None
    done, server, _, _ = optimise_over_http(
        tmp_path / "settings", [("slow", 3.0, said)], 1,
        config='[ai]\noptimise_request_timeout = "1s"\noptimise_reply_tokens = 30000\noptimise_wall_time = 240\n')
    start, attempts = read_log(Path(json.loads(done.stdout)["log"]))
    assert (start["request_timeout_s"], start["reply_tokens"], start["budget"]["wall_s"]) == (1, 30000, 14400)
    assert server.requests[0]["body"]["max_tokens"] == 30000
    assert attempts[0].error_kind == "timeout" and "no answer within 1 s" in attempts[0].error
    assert "raise [ai] optimise_request_timeout (or --request-timeout)" in attempts[0].error
    done, _, _, _ = optimise_over_http(tmp_path / "bad", [], 1, flags=("--request-timeout", "soon"))
    assert done.returncode == 2 and "--request-timeout: 'soon' is not a duration" in done.stderr
