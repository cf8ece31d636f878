"""The one place that talks to a model: litellm, streamed, with every failure turned into one line.

litellm is imported here only, on first use, after LITELLM_LOCAL_MODEL_COST_MAP is set (otherwise
its import fetches a price list from the internet). It takes seconds to import, so callers run
this off the UI thread.

Keys are settled before any request leaves: a provider's model with no key in its variable is
refused here, naming the variable, because the provider's own refusal ("Missing credentials",
a 401) names none; a server of the learner's own with no key set gets a placeholder, because the
OpenAI client will not send a request without one and such servers take any.

The timeout is the wait for each piece of the reply (httpx's read timeout), never a cap on the
whole reply: a slow model that keeps streaming is not cut off.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

_IMPORT_LOCK = threading.Lock()

PLACEHOLDER_KEY = "sk-no-key-required"  # as in llama.cpp server's examples; such servers take any


class AIError(Exception):
    """A model call that failed; `kind` for tests and logs, the message for the learner."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class Cancelled(Exception):
    pass


def import_litellm():
    with _IMPORT_LOCK:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_TELEMETRY", "False")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        return litellm


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0

    def text(self) -> str:
        parts = []
        if self.prompt_tokens is not None or self.completion_tokens is not None:
            parts.append(f"{self.prompt_tokens or 0} + {self.completion_tokens or 0} tokens")
        if self.cost_usd:
            parts.append(f"${self.cost_usd:.4f}")
        parts.append(f"{self.latency_s:.1f} s")
        return " · ".join(parts)

    def add(self, other: Usage) -> None:
        for name in ("prompt_tokens", "completion_tokens", "cost_usd"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if theirs is not None:
                setattr(self, name, (mine or 0) + theirs)
        self.latency_s += other.latency_s


class ChatStream:
    """Iterate for text deltas; afterwards `.text` is the whole reply and `.usage` what it cost.

    Cancelling (set the event) stops at the next delta with `Cancelled`."""

    def __init__(self, settings, messages: list[dict], *, max_tokens: int | None = None,
                 cancel: threading.Event | None = None):
        reason = settings.unavailable()
        if reason:
            raise AIError("no_model", reason)
        self.settings = settings
        self.messages = messages
        self.max_tokens = max_tokens or settings.max_tokens
        self.cancel = cancel or threading.Event()
        self.text = ""
        self.usage = Usage()

    def __iter__(self):
        litellm = import_litellm()
        s = self.settings
        kwargs = {"model": s.model, "messages": self.messages, "stream": True, "timeout": s.request_timeout,
                  "max_tokens": reply_cap(litellm, s.model, self.max_tokens), "num_retries": 0,
                  "stream_options": {"include_usage": True}}
        if s.api_base:
            kwargs["api_base"] = s.api_base
        key = api_key_for(litellm, s)
        if key:
            kwargs["api_key"] = key
        placeholder = key == PLACEHOLDER_KEY
        start = time.monotonic()
        chunks = []
        try:
            response = litellm.completion(**kwargs)
            for chunk in response:
                if self.cancel.is_set():
                    _close(response)
                    raise Cancelled()
                chunks.append(chunk)
                delta = _delta_text(chunk)
                if delta:
                    self.text += delta
                    yield delta
        except (Cancelled, AIError):
            raise
        except Exception as e:  # every provider failure, whatever litellm wraps it in
            raise explain(e, s, placeholder=placeholder) from None
        finally:
            self.usage.latency_s = time.monotonic() - start
        if not self.text.strip():  # an HTML error page or a broken proxy parses as an empty stream
            raise AIError("bad_reply", f"{s.model}: the reply held no text (a malformed or empty answer"
                                       f"{' from ' + s.api_base if s.api_base else ''})")
        self._account(litellm, chunks)

    def _account(self, litellm, chunks) -> None:
        for chunk in reversed(chunks):
            usage = getattr(chunk, "usage", None)
            if usage:
                self.usage.prompt_tokens = getattr(usage, "prompt_tokens", None)
                self.usage.completion_tokens = getattr(usage, "completion_tokens", None)
                break
        try:
            whole = litellm.stream_chunk_builder(chunks, messages=self.messages)
            if whole is not None and self.usage.prompt_tokens is None and getattr(whole, "usage", None):
                self.usage.prompt_tokens = whole.usage.prompt_tokens
                self.usage.completion_tokens = whole.usage.completion_tokens
            self.usage.cost_usd = litellm.completion_cost(completion_response=whole) or None
        except Exception:  # a model litellm has no price for: cost unknown, not an error
            self.usage.cost_usd = None


def complete(settings, messages, *, max_tokens=None, cancel=None, on_delta=None) -> ChatStream:
    """Run a whole stream; `on_delta(text)` sees each piece as it arrives."""
    stream = ChatStream(settings, messages, max_tokens=max_tokens, cancel=cancel)
    for delta in stream:
        if on_delta is not None:
            on_delta(delta)
    return stream


def reply_cap(litellm, model: str, wanted: int) -> int:
    """`wanted`, or the model's own largest reply where litellm's (local) price list knows it: a
    provider refuses a request for more (gpt-4o-mini writes at most 16,384 tokens)."""
    try:
        most = (litellm.get_model_info(model) or {}).get("max_output_tokens")
    except Exception:  # a model it does not list (a server of one's own): its server judges
        return wanted
    return min(wanted, most) if isinstance(most, int) and most > 0 else wanted


def api_key_for(litellm, settings) -> str | None:
    """The key to pass, or None for litellm to find its own (or for a provider that needs none).

    Raises AIError("no_key") before any request leaves when a key is needed and missing."""
    if settings.api_key_env:
        value = settings.api_key()
        if value:
            return value
        raise AIError("no_key", f"{settings.model}: no API key: api_key_env names {settings.api_key_env}, which is "
                                f"not set here; export {settings.api_key_env}=YOUR_KEY, or remove api_key_env from "
                                f"{settings.source} to use the provider's own variable")
    missing, sure = missing_key_variables(litellm, settings)
    if not missing:
        return None
    if settings.own_endpoint:
        return PLACEHOLDER_KEY
    if not sure:  # the provider can also sign in another way (a cloud role, a profile): let it judge
        return None
    where = f" for {settings.api_base}" if settings.api_base else ""
    anything = " (any value, if that server takes no key)" if settings.api_base else ""
    raise AIError("no_key", f"{settings.model}: no API key{where}: export {_either(missing)}=YOUR_KEY{anything}; "
                            f"{_KEYS_LIVE}")


_KEYS_LIVE = "keys are read from the environment, never from the settings file (api_key_env can name your variable)"


def missing_key_variables(litellm, settings) -> tuple[list[str], bool]:
    """The provider's key variables when none of them is set (any one would do), per litellm's
    validate_environment, and whether a key is surely what is missing: for Azure or AWS other
    settings are missing too, and those providers can find credentials elsewhere."""
    try:
        missing = litellm.validate_environment(model=settings.model, api_base=settings.api_base)["missing_keys"]
    except Exception:  # a model string litellm cannot place: the call itself will say so
        return [], False
    keys = [name for name in missing if name.endswith(("_API_KEY", "_TOKEN"))]
    return keys, bool(keys) and len(keys) == len(missing)


def _either(names: list[str]) -> str:
    return names[0] + "".join(f" (or {n})" for n in names[1:])


def _key_variable(settings) -> tuple[str | None, bool]:
    """The variable a refused or missing key belongs in, and whether it is set: the named one, the
    provider's missing one, else the provider's conventional NAME_API_KEY."""
    if settings.api_key_env:
        return settings.api_key_env, bool(os.environ.get(settings.api_key_env))
    try:
        litellm = import_litellm()
        missing, _ = missing_key_variables(litellm, settings)
        if missing:
            return _either(missing), False
        provider = litellm.get_llm_provider(model=settings.model, api_base=settings.api_base)[1]
    except Exception:
        return None, False
    if not provider:
        return None, False
    guess = f"{provider.upper()}_API_KEY"
    return guess, bool(os.environ.get(guess))


def _delta_text(chunk) -> str:
    try:
        choice = chunk.choices[0]
    except (AttributeError, IndexError):
        return ""
    delta = getattr(choice, "delta", None)
    content = getattr(delta, "content", None) if delta is not None else None
    return content if isinstance(content, str) else ""


def _close(response) -> None:
    """Drop the HTTP stream now rather than when it is garbage-collected."""
    close = getattr(response, "close", None)
    if callable(close):
        try:
            close()
        except Exception:
            pass


def explain(exc: BaseException, settings, *, placeholder: bool = False) -> AIError:
    """One line per way a call fails, naming what to check. `placeholder`: the call carried
    PLACEHOLDER_KEY, so a refusal means the server wants a real key, not that a key was wrong."""
    for _ in range(3):  # litellm wraps a provider's error raised mid-stream; judge the original
        inner = getattr(exc, "original_exception", None)
        if not isinstance(inner, BaseException) or inner is exc:
            break
        exc = inner
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:300]
    where = f" at {settings.api_base}" if settings.api_base else ""
    model = settings.model
    lowered = text.lower()
    if any(w in lowered for w in ("missing credentials", "api_key client option must be set", "missing api key")):
        variable = _key_variable(settings)[0] or "the provider's key variable"
        return AIError("no_key", f"{model}: no API key{where}: export {variable}=YOUR_KEY; {_KEYS_LIVE}")
    if name in ("AuthenticationError", "PermissionDeniedError", "CallerCredentialAuthenticationError"):
        variable, is_set = _key_variable(settings)
        if placeholder or (variable and not is_set):
            sent = ", so gpu-tutor sent a placeholder" if placeholder else ""
            return AIError("auth", f"{model}: the server{where} wants an API key (none was set{sent}): "
                                   f"export {variable or 'OPENAI_API_KEY'}=THE_SERVERS_KEY; {_KEYS_LIVE}")
        held = f"the key in {variable}" if variable else "its key"
        return AIError("auth", f"{model}: the provider refused {held}{where}: check its value; {_KEYS_LIVE}")
    if name in ("RateLimitError", "CallerCredentialRateLimitError", "RouterRateLimitError"):
        return AIError("rate_limit", f"{model}: rate limited by the provider; wait a minute and ask again")
    if name == "Timeout" or "timed out" in lowered or "timeout" in name.lower():
        return AIError("timeout", f"{model}: no answer within {settings.request_timeout:g} s{where} (the wait for "
                                  f"each piece of the reply, the first one included); raise [ai] "
                                  f"{settings.timeout_key} or try a smaller model")
    if name in ("APIConnectionError", "ServiceUnavailableError", "InternalServerError", "BadGatewayError") and \
            any(w in lowered for w in ("connect", "refused", "unreachable", "name or service", "resolve")):
        return AIError("unreachable", f"{model}: cannot reach the server{where} ({text[:120]}); is it running?")
    if name in ("NotFoundError",):
        return AIError("not_found", f"{model}: the server does not know this model{where} ({text[:120]})")
    if name in ("BadRequestError", "UnsupportedParamsError", "ContextWindowExceededError") and \
            ("LLM Provider NOT provided" in text or "provider" in text.lower() and "not" in text.lower()):
        return AIError("bad_model", f"{model!r} is not a litellm model string: use provider/model, "
                                    "e.g. openai/gpt-4o-mini or ollama_chat/llama3")
    if name in ("APIConnectionError", "ServiceUnavailableError", "InternalServerError", "BadGatewayError"):
        return AIError("server_error", f"{model}: the server failed{where} ({text[:160]})")
    if name in ("APIResponseValidationError", "JSONDecodeError", "ValidationError"):
        return AIError("bad_reply", f"{model}: the reply was malformed ({text[:160]})")
    return AIError("error", f"{model}: {name}: {text[:200]}")
