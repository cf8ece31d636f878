"""A scrolling view of prepared lines of (text, component class) pairs, drawn as cached strips.

The array view and the thread detail both build their content as such lines whenever what they
show changes, and draw only the visible ones through the Line API; this holds that machinery once.
A view that sets `wrap` folds each line to its width (continuations indented) instead of cutting
it: in a narrow pane the end of a row, often its line number, is what the learner looks for.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

Line = list[tuple[str, str | None]]
INDENT = "    "


def fold(line: Line, width: int) -> list[Line]:
    """`line` as rows of at most `width` cells, broken after a space where one is near, the
    continuation rows indented."""
    text = "".join(t for t, _ in line)
    if width <= len(INDENT) + 8 or len(text) <= width:
        return [line]
    classes = [c for t, c in line for _ in t]
    rows, start, room = [], 0, width
    while start < len(text):
        end = min(len(text), start + room)
        if end < len(text):
            space = text.rfind(" ", start + room // 2, end)
            if space > start:
                end = space + 1
        rows.append((start, end))
        start, room = end, width - len(INDENT)
    out = []
    for n, (a, b) in enumerate(rows):
        row: Line = [(INDENT, None)] if n else []
        for i in range(a, b):
            if row and row[-1][1] == classes[i]:
                row[-1] = (row[-1][0] + text[i], classes[i])
            else:
                row.append((text[i], classes[i]))
        out.append(row)
    return out


class StyledLines(ScrollView):
    wrap = False

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[Line] = []  # (text, component class)
        self._rows: list[Line] = []   # what is drawn: the lines, folded when `wrap` is set
        self._first_row: list[int] = []  # line number -> its first row
        self._strips: dict[int, tuple] = {}  # line -> (the base style it was drawn on, its strip)
        self._folded_at = 0

    def lines_text(self) -> list[str]:
        """The plain text of every line (for tests and copying)."""
        return ["".join(text for text, _ in line) for line in self._lines]

    def rows_text(self) -> list[str]:
        """The plain text of every row as drawn."""
        return ["".join(text for text, _ in row) for row in self._rows]

    def set_lines(self, lines: list) -> None:
        self._lines = lines
        self._layout()

    def row_of(self, line: int) -> int:
        """The first drawn row of logical line `line`."""
        return self._first_row[line] if 0 <= line < len(self._first_row) else line

    def room(self) -> int:
        """The columns a row may take: the width less the vertical scrollbar, whether it shows or not
        (it comes once the rows are folded, and rows folded before it came were cut by it)."""
        return max(0, self.size.width - self.styles.scrollbar_size_vertical)

    def _layout(self) -> None:
        width = self.room()
        self._folded_at = width
        self._rows, self._first_row = [], []
        for line in self._lines:
            self._first_row.append(len(self._rows))
            self._rows.extend(fold(line, width) if self.wrap and width else [line])
        self._strips.clear()
        widest = max((sum(len(t) for t, _ in row) for row in self._rows), default=0)
        self.virtual_size = Size(widest, len(self._rows))
        self.refresh()

    def on_resize(self, event) -> None:
        if self.wrap and self.room() != self._folded_at:
            self._layout()

    def notify_style_update(self) -> None:
        """Strips drawn before the styles came (a view built while it mounts) are redrawn with them:
        cleared and not refreshed, the legend stayed without its colours on a busy machine."""
        super().notify_style_update()
        self._strips.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        base = self.rich_style
        cached = self._strips.get(line)
        # keyed by the base style too: an ancestor's new background reaches this widget's rich_style
        # without a notify_style_update, and strips drawn on the old one stayed on screen
        if cached is None or cached[0] != base:
            cached = (base, self._render_full_line(line, base))
            self._strips[line] = cached
        strip = cached[1]
        return strip.crop_extend(scroll_x, scroll_x + self.size.width, base)

    def _render_full_line(self, line: int, base: Style) -> Strip:
        if line >= len(self._rows):
            return Strip.blank(0, base)
        return Strip([Segment(text, self.get_component_rich_style(comp) if comp else base)
                      for text, comp in self._rows[line]])
