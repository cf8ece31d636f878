"""The one place that talks to a model: litellm, streamed, with every failure turned into one line.

litellm is imported here only, on first use, after LITELLM_LOCAL_MODEL_COST_MAP is set (otherwise
its import fetches a price list from the internet). It takes seconds to import, so callers run
this off the UI thread.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

_IMPORT_LOCK = threading.Lock()


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
        kwargs = {"model": s.model, "messages": self.messages, "stream": True, "timeout": s.timeout,
                  "max_tokens": self.max_tokens, "num_retries": 0,
                  "stream_options": {"include_usage": True}}
        if s.api_base:
            kwargs["api_base"] = s.api_base
        key = s.api_key()
        if key:
            kwargs["api_key"] = key
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
            raise explain(e, s) from None
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


def explain(exc: BaseException, settings) -> AIError:
    """One line per way a call fails, naming what to check."""
    for _ in range(3):  # litellm wraps a provider's error raised mid-stream; judge the original
        inner = getattr(exc, "original_exception", None)
        if not isinstance(inner, BaseException) or inner is exc:
            break
        exc = inner
    name = type(exc).__name__
    text = " ".join(str(exc).split())[:300]
    where = f" at {settings.api_base}" if settings.api_base else ""
    model = settings.model
    if name in ("AuthenticationError", "PermissionDeniedError", "CallerCredentialAuthenticationError"):
        hint = f"set {settings.api_key_env}" if settings.api_key_env else "export the provider's key variable"
        return AIError("auth", f"{model}: the provider refused the key ({hint}; keys are read from the environment)")
    if name in ("RateLimitError", "CallerCredentialRateLimitError", "RouterRateLimitError"):
        return AIError("rate_limit", f"{model}: rate limited by the provider; wait a minute and ask again")
    if name == "Timeout" or "timed out" in text.lower() or "timeout" in name.lower():
        return AIError("timeout", f"{model}: no answer within {settings.timeout:g} s{where}; "
                                  "raise [ai] timeout or try a smaller model")
    if name in ("APIConnectionError", "ServiceUnavailableError", "InternalServerError", "BadGatewayError") and \
            any(w in text.lower() for w in ("connect", "refused", "unreachable", "name or service", "resolve")):
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
