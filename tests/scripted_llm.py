"""A scripted model registered through litellm's own CustomLLM hook: litellm's real code path,
with replies chosen by the test. Each reply is a string (streamed word by word), an exception to
raise, or ("slow", seconds_per_word, text)."""

from __future__ import annotations

import time


def register(replies: list, name: str = "scripted"):
    from tutor.ai.llm import import_litellm

    litellm = import_litellm()
    from litellm import CustomLLM

    class Scripted(CustomLLM):
        def __init__(self):
            super().__init__()
            self.replies = list(replies)
            self.calls: list[list[dict]] = []

        def _next(self, kwargs):
            self.calls.append(kwargs.get("messages"))
            reply = self.replies.pop(0) if self.replies else "Which thread writes which cell?"
            if isinstance(reply, BaseException):
                raise reply
            return reply

        def completion(self, *args, **kwargs):
            text = self._next(kwargs)
            return litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": text}}])

        def streaming(self, *args, **kwargs):
            reply = self._next(kwargs)
            delay = 0.0
            if isinstance(reply, tuple):
                _, delay, reply = reply
            words = reply.split(" ")
            for n, word in enumerate(words):
                if delay:
                    time.sleep(delay)
                yield {"text": word if n == len(words) - 1 else word + " ", "is_finished": False,
                       "finish_reason": "", "usage": None, "index": 0, "tool_use": None}
            yield {"text": "", "is_finished": True, "finish_reason": "stop", "index": 0, "tool_use": None,
                   "usage": {"prompt_tokens": 100, "completion_tokens": len(words), "total_tokens": 100 + len(words)}}

    handler = Scripted()
    litellm.custom_provider_map = [m for m in litellm.custom_provider_map if m["provider"] != name]
    litellm.custom_provider_map.append({"provider": name, "custom_handler": handler})
    litellm.register_model({f"{name}/tutor": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                               "litellm_provider": name, "mode": "chat",
                                               "max_tokens": 4096}})
    return handler
