"""A scrolling view of prepared lines of (text, component class) pairs, drawn as cached strips.

The array view and the thread detail both build their content as such lines whenever what they
show changes, and draw only the visible ones through the Line API; this holds that machinery once.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class StyledLines(ScrollView):
    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[list[tuple[str, str | None]]] = []  # (text, component class)
        self._strips: dict[int, Strip] = {}

    def lines_text(self) -> list[str]:
        """The plain text of every line (for tests and copying)."""
        return ["".join(text for text, _ in line) for line in self._lines]

    def set_lines(self, lines: list) -> None:
        self._lines = lines
        self._strips.clear()
        width = max((sum(len(t) for t, _ in line) for line in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        base = self.rich_style
        strip = self._strips.get(line)
        if strip is None:
            strip = self._render_full_line(line, base)
            self._strips[line] = strip
        return strip.crop_extend(scroll_x, scroll_x + self.size.width, base)

    def _render_full_line(self, line: int, base: Style) -> Strip:
        if line >= len(self._lines):
            return Strip.blank(0, base)
        return Strip([Segment(text, self.get_component_rich_style(comp) if comp else base)
                      for text, comp in self._lines[line]])
