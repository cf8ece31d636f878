"""Settings: the file, the environment variable naming it, the flags, and what offline allows."""

import pytest

from tutor.ai.config import AISettings, ConfigError, is_local_url, is_own_server_url, load_settings, settings_for


def write(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_a_file_sets_the_model_the_local_server_and_the_policy(tmp_path):
    s = load_settings(write(tmp_path, '[ai]\nmodel = "ollama_chat/llama3"\napi_base = "http://127.0.0.1:11434"\n'
                                      'offline = true\ntimeout = 5\n[policy]\nfull_code_hints = true\n'))
    assert (s.model, s.api_base, s.offline, s.timeout, s.full_code_hints) == \
        ("ollama_chat/llama3", "http://127.0.0.1:11434", True, 5.0, True)
    assert s.unavailable() is None  # offline, but the server is on this machine


@pytest.mark.parametrize("text, words", [
    ('[ai]\napi_key = "sk-123"\n', ["api_key", "keys are not kept in files", "OPENAI_API_KEY"]),
    ('[ai]\nmodle = "x"\n', ["unknown key 'modle'", "model"]),
    ('[ai]\noffline = "yes"\n', ["offline must be bool"]),
    ('[ai]\ntimeout = 0\n', ["timeout must be more than 0"]),
    ('[hints]\n', ["unknown section"]),
    ('[ai\n', ["not valid TOML"]),
    ('[ai]\noptimise_wall_time = "soon"\n', ["[ai] optimise_wall_time: 'soon' is not a duration: write 15m, 90s or 1h"]),
    ('[ai]\noptimise_wall_time = "0m"\n', ["[ai] optimise_wall_time must be more than 0, not '0m'"]),
    ('[ai]\noptimise_wall_time = true\n', ["[ai] optimise_wall_time must be str or int or float, not True"]),
    ('[ai]\noptimise_rounds = 0\n', ["[ai] optimise_rounds must be at least 1, not 0"]),
    ('[ai]\noptimise_rounds = "ten"\n', ["[ai] optimise_rounds must be int, not 'ten'"]),
    ('[ai]\noptimise_request_timeout = "soon"\n', ["[ai] optimise_request_timeout: 'soon' is not a duration"]),
    ('[ai]\noptimise_request_timeout = 0\n', ["[ai] optimise_request_timeout must be more than 0, not 0"]),
    ('[ai]\noptimise_reply_tokens = 0\n', ["[ai] optimise_reply_tokens must be at least 1, not 0"]),
    ('[ai]\noptimise_reply_tokens = "lots"\n', ["[ai] optimise_reply_tokens must be int, not 'lots'"]),
])
def test_bad_files_name_the_file_the_key_and_the_fix(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert str(path) in str(caught.value)
    for w in words:
        assert w in str(caught.value)


def test_the_optimisers_default_budget_comes_from_ai_as_the_flags_write_it(tmp_path):
    s = load_settings(write(tmp_path, '[ai]\noptimise_wall_time = "30m"\noptimise_rounds = 4\n'))
    assert (s.optimise_wall_s, s.optimise_rounds) == (1800.0, 4)
    assert load_settings(write(tmp_path, '[ai]\noptimise_wall_time = "1h"\n')).optimise_wall_s == 3600.0
    assert load_settings(write(tmp_path, '[ai]\noptimise_wall_time = 45\n')).optimise_wall_s == 2700.0  # minutes
    assert load_settings(write(tmp_path, "[ai]\n")).optimise_wall_s is None  # the optimiser's own default


def test_the_optimisers_wait_and_reply_cap_come_from_ai_and_never_change_the_hints(tmp_path):
    from tutor.ai.config import OPTIMISE_REPLY_TOKENS, OPTIMISE_TIMEOUT

    local = '[ai]\nmodel = "openai/qwen3"\napi_base = "http://127.0.0.1:8080/v1"\n'
    s = load_settings(write(tmp_path, local + 'optimise_request_timeout = "45m"\noptimise_reply_tokens = 32768\n'))
    assert (s.optimise_timeout, s.optimise_reply_tokens) == (2700.0, 32768)
    o = s.for_optimiser()
    assert (o.request_timeout, o.max_tokens) == (2700.0, 32768) and "optimise_request_timeout" in o.timeout_key
    assert (s.request_timeout, s.max_tokens, s.timeout_key) == (300.0, 700, "timeout")  # a hint's, as before
    assert load_settings(write(tmp_path, local + "optimise_request_timeout = 20\n")).optimise_timeout == 1200.0
    plain = load_settings(write(tmp_path, local + "timeout = 5\n")).for_optimiser()  # the hints' wait is not its
    assert (plain.request_timeout, plain.max_tokens) == (OPTIMISE_TIMEOUT, OPTIMISE_REPLY_TOKENS)


def test_the_environment_variable_names_the_file_and_flags_override_it(tmp_path, monkeypatch):
    path = write(tmp_path, '[ai]\nmodel = "openai/gpt-4o-mini"\n')
    monkeypatch.setenv("GPU_TUTOR_CONFIG", str(path))

    class Args:
        model = None
        api_base = "http://192.168.1.20:8000/v1"
        offline = True

    s = settings_for(Args())
    assert (s.model, s.api_base, s.offline, s.source) == ("openai/gpt-4o-mini", Args.api_base, True, str(path))
    assert s.unavailable() is None  # a LAN server is allowed offline
    monkeypatch.setenv("GPU_TUTOR_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="no such config file"):
        settings_for(Args())


def test_offline_refuses_remote_servers_and_host_names():
    assert AISettings(model="openai/gpt-4o-mini", offline=True).unavailable().startswith("offline")
    assert AISettings(model="x/y", offline=True, api_base="https://api.example.com").unavailable()
    assert AISettings(model="x/y", offline=True, api_base="http://gpu-box:8000").unavailable()  # DNS is network
    assert AISettings().unavailable().startswith("no model")


@pytest.mark.parametrize("url, local", [("http://localhost:8080/v1", True), ("http://127.0.0.1:1", True),
                                        ("http://[::1]:80", True), ("http://10.0.0.5", True),
                                        ("192.168.0.2:11434", True), ("https://api.openai.com/v1", False),
                                        ("http://8.8.8.8", False), ("http://ollama.local", False)])
def test_what_counts_as_local(url, local):
    assert is_local_url(url) is local


@pytest.mark.parametrize("url, own", [("http://127.0.0.1:8080/v1", True), ("http://192.168.1.20:8000", True),
                                      ("http://[fd00::5]:8000", True), ("http://gpu-box:8000/v1", True),
                                      ("http://vllm:8000/v1", True), ("http://ollama.local:11434", True),
                                      ("http://studio.lan:1234", True), ("http://box.home.arpa", True),
                                      ("https://api.openai.com/v1", False), ("http://8.8.8.8/v1", False),
                                      ("https://openrouter.ai/api/v1", False)])
def test_which_servers_are_the_learners_own_and_get_a_placeholder_key(url, own):
    assert is_own_server_url(url) is own


def test_a_server_of_your_own_waits_longer_for_a_reply_to_begin():
    assert AISettings(model="openai/gpt-4o-mini").request_timeout == 60
    assert AISettings(model="openai/tiny", api_base="http://127.0.0.1:8080/v1").request_timeout == 300
    assert AISettings(model="openai/tiny", api_base="http://127.0.0.1:8080/v1", timeout=20).request_timeout == 20


def test_the_key_comes_from_the_named_variable_only(monkeypatch):
    monkeypatch.setenv("MY_KEY", "secret")
    assert AISettings(api_key_env="MY_KEY").api_key() == "secret"
    assert AISettings().api_key() is None


DEEP = "[" * 5000 + "]" * 5000  # tomllib recurses once per level: today this is a RecursionError traceback


def test_a_5000_deep_array_in_the_settings_file_is_one_clear_error_naming_the_file(tmp_path):
    path = write(tmp_path, f"[ai]\nmodel = {DEEP}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert str(caught.value) == (f"{path}: not valid TOML: arrays or tables are nested too deeply (thousands of "
                                 "levels) to be read; write the values out flat")


def test_the_cli_says_so_in_one_line_with_status_2(tmp_path):
    import os
    import subprocess
    import sys

    path = write(tmp_path, "[ai]\nmodel = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")  # inline tables too
    done = subprocess.run([sys.executable, "-m", "tutor.cli", "config"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GPU_TUTOR_CONFIG": str(path)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"gpu-tutor: {path}: not valid TOML: arrays or tables are nested too deeply " \
                          "(thousands of levels) to be read; write the values out flat\n"


def test_a_settings_file_kept_elsewhere_behind_a_link_is_still_read(tmp_path):
    real = tmp_path / "dotfiles" / "gpu-tutor.toml"
    real.parent.mkdir()
    real.write_text('[ai]\nmodel = "openai/gpt-4o-mini"\n')
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    assert load_settings(link).model == "openai/gpt-4o-mini"
