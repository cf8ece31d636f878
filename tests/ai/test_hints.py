"""AI hints through litellm's real code path with a scripted provider (litellm's CustomLLM)."""

import threading

import pytest
from scripted_llm import register

from tutor.ai.config import AISettings
from tutor.ai.hints import HintLog, SimChecker, ask_hint, build_messages, failure_context
from tutor.engine.runner import Runner

WRONG = """from numba import cuda


@cuda.jit
def kernel(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i]
"""

SETTINGS = AISettings(model="scripted/tutor", timeout=10)


@pytest.fixture(scope="module")
def map_case(catalog):
    puzzle = catalog.get("map")
    with Runner("sim") as runner:
        result = runner.check("map", WRONG, keep_traces=True, compile=False)
    with SimChecker("map") as passes:
        yield puzzle, failure_context(result), passes


def ask(map_case, level=1, settings=SETTINGS, **kw):
    puzzle, context, passes = map_case
    return ask_hint(puzzle, level, WRONG, context, [], settings, passes=passes, **kw)


def test_the_context_names_the_failure_and_the_failing_threads_accesses_but_not_the_reference(map_case):
    puzzle, context, _ = map_case
    assert "wrong" in context.lower() and "Trace of block (0,), thread" in context
    messages = build_messages(puzzle, 2, WRONG, context, ["an earlier hint"])
    text = "\n".join(m["content"] for m in messages)
    assert "  7 | " in text and "an earlier hint" in text and "level 2 of 4: the idea" in text
    assert "out[local_i] = a[local_i] + 10" not in text  # the reference's line never goes out


def test_a_normal_hint_is_shown_whole_once_judged_and_reports_tokens_and_cost(map_case, tmp_path):
    provider = register(["What does your line 7 do to each value before storing it?"])
    pieces, received = [], []
    outcome = ask(map_case, on_text=pieces.append, on_progress=received.append, log=HintLog(tmp_path / "log.jsonl"))
    assert outcome.source == "ai" and outcome.leaks == 0
    assert pieces == [outcome.text]  # once, whole, after the guard
    assert len(received) > 3 and received == sorted(received) and received[-1] == len(outcome.text)
    assert outcome.usage.prompt_tokens == 100 and outcome.usage.completion_tokens == 12
    assert outcome.usage.cost_usd == pytest.approx(100 * 1e-6 + 12 * 2e-6)
    assert "Trace of block" in provider.calls[0][1]["content"]
    assert '"event": "hint"' in (tmp_path / "log.jsonl").read_text()


def test_a_leaking_hint_is_withheld_and_the_model_is_asked_again_with_its_reply_and_the_reason(map_case, tmp_path):
    leak = "Replace your body with:\n```python\nj = cuda.threadIdx.x\nout[j] = a[j] + 10\n```"
    provider = register([leak, "Which number do you add to each element?"])
    pieces, statuses = [], []
    outcome = ask(map_case, on_text=pieces.append, on_status=statuses.append, log=HintLog(tmp_path / "l.jsonl"))
    assert outcome.source == "ai" and outcome.text == "Which number do you add to each element?"
    assert outcome.leaks == 1 and outcome.attempts == 2
    assert pieces == ["Which number do you add to each element?"]  # nothing of the withheld reply
    assert statuses and statuses[0].startswith("Withheld a hint that gave too much away (its code stands for 1 of")
    *_, own, why = provider.calls[1]
    assert own == {"role": "assistant", "content": leak}
    assert why["role"] == "user" and "withheld" in why["content"]
    assert "stands for 1 of the 1 statements" in why["content"]
    assert "    out[j] = a[j] + 10" in why["content"]  # the model's own line at fault
    log = (tmp_path / "l.jsonl").read_text()
    assert "leak_withheld" in log and "out[j]" not in log  # reasons are logged, code never


def test_three_leaks_give_the_authored_hint(map_case):
    leak = "Use `out[j] = a[j] + 10` with `j = cuda.threadIdx.x`."
    register([leak, leak, leak])
    outcome = ask(map_case)
    assert outcome.source == "authored" and outcome.leaks == 3
    assert outcome.text == map_case[0].hints[0] and "gave the answer away 3 time(s)" in outcome.note


@pytest.mark.parametrize("exc_name, kind", [("AuthenticationError", "auth"), ("RateLimitError", "rate_limit"),
                                            ("Timeout", "timeout")])
def test_provider_errors_give_one_line_and_the_authored_hint(map_case, exc_name, kind):
    from tutor.ai.llm import import_litellm

    litellm = import_litellm()
    exc = getattr(litellm, exc_name)(message="scripted failure", llm_provider="scripted", model="scripted/tutor")
    register([exc])
    outcome = ask(map_case, level=2)
    assert outcome.source == "authored" and outcome.text == map_case[0].hints[1]
    assert "\n" not in outcome.note and "Traceback" not in outcome.note
    assert {"auth": "key", "rate_limit": "rate limited", "timeout": "no answer within"}[kind] in outcome.note


