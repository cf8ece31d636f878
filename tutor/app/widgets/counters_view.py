"""The memory counters of the config on show, in place of the grid while asked for (/).

Three views of one launch, top to bottom: the verdict's figures in words (what the child counted),
every line that touched memory by cost, and the roofline. Picking a line (up/down) shows its
costliest request lane by lane, which is why it costs; enter (or a click) also puts the editor's
cursor on it. The lines, the lanes and the roofline come from the run's trace, which came back
with the verdict: counting it here runs none of the learner's code, and a config with no trace
kept says so instead.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tutor.textsafe import terminal_safe
from .editor import MARKS

LINES_TITLE = "Lines by cost (up/down: a line's lanes; enter: the editor's cursor there; pgdn: the roofline):"
NO_TRACE = "No trace was kept for this config, so its lines and roofline cannot be drawn."


class LineList(OptionList):
    """The lines by cost. Page up and down scroll the whole view (to the roofline below), not the
    list: up and down already walk the list, and the view is longer than a screen."""

    BINDINGS = [Binding("pagedown", "page_view(1)", "scroll down", show=False),
                Binding("pageup", "page_view(-1)", "scroll up", show=False)]

    def action_page_view(self, direction: int) -> None:
        view = self.parent
        if isinstance(view, VerticalScroll):
            (view.scroll_page_down if direction > 0 else view.scroll_page_up)(animate=False)


class CountersView(VerticalScroll, can_focus=False):
    """The shown config's counters, its lines (a list to pick from) and its roofline."""

    class LineChosen(Message):
        """Enter or a click on a line of the list: the app moves the editor's cursor to it."""

        def __init__(self, line: int):
            super().__init__()
            self.line = line

    DEFAULT_CSS = """
    CountersView {
        overflow-x: auto;
        padding: 0 1;
    }
    CountersView > Static {
        height: auto;
    }
    CountersView > #counters-lines-title {
        margin-top: 1;
        color: $text-muted;
    }
    CountersView > OptionList, CountersView > OptionList:focus {
        height: auto;
        max-height: 12;
        border: none;
        padding: 0;
    }
    CountersView > #counters-detail {
        margin-bottom: 1;
    }
    CountersView > #counters-roofline {
        width: auto;
        margin-top: 1;
    }
    """

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self._shown: tuple | None = None  # (key, summary, source, trace, counted, flops) on show
        self._rows: list[int] = []        # the list's options: their source lines
        self._details: dict[int, list[str]] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="thread-pane-counters")  # the verdict's figures in words
        yield Static(LINES_TITLE, id="counters-lines-title")
        yield LineList(id="counters-lines")
        yield Static(id="counters-detail")
        yield Static(id="counters-roofline")

    @property
    def lines(self) -> OptionList:
        return self.query_one("#counters-lines", OptionList)

    def show(self, summary, source: str, trace, counted, flops: float | None) -> None:
        """One config's counters: the verdict's `summary`, the `trace` of its run (or None) and
        its Counters `counted` from that trace, the puzzle's FLOPs for it (or None)."""
        from ...engine.analysis.counters import summary_text

        key = (id(summary), source, id(trace), flops)
        if self._shown is not None and self._shown[0] == key:
            return
        self._shown = (key, summary, source, trace, counted, flops)
        self._details = {}
        source_lines = source.splitlines()
        self.query_one("#thread-pane-counters", Static).update(Text(summary_text(summary, source_lines)))
        options, self._rows = [], []
        if counted is not None:
            for x in counted.ranked():
                if x.requests and isinstance(x.line, int):
                    options.append(Option(_row(x, source_lines, counted.mark_kinds(x))))
                    self._rows.append(x.line)
        self.lines.set_options(options)  # empty, it still holds the keys, so they stay the pane's
        self.query_one("#counters-lines-title", Static).update(
            LINES_TITLE if options else NO_TRACE if trace is None else "No line touched global or shared memory.")
        if options:
            self.lines.highlighted = 0  # the costliest line's lanes, at once
        else:
            self.query_one("#counters-detail", Static).update("")
        self._roofline()

    def focus_lines(self) -> None:
        """The keys go to the list of lines."""
        self.lines.focus()

    def on_resize(self, event) -> None:
        self._roofline()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._detail(event.option_index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._detail(event.option_index)
        if 0 <= event.option_index < len(self._rows):
            self.post_message(self.LineChosen(self._rows[event.option_index]))

    def _detail(self, index: int) -> None:
        if self._shown is None or not 0 <= index < len(self._rows):
            return
        _, _, source, trace, _, _ = self._shown
        line = self._rows[index]
        if line not in self._details:
            from ...engine.analysis.counters import line_detail

            source_lines = source.splitlines()
            code = source_lines[line - 1].strip() if 0 < line <= len(source_lines) else ""
            detail = line_detail(trace, line, source) if trace is not None else []
            self._details[line] = [f"line {line} ({code}), its costliest request per array:"] + detail
        self.query_one("#counters-detail", Static).update(Text(terminal_safe("\n".join(self._details[line]))))

    def _roofline(self) -> None:
        """The roofline for the config on show, as wide as the view allows (60 columns at most)."""
        view = self.query_one("#counters-roofline", Static)
        if self._shown is None:
            return
        _, _, _, trace, counted, flops = self._shown
        if counted is None:
            view.update("")
            return
        from ...engine.analysis.device_model import DEVICES
        from ...engine.analysis.roofline import roofline

        width = self.scrollable_content_region.width or 60
        view.update(Text(roofline(counted, DEVICES["h200"], flops).text(width), no_wrap=True))


def _row(x, source_lines: list[str], kinds: list[str]) -> Text:
    """One line of the list: its marks' glyphs, what it does, what it costs, its code."""
    from ...engine.analysis.counters import ACCESS_NAMES, GLOBAL
    from ...plural import counted

    what = ACCESS_NAMES.get((x.space, x.op), f"{x.space} {x.op}")
    if x.space == GLOBAL:
        cost = f"{x.sectors_per_request:.1f} sectors/req (ideal {x.ideal_sectors / x.requests:.1f})"
    else:
        cost = counted(x.bank_conflicts, "bank conflict")
    code = source_lines[x.line - 1].strip() if 0 < x.line <= len(source_lines) else ""
    glyphs = "".join(MARKS[k][0] for k in MARKS if k in kinds)
    text = Text(terminal_safe(f"{glyphs:<2}line {x.line:>3}  {what} of {x.array}: {cost}, "
                              f"{x.lanes_per_request:.0f} lanes  | "))
    text.append(terminal_safe(code), style="dim")
    return text
