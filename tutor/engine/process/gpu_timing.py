"""How a launch is timed on a GPU: the one method for puzzles (engine/gpu.py), the coach's
verifier (engine/task_child.py) and the benchmarks.

Python launches are slow to enqueue (numba's dispatch costs tens of microseconds per kernel), and
CUDA events placed around a launch on an idle GPU time that host work as much as the kernel. So
before each run the GPU is given work of its own: first a pass over a buffer larger than L2 (the
run starts from cold caches), then a single thread that sleeps for `HOLD_US`. The host enqueues the
start event, the launch and the end event while the GPU is still held, and the events measure what
the device did. The host's enqueue time is measured too and reported beside it, never hidden: a
run whose enqueue outlasted the hold is counted, and the caller says so.
"""

from __future__ import annotations

import statistics
import time

HOLD_US = 3000          # longer than any launch() we have seen enqueue (attention: ~0.2 ms)
FLUSH_BYTES = 192 * 1024 * 1024   # larger than any L2 we know (H200: 50 MB)

_KERNELS: dict = {}


def _kernels(cuda):
    if not _KERNELS:
        @cuda.jit
        def touch(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] + 1.0

        @cuda.jit
        def hold(us):
            if cuda.grid(1) == 0:
                for _ in range(us):
                    cuda.nanosleep(1000)

        _KERNELS.update(touch=touch, hold=hold)
    return _KERNELS


_FLUSH: list = []  # one flush buffer per process (192 MB is not allocated per check)


class Timer:
    """Median device time of `fn` in milliseconds, cold L2, host enqueue hidden behind a hold.
    `hold_us`: how long the GPU is held before each run; a puzzle's launch enqueues in tens of
    microseconds, a coaching task's several launches in up to a few hundred."""

    def __init__(self, cuda, hold_us: int = HOLD_US):
        import numpy as np

        self.cuda = cuda
        self.hold_us = int(hold_us)
        self.kernels = _kernels(cuda)
        if not _FLUSH:
            _FLUSH.append(cuda.device_array(FLUSH_BYTES // 4, dtype=np.float32))
        self.flush = _FLUSH[0]

    def _prepare(self, reset=None) -> None:
        if reset is not None:
            reset()  # untimed: before the flush and the hold
        n = self.flush.size
        self.kernels["touch"][(n + 255) // 256, 256](self.flush)
        self.kernels["hold"][1, 32](self.hold_us)

    def time(self, fn, runs: int, warmup: int = 3, reset=None, after=None) -> dict:
        """`reset()` puts the output back before every run, untimed (a kernel that skips its work
        when `out` already holds numbers must time the whole work); `after(n)` sees each run's
        result, untimed, so what the timed runs wrote can be judged too."""
        cuda = self.cuda
        for _ in range(warmup):
            if reset is not None:
                reset()
            fn()
        self._prepare(reset)  # compiles both helper kernels outside the timed runs
        cuda.synchronize()
        device, host, late = [], [], 0
        start, end = cuda.event(), cuda.event()
        for n in range(runs):
            self._prepare(reset)
            t0 = time.perf_counter()
            start.record()
            fn()
            end.record()
            enqueue = time.perf_counter() - t0
            end.synchronize()
            if after is not None:
                after(n)
            device.append(cuda.event_elapsed_time(start, end))
            host.append(enqueue * 1000)
            late += enqueue * 1e6 > self.hold_us * 0.8
        return {"ms": statistics.median(device), "host_enqueue_ms": statistics.median(host), "runs": runs,
                "enqueue_outlasted_hold": late}
