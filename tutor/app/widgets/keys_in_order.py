"""Keys land in the order they were typed, in the widgets that take text.

Textual hands a focused widget its printable keys in the widget's own key handler, but a key bound
to an action (backspace, delete, the arrows, home, ctrl+z) goes back up to the app's message queue
and its binding runs only when the app reaches it there: after any letters already queued behind it.
Typed fast, or while the app is busy, `pass` + four backspaces + `i` became `pai` (Textual issue 6605).
A text widget that runs its own bindings inside its key handler applies every key where it arrived.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Input


def own_binding(widget: Widget, key: str) -> bool:
    """Whether `widget` itself binds `key` (not as a priority key: those the app ran already)."""
    return any(not binding.priority for binding in widget._bindings.key_to_bindings.get(key, ()))


async def run_binding(widget: Widget, key: str) -> bool:
    """Run `widget`'s own binding for `key` now, as Textual would later; True if one ran."""
    for binding in widget._bindings.key_to_bindings.get(key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            return True
    return False


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run `widget`'s own binding for `event` in its key handler; True if one ran, and then the key
    goes no further (no second run from the app's queue)."""
    if await run_binding(widget, event.key):
        event.stop()
        event.prevent_default()
        return True
    return False


class InOrderInput(Input):
    """A one-line Input whose backspace and arrows land where they were typed too."""

    async def _on_key(self, event: events.Key) -> None:
        if await run_own_binding(self, event):
            return
        await super()._on_key(event)