def test_a_slow_stream_is_cancelled(map_case):
    register([("slow", 0.2, "word " * 100)])
    cancel = threading.Event()
    received, pieces = [], []

    def on_progress(n):
        received.append(n)
        if len(received) == 3:
            cancel.set()

    outcome = ask(map_case, on_text=pieces.append, on_progress=on_progress, cancel=cancel)
    assert outcome.cancelled and len(received) == 3 and pieces == []


def test_no_model_means_the_authored_hint_without_importing_anything(map_case):
    outcome = ask(map_case, level=3, settings=AISettings())
    assert outcome.source == "authored" and outcome.text == map_case[0].hints[2]
    assert "no model is configured" in outcome.note


def test_full_code_is_refused_unless_the_policy_allows_it(map_case):
    outcome = ask(map_case, level=4)
    assert outcome.source == "authored" and "policy" in outcome.note
    register(["```python\nfrom numba import cuda\n\n@cuda.jit\ndef kernel(out, a):\n"
              "    i = cuda.threadIdx.x\n    out[i] = a[i] + 10\n```"])
    allowed = AISettings(model="scripted/tutor", full_code_hints=True)
    outcome = ask(map_case, level=4, settings=allowed)
    assert outcome.source == "ai" and "a[i] + 10" in outcome.text


# Escaped today's main: the code holder streamed all but backtick-fenced code live, so a solution
# indented four spaces (or in a ~~~ fence) reached the learner word by word before the guard had
# judged the reply, and withholding it afterwards came too late.
def test_nothing_of_a_reply_reaches_the_learner_before_the_guard_has_judged_it(map_case):
    indented = ("Here is the fix:\n\n    @cuda.jit\n    def kernel(out, a):\n        t = cuda.threadIdx.x\n"
                "        out[t] = a[t] + 10\n\nThat adds ten.")
    tilde = "Like so:\n~~~\nout[i] = a[i] + 10\n~~~"
    register([indented, tilde, "What must happen to each value before you store it?"])
    pieces, statuses = [], []
    outcome = ask(map_case, on_text=pieces.append, on_status=statuses.append)
    assert outcome.leaks == 2 and pieces == ["What must happen to each value before you store it?"]
    assert not any("+ 10" in p or "Here is" in p or "Like so" in p for p in pieces + statuses)


@pytest.fixture(scope="module")
def dot_case(catalog):
    with SimChecker("dot") as passes:
        yield catalog.get("dot"), passes


def test_the_re_ask_carries_every_withheld_reply_and_every_reason(dot_case):
    puzzle, passes = dot_case
    # the solution's lines in three pieces, two of them hidden in comments, one in fullwidth characters
    first = ("Step one:\n```python\n# cache[local_i] = a[i] * b[i]\n```\nStep two:\n```python\n"
             "# total += cache[k]\n```\nStep three: `out[0] \uff1d total`")
    second = "Store `cache[t] = a[i] * b[i]`, zero elsewhere: `cache[t] = 0`."
    provider = register([first, second, "Which thread adds the slots up, and when may it start?"])
    outcome = ask_hint(puzzle, 2, puzzle.starter, "", [], SETTINGS, passes=passes)
    assert outcome.source == "ai" and outcome.leaks == 2
    third = provider.calls[2]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third[2]["content"] == first and third[4]["content"] == second
    why_first = third[3]["content"]
    for reason in ("stands for 3 of the 4 statements", "spread over 3 pieces", "hidden in comments",
                   "look-alike characters"):
        assert reason in why_first
    assert "stands for 2 of the 4 statements" in third[5]["content"]


def test_a_pipe_in_place_of_the_hint_log_costs_the_record_not_a_hang(tmp_path):
    import json
    import os

    os.mkfifo(tmp_path / "ai-hints.jsonl")  # nobody reads it: opening it to append used to wait for ever
    done = threading.Event()
    worker = threading.Thread(target=lambda: (HintLog(tmp_path / "ai-hints.jsonl").write(event="hint"), done.set()),
                              daemon=True)
    worker.start()
    assert done.wait(5), "the hint waited on the log"
    HintLog(tmp_path / "real.jsonl").write(event="hint", level=1)
    assert json.loads((tmp_path / "real.jsonl").read_text())["level"] == 1


def test_the_hint_context_names_the_costly_lines_by_the_memory_counters(catalog):
    """A transpose that reads rows and writes columns straight to global memory: the checker says
    the puzzle wants shared memory; the counters say why, line by line."""
    from tutor.engine.judge import check_sim

    naive = ("from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a, rows, cols):\n"
             "    i, j = cuda.grid(2)\n    if i < rows and j < cols:\n        out[j, i] = a[i, j]\n")
    result = check_sim(catalog.get("transpose"), naive, seed=1, compile=False)
    assert not result.verdict.passed
    context = failure_context(result)
    assert "Memory counters of the largest config" in context and "sectors per request" in context
