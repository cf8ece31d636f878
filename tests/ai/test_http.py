"""litellm's real HTTP path: an OpenAI-compatible server on loopback, started by the test."""

import json
import os
import socket
from pathlib import Path

import pytest
from loopback_llm import ChatServer

from tutor.ai.config import AISettings
from tutor.ai.llm import AIError, complete
from cli_run import run_cli

ROOT = Path(__file__).resolve().parents[2]
WRONG = "from numba import cuda\n\n\n@cuda.jit\ndef kernel(out, a):\n    i = cuda.threadIdx.x\n    out[i] = a[i]\n"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")


def settings(server, **kw):
    return AISettings(model="openai/tiny", api_base=server.url, **{"timeout": 10, **kw})


def test_a_streamed_reply_arrives_in_pieces_with_usage():
    with ChatServer(["Which index does thread 2 read?"]) as server:
        pieces = []
        stream = complete(settings(server), [{"role": "user", "content": "hint please"}], on_delta=pieces.append)
    assert stream.text == "Which index does thread 2 read?" and len(pieces) == 6
    assert stream.usage.completion_tokens == 6 and stream.usage.prompt_tokens == 2
    body = server.requests[0]["body"]
    assert body["stream"] is True and body["model"] == "tiny"
    assert server.requests[0]["authorization"] == "Bearer sk-loopback-test"


@pytest.mark.parametrize("reply, kind", [(("status", 401), "auth"), (("status", 429), "rate_limit"),
                                         (("status", 500), "server_error"), (("garbage",), "bad_reply")])
def test_each_way_a_server_fails_is_one_clear_error(reply, kind):
    with ChatServer([reply]) as server:
        with pytest.raises(AIError) as caught:
            complete(settings(server), [{"role": "user", "content": "x"}])
    assert caught.value.kind == kind, caught.value.message
    assert "\n" not in caught.value.message


def test_a_reply_slower_than_the_timeout_is_a_timeout():
    with ChatServer([("slow", 3.0, "late words here")]) as server:
        with pytest.raises(AIError) as caught:
            complete(settings(server, timeout=1), [{"role": "user", "content": "x"}])
    assert caught.value.kind == "timeout", caught.value.message


def test_the_optimisers_slow_reply_is_a_timeout_that_names_its_own_setting():
    with ChatServer([("slow", 3.0, "late words here")]) as server:
        with pytest.raises(AIError) as caught:
            complete(settings(server, optimise_timeout=1).for_optimiser(), [{"role": "user", "content": "x"}])
    assert caught.value.kind == "timeout"
    assert "no answer within 1 s" in caught.value.message
    assert "raise [ai] optimise_request_timeout (or --request-timeout)" in caught.value.message


def test_a_reply_cap_asks_no_more_than_a_known_model_writes():
    """gpt-4o-mini writes at most 16,384 tokens and its provider refuses a request for more; a model
    litellm does not list (a server of one's own) is asked for what the settings say."""
    with ChatServer(["ok", "ok"]) as server:
        complete(AISettings(model="openai/gpt-4o-mini", api_base=server.url, timeout=10, max_tokens=100_000),
                 [{"role": "user", "content": "x"}])
        complete(settings(server, max_tokens=100_000), [{"role": "user", "content": "x"}])
    assert [r["body"]["max_tokens"] for r in server.requests] == [16_384, 100_000]


def test_a_server_that_is_not_running_is_unreachable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once this closes
    down = AISettings(model="openai/tiny", api_base=f"http://127.0.0.1:{port}/v1", timeout=5)
    with pytest.raises(AIError) as caught:
        complete(down, [{"role": "user", "content": "x"}])
    assert caught.value.kind == "unreachable", caught.value.message


KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture
def no_keys(monkeypatch):
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_network(monkeypatch):
    """Every connection and name lookup this process tries, refused and recorded: loopback too."""
    from tutor.ai.llm import import_litellm

    import_litellm()  # its import is not what is judged here
    tried = []

    def refuse(what):
        def guard(*args, **kwargs):
            tried.append((what, args[1:] if what == "connect" else args[:2]))
            raise OSError(f"test: no network ({what})")
        return guard

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return tried


