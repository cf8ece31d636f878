"""The code editor: Textual's TextArea, but drawing control characters as visible symbols.

A code file on disk (or text pasted in) may hold ESC, a carriage return or a bidi override. Textual's
TextArea draws each line's characters as they are, and the terminal then obeys an ESC sequence
instead of showing it: the title changes, the screen clears, a link appears. The learner's text must
stay exactly as typed, so only the drawing changes: each such character is drawn as one visible
character (U+241B for ESC, U+FFFD for C1 and bidi controls), one for one, so the cursor, the
selection and the highlighting keep their columns. Copying, saving and running use the real text.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import TextArea

from ...textsafe import terminal_safe_columns


class CodeEditor(TextArea):
    def get_line(self, line_index: int) -> Text:
        """Textual's own version also drops BEL, BS, VT, FF and CR, which shifts every highlight after
        them by a column; this keeps one symbol per character."""
        line = self.document.get_line(line_index)
        return Text(terminal_safe_columns(line), end="", no_wrap=True)
