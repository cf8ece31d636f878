"""Waiting on state, never on a clock: a test waits for what it needs to be true (a verdict shown, a
screen pushed, a file written), checking after each turn of the app's loop, with a deadline generous
enough for a loaded machine. On a quiet machine the wait ends as soon as the state holds; on a busy
one it still does, where a fixed sleep would have been too short."""

import time

DEADLINE = 60.0


async def until(pilot, condition, timeout: float = DEADLINE, what: str = "") -> None:
    """Let the app's pending messages run (`pilot.pause()`) until `condition()` holds; an
    AssertionError naming `what` if it does not within `timeout` seconds."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"waited {timeout:g}s for {what or 'a condition'}, in vain")
        await pilot.pause()


def until_true(condition, timeout: float = DEADLINE, what: str = "", every: float = 0.02) -> None:
    """The same without an app: poll `condition()` every `every` seconds until it holds."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"waited {timeout:g}s for {what or 'a condition'}, in vain")
        time.sleep(every)
