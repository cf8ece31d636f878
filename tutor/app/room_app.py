"""The facilitator's live view of a room (`gpu-tutor room DIR`): a thin view over LiveRoom.

Every second a thread worker reads the room again (tutor.workshop.live: only the folders whose
files changed) and hands the picture back as a message; the screen draws it and decides nothing.
The screen never waits on a learner's folder, so a slow disk or a hostile file slows no key.

Five views, one a tab (F6 goes round them): the learners by puzzles, the room's shared mistakes
(Enter: who, and one of their kernels where the room allows it), hint use and who has gone quiet,
the folders and files that could not be read (each with why; the rest of the room goes on), and a
message to every learner's screen (a served room only). The keys are function keys: a letter is
always text, for the message box.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Header, Input, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from tutor.textsafe import one_line, terminal_safe
from tutor.workshop.live import FAILING, LiveRoom, RoomPicture
from tutor.workshop.room_code import CodePolicy, code_policy, kernel_of
from tutor.workshop.room_message import (MAX_TEXT, MESSAGE_FILE, MessageRefused, RoomMessage, message_refusal,
                                         read_message, send_message)
from .screens.misconception import LearnerEntry, MisconceptionScreen
from .widgets.footer import FittingFooter
from .widgets.room_grid import LearnerGrid, duration, legend

REFRESH_S = 1.0
SORTS = {"progress": "progress", "stuck": "time stuck", "name": "name"}
VIEWS = ["learners", "mistakes", "hints", "problems", "message"]
MAX_PROBLEMS = 200  # lines of the problems view: a folder of thousands of stray files must not freeze the screen
MAX_PROBLEM = 600   # characters of one (a path and why)
MAX_TITLE = 120     # the room's title in the header


class RoomRead(Message):
    """One reading of the room, from the worker."""

    def __init__(self, picture: RoomPicture | None, policy: CodePolicy, message: RoomMessage | None,
                 error: str | None):
        super().__init__()
        self.picture = picture
        self.policy = policy
        self.message = message
        self.error = error


class RoomViewApp(App):
    TITLE = "gpu-tutor room"
    CSS = """
    #status {
        height: auto;
        padding: 0 1;
        background: $boost;
    }
    #views, #views > ContentSwitcher {
        height: 1fr;
    }
    #views TabPane {
        height: 1fr;
        padding: 0 1;
    }
    #legend, #code-policy, #mistakes-help {
        height: auto;
        color: $text-muted;
    }
    #mistakes {
        height: 1fr;
    }
    #message-why {
        height: auto;
        margin-bottom: 1;
    }
    #message-last {
        height: auto;
        margin-top: 1;
    }
    """
    BINDINGS = [
        Binding("f2", "sort('progress')", "By progress", tooltip="Sort the learners: most solved first"),
        Binding("f3", "sort('stuck')", "By stuck", tooltip="Sort the learners: longest stuck on one puzzle first"),
        Binding("f4", "sort('name')", "By name", tooltip="Sort the learners by name"),
        Binding("f6", "next_view", "Next view", tooltip="Learners, mistakes, hints, problems, message"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, path: Path, *, served: bool = False, seat_numbers: bool = False, clock=time.time):
        """`served`: in the facilitator's browser (`gpu-tutor serve`), where closing the tab ends it.
        `seat_numbers`: learners shown as seat numbers, not names (a screen the room can see)."""
        super().__init__()
        self.path = Path(path)
        self.served = served
        self.clock = clock
        self.room = LiveRoom(self.path, clock=clock, seat_numbers=seat_numbers)
        self.sort = "name"
        self.picture: RoomPicture | None = None
        self.policy: CodePolicy = CodePolicy("none", False, "")
        self.message: RoomMessage | None = None
        self._reading = False
        self._shown_mistakes: tuple | None = None
        self._shown_problems: tuple | None = None
        self._legend_compact: bool | None = None
        self.reads = 0  # readings drawn (tests wait on it)
        if served:
            self._bindings.key_to_bindings.pop("ctrl+q", None)  # a browser tab is closed, not quit

    # -- layout -----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static("reading the room...", id="status")
        with TabbedContent(id="views", initial="learners"):
            with TabPane("Learners", id="learners"):
                yield LearnerGrid(id="grid")
                yield Static(id="legend")
            with TabPane("Mistakes", id="mistakes-tab"):
                yield OptionList(id="mistakes")
                yield Static(id="code-policy")
                yield Static("Enter on a mistake: its learners and their code (where the room allows it).",
                             id="mistakes-help")
            with TabPane("Hints & idle", id="hints"):
                with VerticalScroll():
                    yield Static(id="hint-table")
                    yield Static(id="idle")
            with TabPane("Problems", id="problems"):
                with VerticalScroll():
                    yield Static(id="problem-list")
            with TabPane("Message", id="message"):
                with Vertical():
                    yield Static(id="message-why")
                    yield Input(placeholder="a message for every learner's screen (Enter sends it)",
                                max_length=MAX_TEXT, id="message-input")
                    yield Static(id="message-last")
        yield FittingFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = one_line(self.path.name or str(self.path))
        why = message_refusal(self.path)
        self.query_one("#message-input", Input).disabled = why is not None
        self.query_one("#message-why", Static).update(Text(
            f"Not available: {terminal_safe(why)}" if why else
            "A break, a hint for everyone: each learner's app shows it once, as a notice from you."))
        self.query_one("#grid").focus()
        self._read()
        self.set_interval(REFRESH_S, self._read)

    # -- reading, off the screen's thread ---------------------------------------------------------
    def _read(self) -> None:
        if not self._reading:  # one reading at a time: LiveRoom is one reader's
            self._reading = True
            self._read_room()

    @work(thread=True, group="room", exit_on_error=False)
    def _read_room(self) -> None:
        picture, policy, message, error = None, self.policy, self.message, None
        try:
            picture = self.room.refresh()
            policy = code_policy(self.path)
            message = read_message(self.path / MESSAGE_FILE)
        except Exception as e:  # the view goes on (the next reading may do better) and says what stopped this one
            error = f"the room could not be read this time ({type(e).__name__}: {str(e)[:160]})"
        finally:  # always answered: a reading that never came back would stop every later one
            self.post_message(RoomRead(picture, policy, message, error))

    @on(RoomRead)
    def _room_read(self, read: RoomRead) -> None:
        self._reading = False
        self.policy, self.message = read.policy, read.message
        if read.picture is not None:
            self.picture = read.picture
        self._draw(read.error)
        self.reads += 1

    # -- drawing ----------------------------------------------------------------------------------
    def _draw(self, error: str | None = None) -> None:
        picture = self.picture
        if picture is None:
            self.query_one("#status", Static).update(Text(terminal_safe(error or "reading the room...")))
            return
        if picture.title:
            self.sub_title = one_line(picture.title)[:MAX_TITLE]
        grid = self.query_one("#grid", LearnerGrid)
        grid.show(picture, self.sort)
        if grid.compact != self._legend_compact:
            self._legend_compact = grid.compact
            self.query_one("#legend", Static).update(legend(self.get_css_variables(), grid.compact))
        self._draw_status(picture, error)
        self._draw_mistakes(picture)
        self._draw_hints(picture)
        self._draw_problems(picture, error)
        self._draw_message()

    def _draw_status(self, picture: RoomPicture, error: str | None) -> None:
        n = len(picture.rows)
        failing = sum(any(c.state == FAILING for c in r.cells.values()) for r in picture.rows)
        parts = [f"{n} learner{'s' if n != 1 else ''}", f"{sum(r.on_now for r in picture.rows)} at it now",
                 f"{failing} failing", f"{len(picture.idle())} idle 10 min+",
                 f"sorted by {SORTS[self.sort]}",
                 "updated " + time.strftime("%H:%M:%S UTC", time.gmtime(picture.taken_at))]
        if error:
            parts.append(terminal_safe(error))
        self.query_one("#status", Static).update(Text(" · ".join(parts)))

    def _draw_mistakes(self, picture: RoomPicture) -> None:
        of = len(picture.rows)
        lines = tuple(one_line(m.describe(of)) for m in picture.misconceptions)
        self._label("mistakes-tab", f"Mistakes ({len(lines)})")
        self.query_one("#code-policy", Static).update(Text(terminal_safe(self.policy.why)))
        if lines == self._shown_mistakes:
            return
        self._shown_mistakes = lines
        listed = self.query_one("#mistakes", OptionList)
        kept = listed.highlighted
        listed.set_options([Option(Text(line), id=str(k)) for k, line in enumerate(lines)] if lines else
                           [Option(Text("No shared mistakes: no learner's latest run is failing."), disabled=True)])
        if lines:
            listed.highlighted = min(kept or 0, len(lines) - 1)

    def _draw_hints(self, picture: RoomPicture) -> None:
        hints = picture.hints()
        levels = sorted({level for used in hints.values() for level in used if level})
        table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), header_style="bold")
        table.add_column("puzzle")
        for level in levels:
            table.add_column(f"level {level}", justify="right")
        table.add_column("asked the AI", justify="right")
        for pid in picture.puzzles:
            used = hints.get(pid, {})
            table.add_row(Text(one_line(pid)), *(str(used.get(level, "")) for level in levels),
                          str(used.get(0, "")))
        self.query_one("#hint-table", Static).update(Group(
            Text("Hints: on each puzzle, how many learners' deepest hint was each level", style="bold"), table))
        idle = picture.idle()
        out = Text(f"\nNo run for 10 minutes, still at it ({len(idle)}):\n", style="bold")
        if not idle:
            out.append("nobody: everyone at a puzzle has run their code lately\n", style="")
        for row in idle:
            on = f"on {one_line(row.current)}" if row.current else "on no puzzle"
            ago = "never ran anything" if row.last_run_at is None else \
                f"last run {duration(picture.taken_at - row.last_run_at)} ago"
            out.append(f"  {one_line(row.label)}: {on}, {ago}, {duration(row.stuck_s) or '<1m'} on it\n",
                       style="")
        self.query_one("#idle", Static).update(out)

    def _draw_problems(self, picture: RoomPicture, error: str | None) -> None:
        items = [f"{path}: {why}" for path, why in picture.problems] + list(picture.notes)
        if error:
            items.insert(0, error)
        self._label("problems", f"Problems ({len(items)})")
        shown = tuple(one_line(item)[:MAX_PROBLEM] for item in items[:MAX_PROBLEMS])
        if (shown, len(items)) == self._shown_problems:
            return  # drawn again only when it changed: a room of many problems is read every second
        self._shown_problems = (shown, len(items))
        lines = [f"• {item}" for item in shown]
        if len(items) > len(shown):
            lines.append(f"… and {len(items) - len(shown)} more (the first {len(shown)} are shown)")
        self.query_one("#problem-list", Static).update(Text("\n".join(lines) if lines else
                                                            "Every learner's folder could be read."))

    def _label(self, pane: str, label: str) -> None:
        """A view's tab, relabelled only when its count changed (a new label lays the tabs out again)."""
        tab = self.query_one("#views", TabbedContent).get_tab(pane)
        if tab.label_text != label:
            tab.label = label

    def _draw_message(self) -> None:
        last = self.message
        said = "No message sent yet." if last is None else \
            f"Last message, sent {time.strftime('%H:%M:%S UTC', time.gmtime(last.at))}: {last.text}"
        self.query_one("#message-last", Static).update(Text(said))

    # -- actions ------------------------------------------------------------------------------------
    def action_sort(self, by: str) -> None:
        self.sort = by
        self._draw()

    @on(TabbedContent.TabActivated)
    def _view_shown(self, event: TabbedContent.TabActivated) -> None:
        """The keys go to what the view is for: the grid, the list of mistakes, the message box."""
        target = {"learners": "#grid", "mistakes-tab": "#mistakes", "message": "#message-input"}.get(event.pane.id)
        if target:
            widget = self.query_one(target)
            if widget.focusable:
                widget.focus()

    def action_next_view(self) -> None:
        views = self.query_one("#views", TabbedContent)
        ids = [pane.id for pane in views.query(TabPane)]
        views.active = ids[(ids.index(views.active) + 1) % len(ids)] if views.active in ids else ids[0]

    @on(OptionList.OptionSelected, "#mistakes")
    def _mistake_chosen(self, event: OptionList.OptionSelected) -> None:
        picture = self.picture
        if picture is None or event.option.id is None:
            return
        m = picture.misconceptions[int(event.option.id)]
        learners = []
        for row in picture.learners_of(m):
            cell = row.cells.get(m.puzzle)
            line = (cell.failure or {}).get("line") if cell is not None and isinstance(cell.failure, dict) else None
            learners.append(LearnerEntry(row.id, terminal_safe(row.label), cell.active_s if cell else None,
                                    line if isinstance(line, int) else None))
        sources = {row.id: row.source for row in picture.rows}
        policy = self.policy

        def kernel(learner_id: str):
            return kernel_of(sources[learner_id], m.puzzle, policy)

        self.push_screen(MisconceptionScreen(terminal_safe(m.describe(len(picture.rows))), terminal_safe(m.puzzle),
                                             learners, kernel))

    @on(Input.Submitted, "#message-input")
    def _send(self, event: Input.Submitted) -> None:
        try:
            self.message = send_message(self.path, event.value, self.clock())
        except MessageRefused as e:
            self.notify(terminal_safe(str(e)), severity="warning", markup=False)
            return
        except OSError as e:
            self.notify(terminal_safe(f"the message could not be written: {e.strerror or e}"), severity="error",
                        markup=False)
            return
        event.input.value = ""
        self._draw_message()
        self.notify("Sent: every learner's app shows it within a few seconds.", markup=False)