def test_a_local_openai_compatible_server_gets_a_placeholder_key_when_none_is_set(no_keys):
    """Failed on 673e00b: litellm's OpenAI client refused to send ("server_error ... Missing credentials")."""
    with ChatServer(["Which index does thread 2 read?"]) as server:
        stream = complete(settings(server), [{"role": "user", "content": "hint please"}])
    assert stream.text == "Which index does thread 2 read?"
    assert server.requests[0]["authorization"] == "Bearer sk-no-key-required"


def test_a_local_server_that_wants_a_real_key_says_which_variable_to_set(no_keys):
    with ChatServer([("status", 401)]) as server:
        with pytest.raises(AIError) as caught:
            complete(settings(server), [{"role": "user", "content": "x"}])
    assert caught.value.kind == "auth"
    assert caught.value.message == (
        f"openai/tiny: the server at {server.url} wants an API key (none was set, so gpu-tutor sent a placeholder): "
        "export OPENAI_API_KEY=THE_SERVERS_KEY; keys are read from the environment, never from the settings file "
        "(api_key_env can name your variable)")


@pytest.mark.parametrize("model, api_base, variable", [
    ("openai/gpt-4o-mini", None, "OPENAI_API_KEY"),
    ("anthropic/claude-3-5-haiku-latest", None, "ANTHROPIC_API_KEY"),
    ("gemini/gemini-1.5-flash", None, "GOOGLE_API_KEY (or GEMINI_API_KEY)"),
    ("openai/tiny", "https://models.example.com/v1", "OPENAI_API_KEY"),
    ("openai/tiny", "http://8.8.8.8/v1", "OPENAI_API_KEY"),
])
def test_a_provider_model_without_its_key_names_the_variable_and_sends_nothing(no_keys, no_network, model, api_base,
                                                                              variable):
    with pytest.raises(AIError) as caught:
        complete(AISettings(model=model, api_base=api_base, timeout=5), [{"role": "user", "content": "x"}])
    assert caught.value.kind == "no_key", caught.value.message
    assert f"export {variable}=YOUR_KEY" in caught.value.message
    assert no_network == []  # the check came before any request


def test_the_missing_key_message_says_what_is_wrong_and_what_to_do(no_keys, no_network):
    with pytest.raises(AIError) as caught:
        complete(AISettings(model="openai/gpt-4o-mini"), [{"role": "user", "content": "x"}])
    assert caught.value.message == ("openai/gpt-4o-mini: no API key: export OPENAI_API_KEY=YOUR_KEY; keys are read "
                                    "from the environment, never from the settings file (api_key_env can name your "
                                    "variable)")
    with pytest.raises(AIError) as caught:
        complete(AISettings(model="openai/tiny", api_base="https://models.example.com/v1"),
                 [{"role": "user", "content": "x"}])
    assert caught.value.message.startswith("openai/tiny: no API key for https://models.example.com/v1: export "
                                           "OPENAI_API_KEY=YOUR_KEY (any value, if that server takes no key); ")


def test_an_unset_api_key_env_variable_is_named_before_any_request(monkeypatch):
    monkeypatch.delenv("MY_LOCAL_KEY", raising=False)
    with ChatServer(["never sent"]) as server:
        with pytest.raises(AIError) as caught:
            complete(settings(server, api_key_env="MY_LOCAL_KEY", source="/home/me/config.toml"),
                     [{"role": "user", "content": "x"}])
    assert caught.value.kind == "no_key" and server.requests == []
    assert caught.value.message == ("openai/tiny: no API key: api_key_env names MY_LOCAL_KEY, which is not set here; "
                                    "export MY_LOCAL_KEY=YOUR_KEY, or remove api_key_env from /home/me/config.toml to "
                                    "use the provider's own variable")
    monkeypatch.setenv("MY_LOCAL_KEY", "sk-mine")
    with ChatServer(["ok"]) as server:
        complete(settings(server, api_key_env="MY_LOCAL_KEY"), [{"role": "user", "content": "x"}])
    assert server.requests[0]["authorization"] == "Bearer sk-mine"


