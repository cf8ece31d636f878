"""The key line at the foot of the screen, showing only the keys that fit whole.

Textual's Footer lays its keys in one row and cuts the row at the screen's edge: at 80 columns,
with the thread grid focused, the learner read `c memory c` and never saw the help key. This one
shows the keys in the order the bindings give them (the focused pane's first, then the app's) as
long as each fits whole, and always keeps the help key (F1, which lists every key) at the end.

It is rebuilt only when the keys it shows change: Textual's rebuilds its dozen key widgets at every
change of the bindings, which Textual signals at every change of focus (twice for one pane key),
the largest part of the time a pane key took to answer. Moving between the lesson and the code
changes no key on show, so nothing is rebuilt.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Footer, Label

HELP_ACTION = "help"  # the key that is never left out: it lists all the others


class FittingFooter(Footer):
    DEFAULT_CSS = """
    FittingFooter.-compact FooterLabel {
        margin: 0 1 0 0;
    }
    """

    _shown: tuple | None = None

    async def recompose(self) -> None:
        shown = self._keys_on_show()
        if shown is not None and shown == self._shown:
            return
        self._shown = shown
        await super().recompose()
        self.fit()

    def _keys_on_show(self) -> tuple | None:
        """Everything the footer draws from, or None when there is no screen to ask yet."""
        try:
            active = self.screen.active_bindings
        except Exception:  # not mounted on a screen yet: build as Textual would
            return None
        keys = tuple((binding.key, binding.action, binding.description, binding.group, enabled, tooltip)
                     for _, binding, enabled, tooltip in active.values() if binding.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return keys, palette and palette[2], self.compact, self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Hide the keys past the width, from the last; the help key stays in any case."""
        units = self._units()
        room = self.size.width
        if not units or not room:
            return
        keep = next((u for u in units if any(getattr(k, "action", None) == HELP_ACTION for k in u)), None)
        used = sum(_width(w) for w in keep) if keep else 0
        fits = True
        for unit in units:
            if unit is keep:
                continue
            width = sum(_width(w) for w in unit)
            fits = fits and used + width <= room
            used += width if fits else 0
            for widget in unit:
                widget.display = fits

    def shown_keys(self) -> list[str]:
        """The keys on show, as the footer draws them (for tests)."""
        return [key.key_display for key in self.query("FooterKey") if key.display and key.parent.display]

    def _units(self) -> list[list[Widget]]:
        """The footer's children in runs that come and go together: a key, or a group of keys
        with its description after it. The command palette's key, docked right, is not one."""
        units: list[list[Widget]] = []
        for child in self.children:
            if child.has_class("-command-palette"):
                continue
            if isinstance(child, Label) and units and not hasattr(units[-1][-1], "action"):
                units[-1].append(child)  # a group's description, after its keys
            else:
                units.append([child])
        return units


def _width(widget: Widget) -> int:
    """The cells a footer item takes, its margins included."""
    size = Size(0, 0)
    return widget.get_content_width(size, size) + widget.styles.gutter.width + widget.styles.margin.width
