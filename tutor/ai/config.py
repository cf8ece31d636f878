"""Which model the AI features talk to, and whether they may talk at all.

Settings come from a TOML file (the platformdirs config directory, or the file named by
GPU_TUTOR_CONFIG), then from flags. API keys are never read from or written to that file: litellm
takes them from the provider's environment variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), and
`api_key_env` may name another variable to read. Offline is a promise: the network may only be used
for an `api_base` the user wrote down that is on this machine or the local network, given as
`localhost` or an IP address (a host name would need DNS, which is the network).

Keys are a looser question than offline. A server of your own (vLLM, llama.cpp, LM Studio, Ollama)
usually wants no key, but litellm's OpenAI client refuses to send a request without one; so an
`api_base` that can only be yours gets a placeholder key when no real one is set. "Yours" is what
offline allows, plus host names only your own network can answer for: one word (`gpu-box`, a
compose service like `vllm`) or a name under .local, .lan, .home.arpa, .internal or .localhost.
A placeholder is no secret, so erring towards "yours" costs nothing but a clear 401 later.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from tutor.tomlfile import TomlFileError, read_toml

CONFIG_ENV = "GPU_TUTOR_CONFIG"
PROVIDER_TIMEOUT = 60.0
OWN_SERVER_TIMEOUT = 300.0

OPTIMISE_TIMEOUT = 30 * 60.0
"""The optimiser's wait for each piece of a model's reply, the first one included. A learner waits
on a hint; nobody waits on an optimiser round, so this is set for the slowest model that is still
useful: a reasoning model served on one's own machine. The first piece waits while the server reads
a prompt of about 10,000 tokens and, on servers that send no part of the model's thinking, while it
thinks: a whole reply of OPTIMISE_REPLY_TOKENS at 9 tokens a second is 30 minutes. A reasoning
model's first reply in the optimiser took 5.6 minutes, past the 5 minutes a server of one's own gets
for hints. A reply that keeps coming is never cut off; only silence this long is."""

OPTIMISE_REPLY_TOKENS = 16_384
"""The longest reply the optimiser asks for per candidate. A reasoning model thinks before it writes
the module, and on most servers the thinking counts against this cap; a reply cut off before its
```python block is a round with nothing to judge. At 4,000 tokens reasoning models ran out. 16,384
leaves room for thinking and a module, and with the prompt (about 10,000 tokens) still fits a 32k
context, which a local server (vLLM) refuses to exceed; it is also the most OpenAI's gpt-4o models
write. Where litellm knows a model's own maximum reply, the request asks for no more (llm.py)."""

EXAMPLE = """\
# gpu-tutor settings. Keys never go here: litellm reads them from the provider's environment
# variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), or name your own with api_key_env.
[ai]
# Any litellm model string: "openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest",
# "ollama_chat/qwen2.5-coder:7b", "hosted_vllm/Qwen/Qwen2.5-Coder-7B-Instruct", ...
# model = "ollama_chat/qwen2.5-coder:7b"
# api_base = "http://127.0.0.1:11434"   # a local server; needed for AI hints when offline
# api_key_env = "MY_PROVIDER_KEY"       # optional: the variable that holds the key
# offline = false                       # true: no network except a local api_base
# timeout = 60        # seconds to wait for the next piece of a reply, the first one included
#                     # (default 60; 300 for a server of your own, which reads a long prompt slowly)
# max_tokens = 700                      # the longest hint reply
# The optimiser (durations as "30m", "90s", "2h"; a bare number means minutes):
# optimise_wall_time = "2h"             # the whole session's wall-clock budget (--budget overrides)
# optimise_rounds = 10                  # the number of rounds (--rounds overrides)
# optimise_request_timeout = "30m"      # the wait for each piece of a reply (--request-timeout overrides)
# optimise_reply_tokens = 16384         # the longest reply per candidate, thinking included (--reply-tokens)

[policy]
# full_code_hints = false   # true lets a learner who asks twice past the last hint see full code
"""

_AI_KEYS = {"model": str, "api_base": str, "api_key_env": str, "offline": bool, "timeout": (int, float),
            "max_tokens": int, "optimise_wall_time": (str, int, float), "optimise_rounds": int,
            "optimise_request_timeout": (str, int, float), "optimise_reply_tokens": int}
_POLICY_KEYS = {"full_code_hints": bool}


class ConfigError(Exception):
    """A settings file or flag that cannot be used; the message names the file, key and fix."""


@dataclass(frozen=True)
class AISettings:
    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    offline: bool = False
    timeout: float | None = None     # None: request_timeout's default for this endpoint
    max_tokens: int = 700
    full_code_hints: bool = False
    source: str = "defaults"  # where the settings were read from, for `gpu-tutor doctor`
    optimise_wall_s: float | None = None   # None: the optimiser's own default budget
    optimise_rounds: int | None = None
    optimise_timeout: float | None = None  # None: OPTIMISE_TIMEOUT
    optimise_reply_tokens: int | None = None  # None: OPTIMISE_REPLY_TOKENS
    timeout_key: str = "timeout"  # the setting a timeout's message tells the user to raise

    def for_optimiser(self) -> AISettings:
        """These settings as the optimiser's model calls use them: its own wait for each piece of a
        reply and its own reply cap (OPTIMISE_TIMEOUT, OPTIMISE_REPLY_TOKENS), never the hints'."""
        return dataclasses.replace(
            self, timeout=self.optimise_timeout or OPTIMISE_TIMEOUT,
            max_tokens=self.optimise_reply_tokens or OPTIMISE_REPLY_TOKENS,
            timeout_key="optimise_request_timeout (or --request-timeout)")

    def with_overrides(self, *, model=None, api_base=None, offline=None) -> AISettings:
        changes = {k: v for k, v in (("model", model), ("api_base", api_base), ("offline", offline))
                   if v is not None}
        return dataclasses.replace(self, **changes) if changes else self

    @property
    def local_endpoint(self) -> bool:
        return self.api_base is not None and is_local_url(self.api_base)

    @property
    def own_endpoint(self) -> bool:
        """Whether a missing key means "send a placeholder" rather than "tell the learner to set
        one": servers of one's own take any key, but the OpenAI client sends none without one."""
        return self.api_base is not None and is_own_server_url(self.api_base)

    @property
    def request_timeout(self) -> float:
        """How long a call waits for the server's next piece of the reply, the first one included.

        It is not a cap on the whole reply: a model that keeps sending is never cut off. The wait
        that matters is for the first piece, while the server reads the prompt; an optimiser's
        prompt is thousands of tokens, which a model on a laptop's CPU can take minutes to read, so
        a server of your own gets five minutes unless the settings say otherwise."""
        if self.timeout is not None:
            return self.timeout
        return OWN_SERVER_TIMEOUT if self.own_endpoint else PROVIDER_TIMEOUT

    def unavailable(self) -> str | None:
        """Why no model may be called (None: it may). Never touches the network."""
        if not self.model:
            return "no model is configured (set one with --model or in the config file; `gpu-tutor doctor` helps)"
        if self.offline and not self.local_endpoint:
            return ("offline: AI hints need a model served on this machine or the local network "
                    "(api_base = \"http://127.0.0.1:PORT\" or a LAN address)")
        return None

    def api_key(self) -> str | None:
        """The key from the variable named by api_key_env (None: litellm looks for its own)."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None


def is_local_url(url: str) -> bool:
    host = urlparse(url if "://" in url else f"http://{url}").hostname
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


_OWN_NETWORK_SUFFIXES = (".local", ".lan", ".home.arpa", ".internal", ".localhost")


def is_own_server_url(url: str) -> bool:
    """On this machine or the user's own network, host names included (see the module's note)."""
    if is_local_url(url):
        return True
    host = urlparse(url if "://" in url else f"http://{url}").hostname
    if not host:
        return False
    try:
        ipaddress.ip_address(host)
        return False  # an address, and not a private one
    except ValueError:
        pass
    host = host.rstrip(".").lower()
    return "." not in host or host.endswith(_OWN_NETWORK_SUFFIXES)


def config_path() -> Path:
    named = os.environ.get(CONFIG_ENV)
    if named:
        return Path(named).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("gpu-tutor", appauthor=False)) / "config.toml"


def load_settings(path: Path | None = None) -> AISettings:
    """Settings from the config file; a missing default file means defaults, a missing file named
    by GPU_TUTOR_CONFIG (or passed in) is an error."""
    explicit = path is not None or bool(os.environ.get(CONFIG_ENV))
    path = path or config_path()
    try:
        raw = read_toml(path)
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"{path}: no such config file (named by {CONFIG_ENV}); unset it, or point it at a "
                              "file (`gpu-tutor config --init` writes one)") from None
        return AISettings(source=f"defaults (no file at {path})")
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e}") from None
    except OSError as e:  # a folder, a pipe, a device, too large: not a settings file
        raise ConfigError(f"{path}: {e.strerror or e}; the settings file must be a TOML file "
                          "(`gpu-tutor config --init` writes one)") from None
    return settings_from_dict(raw, str(path))


def settings_from_dict(raw: dict, where: str) -> AISettings:
    unknown = set(raw) - {"ai", "policy"}
    if unknown:
        raise ConfigError(f"{where}: unknown section(s) {sorted(unknown)}; allowed: [ai], [policy]")
    values: dict = {"source": where}
    for section, allowed in (("ai", _AI_KEYS), ("policy", _POLICY_KEYS)):
        table = raw.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [{section}] must be a table")
        for key, value in table.items():
            if key in ("api_key", "key", "token"):
                raise ConfigError(f"{where}: [{section}] {key}: keys are not kept in files. Remove it and export the "
                                  "provider's variable (e.g. OPENAI_API_KEY), or set api_key_env to a variable's name")
            if key not in allowed:
                raise ConfigError(f"{where}: [{section}] unknown key {key!r}; allowed: {', '.join(sorted(allowed))}")
            kind = allowed[key]
            if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                names = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
                raise ConfigError(f"{where}: [{section}] {key} must be {names}, not {value!r}")
            values[key] = value
    if "timeout" in values:
        values["timeout"] = float(values["timeout"])
        if values["timeout"] <= 0:
            raise ConfigError(f"{where}: [ai] timeout must be more than 0 seconds")
    if values.get("max_tokens", 1) < 1:
        raise ConfigError(f"{where}: [ai] max_tokens must be at least 1")
    if "optimise_wall_time" in values:
        values["optimise_wall_s"] = _duration(values.pop("optimise_wall_time"), where)
    if "optimise_request_timeout" in values:
        values["optimise_timeout"] = _duration(values.pop("optimise_request_timeout"), where,
                                                "optimise_request_timeout")
    if values.get("optimise_rounds", 1) < 1:
        raise ConfigError(f"{where}: [ai] optimise_rounds must be at least 1, not {values['optimise_rounds']}")
    if values.get("optimise_reply_tokens", 1) < 1:
        raise ConfigError(f"{where}: [ai] optimise_reply_tokens must be at least 1, not "
                          f"{values['optimise_reply_tokens']}")
    values["full_code_hints"] = values.get("full_code_hints", False)
    return AISettings(**values)


def _duration(value, where: str, key: str = "optimise_wall_time") -> float:
    """Seconds from a duration the optimiser's flags would accept ("30m", "90s", "1h"); a bare
    number means minutes, as it does for --budget and --request-timeout."""
    from tutor.durations import parse_duration

    try:
        seconds = parse_duration(value if isinstance(value, str) else str(value))
    except ValueError as e:
        raise ConfigError(f"{where}: [ai] {key}: {e}") from None
    if seconds <= 0:
        raise ConfigError(f"{where}: [ai] {key} must be more than 0, not {value!r}")
    return seconds


def settings_for(args=None) -> AISettings:
    """The settings a command runs with: the file, then the flags --model, --api-base, --offline."""
    settings = load_settings()
    if args is None:
        return settings
    return settings.with_overrides(model=getattr(args, "model", None), api_base=getattr(args, "api_base", None),
                                   offline=True if getattr(args, "offline", False) else None)
