"""Warm children shared by a whole test session.

Starting a child costs numba's import (about 1.5 s of both cores here); an app under test starts
two (the backend's, and the compiler's beside it). App tests that are not about starting children
borrow these instead; tests about a cold start, a timeout or a child's death make their own.
conftest.py closes them when the session ends.
"""

from tutor.engine.runner import Runner

_SHARED: dict = {}


def app_runners(backend: str = "sim", timeout: float = 10.0) -> tuple[Runner, Runner]:
    """(the backend's runner, the compiler's) for make_app(runners=...), started on first use."""
    key = (backend, timeout)
    if key not in _SHARED:
        _SHARED[key] = (Runner(backend, timeout=timeout), Runner("sim", timeout=timeout))
    return _SHARED[key]


def close_all() -> None:
    for runners in _SHARED.values():
        for r in runners:
            r.close()
    _SHARED.clear()