def _cli(*args, env_extra=None, without=(), tmp_path):
    env = {**os.environ, "GPU_TUTOR_DATA": str(tmp_path / "data"), "GPU_TUTOR_CONFIG": str(tmp_path / "none.toml"),
           **(env_extra or {})}
    for name in without:
        env.pop(name, None)
    (tmp_path / "none.toml").write_text("")
    return run_cli(*args, env=env, cwd=ROOT)


def test_the_hint_command_streams_an_ai_hint_over_http(tmp_path):
    kernel = tmp_path / "map.py"
    kernel.write_text(WRONG)
    with ChatServer(["Your line 7 stores `a[i]` unchanged: what should be added?"]) as server:
        done = _cli("hint", "map", str(kernel), "--level", "2", "--model", "openai/tiny", "--api-base", server.url,
                    tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Your line 7 stores `a[i]` unchanged: what should be added?"
    assert "openai/tiny" in done.stderr and "tokens" in done.stderr
    sent = server.requests[0]["body"]["messages"][1]["content"]
    assert "level 2 of 4" in sent and "  7 |     out[i] = a[i]" in sent
    log = (tmp_path / "data" / "ai-hints.jsonl").read_text()
    assert "sk-loopback-test" not in log and json.loads(log.splitlines()[0])["event"] == "hint"


def test_the_hint_command_reaches_a_local_server_with_no_key_in_the_environment(tmp_path):
    kernel = tmp_path / "map.py"
    kernel.write_text(WRONG)
    with ChatServer(["Your line 7 stores `a[i]` unchanged: what should be added?"]) as server:
        done = _cli("hint", "map", str(kernel), "--model", "openai/tiny", "--api-base", server.url,
                    without=KEY_VARIABLES, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Your line 7 stores" in done.stdout and "Missing credentials" not in done.stdout + done.stderr
    assert server.requests[0]["authorization"] == "Bearer sk-no-key-required"


def test_doctor_reports_the_settings_and_one_request(tmp_path):
    with ChatServer(["ready"]) as server:
        ok = _cli("doctor", "--model", "openai/tiny", "--api-base", server.url, tmp_path=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "OK: openai/tiny answered 'ready'" in ok.stdout and "(local)" in ok.stdout
    assert "sk-loopback-test" not in ok.stdout  # the key's variable is named, never its value
    with ChatServer([("status", 401)]) as server:
        bad = _cli("doctor", "--model", "openai/tiny", "--api-base", server.url, tmp_path=tmp_path)
    assert bad.returncode == 1 and "FAILED (auth)" in bad.stdout
    none = _cli("doctor", tmp_path=tmp_path)
    assert none.returncode == 1 and "no model is configured" in none.stdout


def test_a_streamed_hint_with_terminal_escapes_is_printed_escaped(tmp_path):
    kernel = tmp_path / "map.py"
    kernel.write_text(WRONG)
    title, clear, link = "\x1b]0;pwned\x07", "\x1b[2J", "\x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\"
    # The server streams word by word: each escape arrives in a piece of its own, split from its text.
    with ChatServer([f"Look at line 7 {title} {clear} {link} \x9b31m what is added?"]) as server:
        done = _cli("hint", "map", str(kernel), "--model", "openai/tiny", "--api-base", server.url, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout + done.stderr for c in ("\x1b", "\x07", "\x9b"))
    assert done.stdout == ("Look at line 7 \\x1b]0;pwned\\x07 \\x1b[2J \\x1b]8;;https://evil.example\\x1b\\here"
                           "\\x1b]8;;\\x1b\\ \\x9b31m what is added?\n")


def test_a_hint_whose_code_runs_a_shell_is_never_run(tmp_path):
    """Escaped today's main (42f2d21): the leak guard ran the hint's fence to judge it, and the
    shell command in it ran (the marker appeared)."""
    kernel = tmp_path / "map.py"
    kernel.write_text(WRONG)
    marker = tmp_path / "shell-ran"
    hint = (f"Try this:\n```python\nimport os\nos.system('touch {marker}')\n```\n"
            f"and in the kernel:\n```python\nos.system('touch {marker}')\nout[i] = a[i] + 10\n```\n")
    with ChatServer([hint, hint, hint]) as server:
        done = _cli("hint", "map", str(kernel), "--model", "openai/tiny", "--api-base", server.url, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
