"""What one run of gpu-tutor is set up with, read once where it starts (the CLI's main, a served
learner's app, make_app) and passed down: the engine below reads no environment variable.

Whether code is hostile is an argument here (`Trust`), not ambient state: a served room's learner
and a model are checked in a fresh child, after the real compiler, with their module built from its
syntax tree; a learner at their own terminal is not.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum

SERVED_ENV = "GPU_TUTOR_SERVED"          # set by `gpu-tutor serve` for each browser learner's app
ROOM_MESSAGE_ENV = "GPU_TUTOR_ROOM_MESSAGE"  # set by `gpu-tutor serve`: the facilitator's message file
NO_GPU_ENV = "GPU_TUTOR_NO_GPU"          # a machine with a GPU that should not use it (tests, CI)
GPU_MEMORY_ENV = "GPU_TUTOR_GPU_MEMORY_MB"
DEFAULT_GPU_MEMORY_MB = 2048


class Trust(StrEnum):
    """Who wrote the code a runner checks, and so how it is checked."""

    LEARNER_LOCAL = "learner"   # a learner at their own terminal: their own machine, a warm child
    SERVED = "served"           # a learner in a served room: hostile to the room, a fresh child per check
    MODEL = "model"             # a model's candidate or hint: hostile, a fresh child per check


@dataclass(frozen=True)
class Session:
    trust: Trust = Trust.LEARNER_LOCAL
    content: str | None = None          # a content folder other than the package's (GPU_TUTOR_CONTENT)
    gpu_memory_mb: int = DEFAULT_GPU_MEMORY_MB  # what one check may claim of the GPU's memory
    gpu_queue: str | None = None        # the GPU queue's folder; None: the machine's default; "off": no queue
    gpu_turns: int | None = None        # how many runs hold the GPU at once; None: the queue's default
    turns_notice: str | None = None     # why a GPU_TUTOR_GPU_TURNS was not taken as it was written
    no_gpu: bool = False                # a GPU here is not used
    room_message: str | None = None     # the file a served room's facilitator writes messages to

    @classmethod
    def from_environment(cls, environ=None) -> Session:
        from .engine.process.gpulock import QUEUE_ENV, TURNS_ENV, turns_from_env
        from .puzzles import CONTENT_ENV

        env = os.environ if environ is None else environ
        turns, notice = turns_from_env(env) if env.get(TURNS_ENV, "").strip() else (None, None)
        try:
            memory = max(16, int(env.get(GPU_MEMORY_ENV, DEFAULT_GPU_MEMORY_MB)))
        except ValueError:
            memory = DEFAULT_GPU_MEMORY_MB
        return cls(trust=Trust.SERVED if env.get(SERVED_ENV) == "1" else Trust.LEARNER_LOCAL,
                   content=env.get(CONTENT_ENV) or None, gpu_memory_mb=memory,
                   gpu_queue=env.get(QUEUE_ENV, "").strip() or None, gpu_turns=turns, turns_notice=notice,
                   no_gpu=bool(env.get(NO_GPU_ENV)), room_message=env.get(ROOM_MESSAGE_ENV, "").strip() or None)
