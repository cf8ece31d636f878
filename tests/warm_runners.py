"""Warm children shared by a whole test session.

Starting a child costs numba's import (about 1.5 s of both cores here); an app under test starts
two (the backend's, and on the simulator the compiler's beside it, which the runner owns). App tests that are not about starting children
borrow these instead; tests about a cold start, a timeout or a child's death make their own.
conftest.py closes them when the session ends.
"""

from tutor.engine.runner import Runner

_SHARED: dict = {}


def app_runner(backend: str = "sim", timeout: float = 10.0) -> Runner:
    """The backend's runner for make_app(runner=...), started on first use."""
    key = (backend, timeout)
    if key not in _SHARED:
        _SHARED[key] = Runner(backend, timeout=timeout)
    return _SHARED[key]


def close_all() -> None:
    for runner in _SHARED.values():
        runner.close()
    _SHARED.clear()
