"""The code editor: Textual's TextArea, made to behave as a Python editor a learner expects.

Control characters are drawn as visible symbols: a code file on disk (or text pasted in) may hold
ESC, a carriage return or a bidi override, and Textual's TextArea draws each line's characters as
they are, so the terminal would obey an ESC sequence instead of showing it. The learner's text
stays exactly as typed; each such character is drawn as one visible character (U+241B for ESC,
U+FFFD for C1 and bidi controls), one for one, so the cursor, the selection and the highlighting
keep their columns. Copying, saving and running use the real text.

Enter keeps the line's indentation (one level more after a `:`), as every Python editor does: a
kernel body's next line at column 0 is module code, and the loader's NameError would be the first
a learner hears of it. Once the cursor is back on a short line the view returns to column 0, so a
single long line does not leave the file reading `umba`.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import TextArea

from ...textsafe import terminal_safe_columns

DEDENTERS = ("return", "pass", "break", "continue", "raise")


def next_indent(line: str, column: int, width: int = 4) -> str:
    """The indentation a new line gets when Enter is pressed at `column` of `line`."""
    before = line[:column]
    indent = before[: len(before) - len(before.lstrip(" \t"))]
    code = before.split("#", 1)[0].rstrip()
    if code.endswith(":"):
        return indent + " " * width
    statement = code.strip()
    if statement in DEDENTERS or statement.startswith(tuple(d + " " for d in DEDENTERS)):
        return indent[:-width] if indent.endswith(" " * width) else indent
    return indent


class CodeEditor(TextArea):
    BINDINGS = [
        Binding("ctrl+home", "go_to(True)", "top of the file", show=False),
        Binding("ctrl+end", "go_to(False)", "end of the file", show=False),
    ]

    def get_line(self, line_index: int) -> Text:
        """Textual's own version also drops BEL, BS, VT, FF and CR, which shifts every highlight after
        them by a column; this keeps one symbol per character."""
        line = self.document.get_line(line_index)
        return Text(terminal_safe_columns(line), end="", no_wrap=True)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter" and not self.read_only:
            event.stop()
            event.prevent_default()
            start, end = self.selection
            row, column = min(start, end)
            indent = next_indent(self.document[row], column, self.indent_width)
            self._replace_via_keyboard("\n" + indent, start, end)
            return
        await super()._on_key(event)

    def action_go_to(self, top: bool) -> None:
        self.move_cursor((0, 0) if top else self.document.end)

    def scroll_cursor_visible(self, center: bool = False, animate: bool = False):
        offset = super().scroll_cursor_visible(center, animate)
        x = self._cursor_offset[0] if self._has_cursor else 0
        if self.scroll_x and x + 3 + self.gutter_width <= self.scrollable_content_region.width:
            self.scroll_to(x=0, animate=False, immediate=True)
        return offset
