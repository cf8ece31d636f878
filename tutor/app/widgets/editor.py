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

import difflib

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Offset
from textual.strip import Strip
from textual.widgets import TextArea
from textual.widgets.text_area import Document, Selection

from tutor.textsafe import terminal_safe, terminal_safe_columns
from .keys_in_order import run_own_binding

DEDENTERS = ("return", "pass", "break", "continue", "raise")
# A mark's kind (counters.Counters.marks): its gutter glyph, its word in the legend and its theme
# colour, most costly first.
MARKS = {"uncoalesced": ("◆", "uncoalesced", "warning"), "conflicted": ("■", "bank conflicts", "error"),
         "divergent": ("◐", "idle lanes", "accent")}
MARK_TEXT = 200  # a mark's words come from the child that counted: at most this many characters


def _word(character: str) -> bool:
    return character.isalnum() or character == "_"


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


def _dedent(line: str, unit: str) -> str:
    """`line` less one level of indentation: a tab, or up to `unit`'s width of spaces."""
    if line.startswith("\t"):
        return line[1:]
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, len(unit.expandtabs())):]


def marks_of(summary) -> list[tuple[int, str, str]]:
    """(line, kind, words) for each mark of a verdict's counters (ConfigResult.counters["marks"]).
    The summary came from the child that ran the kernel: anything not shaped as ours is skipped."""
    marks = summary.get("marks") if isinstance(summary, dict) else None
    out = []
    for m in marks if isinstance(marks, list) else []:
        if not isinstance(m, dict):
            continue
        line, kind, text = m.get("line"), m.get("kind"), m.get("text")
        if type(line) is int and line > 0 and kind in MARKS and isinstance(text, str):
            out.append((line, kind, terminal_safe(text[:MARK_TEXT])))
    return out


class CodeEditor(TextArea):
    BINDINGS = [
        Binding("ctrl+home", "go_to(True)", "top of the file", show=False),
        Binding("ctrl+end", "go_to(False)", "end of the file", show=False),
    ]

    COMPONENT_CLASSES = {f"code-editor--{kind}" for kind in MARKS}
    DEFAULT_CSS = "\n".join(f"CodeEditor > .code-editor--{kind} {{ color: ${colour}; text-style: bold; }}"
                            for kind, (_, _, colour) in MARKS.items())

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # One undo step per word, at any typing speed: Textual's history also cut a step after 2 s
        # without a key, so the same keys undid in different steps typed fast or slow.
        self.history.checkpoint_timer = float("inf")
        self._ran: list[str] = []            # the lines the marks were counted on
        self._ran_marks: dict = {}           # their row -> [(kind, words)], most costly first
        self._mapped_for: list[str] | None = None
        self._mapped: dict = {}              # the document's row -> [(kind, words)], for _mapped_for
        self._moved: dict = {}               # a row of the run's code -> its row now, where unchanged

    # -- the last run's marks ---------------------------------------------------------------------
    def show_marks(self, marks: list[tuple[int, str, str]], source: str) -> None:
        """Mark the lines of `source` (the code that ran) by their cost; [] clears the marks."""
        order = list(MARKS)
        self._ran = list(Document(source).lines)
        self._ran_marks = {}
        for line, kind, words in sorted(marks, key=lambda m: (m[0], order.index(m[1]))):
            if line <= len(self._ran):
                self._ran_marks.setdefault(line - 1, []).append((kind, words))
        self._mapped_for = None
        self.refresh()

    @property
    def marks(self) -> dict[int, list[tuple[str, str]]]:
        """The marks as the text stands now: row (0-based) -> [(kind, words)]. A line changed since
        the run has none; one moved by edits around it keeps its own."""
        if not self._ran_marks:
            return {}
        self._follow()
        return self._mapped

    def row_now(self, line: int) -> int:
        """Where line `line` (1-based) of the code that ran stands now (0-based): its own row if it
        is unchanged, else the same row number."""
        self._follow()
        return self._moved.get(line - 1, line - 1)

    def _follow(self) -> None:
        lines = self.document.lines
        if self._mapped_for == lines:
            return
        self._mapped_for = list(lines)
        self._mapped, self._moved = {}, {}
        if self._ran:
            matcher = difflib.SequenceMatcher(None, self._ran, self._mapped_for, autojunk=False)
            for old, new, size in matcher.get_matching_blocks():
                for k in range(size):
                    self._moved[old + k] = new + k
                    if old + k in self._ran_marks:
                        self._mapped[new + k] = self._ran_marks[old + k]

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not self._ran_marks or not self.show_line_numbers:
            return strip
        offset = Offset(0, y + self.scroll_offset.y)
        if offset.y >= self.wrapped_document.height:
            return strip
        row, _ = self.wrapped_document.offset_to_location(offset)
        if self.wrapped_document.location_to_offset((row, 0)).y != offset.y:
            return strip  # a soft-wrapped line's continuation: the mark is on its first row
        found = self.marks.get(row)
        if not found:
            return strip
        kind = found[0][0]
        at = self.gutter_width - 2  # the gutter's margin, right of the line number
        segments = list(strip.crop(at, at + 1))
        base = segments[0].style if segments else None
        style = self.get_component_rich_style(f"code-editor--{kind}", partial=True)
        mark = Strip([Segment(MARKS[kind][0], base + style if base else style)], 1)
        return Strip.join([strip.crop(0, at), mark, strip.crop(at + 1, strip.cell_length)])

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
        if event.key in ("tab", "shift+tab") and not self.read_only and (
                event.key == "shift+tab" or self.selection.start[0] != self.selection.end[0]):
            event.stop()
            event.prevent_default()
            self._shift_lines(-1 if event.key == "shift+tab" else 1)
            return
        if event.key == "escape" and not self.read_only:
            # Textual's TextArea hands escape's focus to the next widget from the editor's queue: the
            # letters typed right after it still went into the code, typed slowly they went nowhere.
            # The panes have their keys (F4, ctrl+e, ctrl+l, ctrl+g); escape only drops a selection.
            event.stop()
            event.prevent_default()
            self.selection = Selection.cursor(self.selection.end)
            return
        if await run_own_binding(self, event):
            return
        if event.is_printable and not _word(event.character) and self.selection.is_empty:
            row, column = self.cursor_location
            if column and _word(self.document[row][column - 1]):
                self.history.checkpoint()  # a word ends: the next undo step starts here
        await super()._on_key(event)

    def action_delete_left(self) -> None:
        """Backspace in a line's indentation removes a level of it (to the tab stop before), as
        Python editors do; elsewhere one character."""
        start, end = self.selection
        row, column = end
        before = self.document[row][:column]
        if not self.read_only and start == end and column and not before.strip(" "):
            self._delete_via_keyboard((row, (column - 1) // self.indent_width * self.indent_width), end)
            return
        super().action_delete_left()

    def _shift_lines(self, step: int) -> None:
        """Tab on lines selected indents them a level, shift+tab dedents the selected lines or the
        cursor's (Textual's TextArea replaced the selected lines by one indent, and gave shift+tab to
        the focus). One undo step; a blank line stays blank."""
        start, end = self.selection
        first, last = sorted((start[0], end[0]))
        if last > first and (end if end[0] == last else start)[1] == 0:
            last -= 1  # a selection that ends at a line's start leaves that line alone
        unit = "\t" if self.indent_type == "tabs" else " " * self.indent_width
        lines = [self.document[row] for row in range(first, last + 1)]
        if step > 0:
            shifted = [unit + line if line.strip() else line for line in lines]
        else:
            shifted = [_dedent(line, unit) for line in lines]
        if shifted == lines:
            return
        moved = {row: len(new) - len(old) for row, (old, new) in enumerate(zip(lines, shifted), first)}
        self.history.checkpoint()
        self._replace_via_keyboard("\n".join(shifted), (first, 0), (last, len(lines[-1])))
        self.history.checkpoint()

        def kept(at):  # the same character, or the line's start where the indent under it went
            return at[0], max(0, at[1] + moved.get(at[0], 0)) if at[1] else 0

        self.selection = Selection(kept(start), kept(end))

    def action_go_to(self, top: bool) -> None:
        self.move_cursor((0, 0) if top else self.document.end)

    def scroll_cursor_visible(self, center: bool = False, animate: bool = False):
        offset = super().scroll_cursor_visible(center, animate)
        x = self._cursor_offset[0] if self._has_cursor else 0
        if self.scroll_x and x + 3 + self.gutter_width <= self.scrollable_content_region.width:
            self.scroll_to(x=0, animate=False, immediate=True)
        return offset
