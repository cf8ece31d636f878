"""The Textual app: a thin view over the engine, the puzzles and the store.

It never runs learner code itself: the engine's warm child process does, from a thread worker, and
the verdict comes back as a message. Everything the learner types is autosaved within a second.
`make_app()` is the one factory the CLI and the tests share.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import BindingsMap
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Header, Input, Markdown, Tab, Tabs, TextArea

from ..engine.process.gpulock import waiting_text
from ..engine.runner import BACKENDS, Runner, RunnerError, default_backend, gpu_present
from ..session import Session, Trust
from tutor.puzzles import Catalog, Puzzle, load_catalog
from tutor.store import Autosaver, Store
from tutor.textsafe import terminal_safe
from tutor.workshop.config import reference_refusal
from . import keys as app_keys
from .commands import TutorCommands
from .widgets.counters_view import CountersView
from .widgets.editor import MARKS, CodeEditor, marks_of
from .widgets.footer import FittingFooter
from .widgets.hints import HintsPanel
from .widgets.keys_in_order import InOrderInput, own_binding, run_binding
from .widgets.lesson import LessonMarkdown, LessonScroll
from .widgets.thread_pane import ThreadPane
from .widgets.verdict import VerdictView

NARROW = 110  # below this many columns the three panes become tabs
WATCH_DELAY = 0.6
# What counts as the learner being at the app (tutor.activity); a mouse merely moving does not.
LEARNER_INPUT = (events.Key, events.Paste, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)
CODE_MIN = 66  # the code pane's columns at the least: 55 characters of code beside the gutter
LESSON_MIN = 54  # a lesson pane's columns at the least: its widest code block (46) and 8 of frame
STACKED = CODE_MIN + 2 * LESSON_MIN  # below this the threads sit under the lesson, which takes their columns
# name: (the pane's id, its tab in a small terminal, the widget that takes the keys in it)
# The failures sit under the editor, in its pane: a pane of their own for the keys (ctrl+e again, F4).
PANES = {"lesson": ("lesson-pane", "tab-lesson", "lesson-scroll"), "code": ("code-pane", "tab-code", "editor"),
         "failures": ("code-pane", "tab-code", "verdict-list"), "threads": ("threads", "tab-threads", "thread-grid")}
TOASTS = 2  # notices on screen at once, the newest
NOTICE_EVERY = 3.0  # seconds between two "press ctrl+e to type code" notices
MESSAGE_EVERY = 3.0  # seconds between two looks at the facilitator's message file (a served room's)
MESSAGE_SHOWN_S = 30.0  # how long the facilitator's message stays on screen
MESSAGE_AGAIN_S = 10.0  # a facilitator's message a dialog covered comes back for at least this long
FROM_FACILITATOR = "From your facilitator"  # the title of their messages' notices


APP_ACTIONS = {key.action.split("(")[0] for key in app_keys.KEYS}


class RunFinished(Message):
    """A run's verdict: provisional (`final` False: the simulator has spoken, the real compiler not
    yet) or final (the runner's one verdict)."""

    def __init__(self, generation: int, puzzle: str, result, error: str | None, seconds: float, final: bool = True):
        super().__init__()
        self.final = final
        self.generation = generation
        self.puzzle = puzzle
        self.result = result
        self.error = error
        self.seconds = seconds


class TutorApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "gpu-tutor"
    COMMANDS = App.COMMANDS | {TutorCommands}
    BINDINGS = app_keys.bindings(served=False)  # a served app binds its own set (tutor.app.keys)

    watching: reactive[bool] = reactive(False)
    backend: reactive[str] = reactive("sim")

    def __init__(self, *, catalog: Catalog | None = None, store: Store | None = None,
                 backend: str | None = None, puzzle: str | None = None, runner_timeout: float = 10.0,
                 seed: int | None = None, repeatable: bool = False, ai_settings=None, workshop=None,
                 runner: Runner | None = None, ask_name: bool = False, session: Session | None = None):
        """`ask_name`: ask the learner's name once even without a workshop (a served room's).
        `session`: what this run was set up with (tutor.session), read once by make_app.
        `runner`: the backend's Runner to borrow instead of starting its children: a warm one shared
        by many apps in one process (a test session). The app leaves it running when it closes; the
        caller owns it."""
        super().__init__()
        from tutor.ai.config import AISettings

        self.session = session or Session()
        if self.served:  # a browser keeps ctrl+w, ctrl+n and ctrl+t for itself: the keys that reach the app
            terminal = {binding.key for binding in app_keys.bindings(served=False)}
            # Textual's own (ctrl+c, and ctrl+p, which App.__init__ adds: the class's list lacks it)
            keys = {key: bound for key, bound in self._bindings.key_to_bindings.items() if key not in terminal}
            keys.update(BindingsMap(app_keys.bindings(served=True)).key_to_bindings)
            self._bindings = BindingsMap.from_keys(keys)
        self._typed_nowhere_at = 0.0  # when a letter typed where no text goes last said so
        self._in_editor: tuple[str, TextArea] | None = None  # the editor, and whose code it holds

        self.workshop = workshop  # a facilitator's file (tutor.workshop.config): its puzzles, title and policies
        self._ask_name = ask_name or (workshop is not None and workshop.ask_name)
        self._workshop_notice = None
        if workshop is not None:
            catalog = workshop.restrict(catalog or load_catalog(on_demand=True))
            ai_settings = ai_settings or workshop.ai_settings()  # no model: authored hints, no network
            if backend is None:
                backend, self._workshop_notice = workshop.backend_here(gpu_present(self.session))

        self.ai_settings = ai_settings or AISettings()  # no model: authored hints, no network
        self.seed = seed  # fixed only for repeatable screenshots and tests; learners get fresh values
        self.repeatable = repeatable  # screenshots: no timings, no blinking cursor
        self.catalog = catalog or load_catalog(on_demand=True)
        self.store = store or Store()
        self.set_reactive(TutorApp.backend, backend or default_backend(self.session))
        self._runner_timeout = runner_timeout
        self._borrowed = runner
        self.runner: Runner | None = None
        self.autosaver = Autosaver(self.store.save_code)
        self._unsaved_said: str | None = None  # why the last save failed, as told to the learner
        start = puzzle or self.store.last_puzzle
        if start not in self.catalog.puzzles:
            start = self.catalog.ids()[0]
        self.puzzle: Puzzle = self.catalog.get(start)
        self._generation = 0
        self._running_since: float | None = None
        self._watch_timer = None
        self._shown_runs = 0  # the run generation whose grid is on screen
        self._ran_source = ""
        self.last_result = None
        self._hint_cancel = None  # a threading.Event while an AI hint streams
        self._full_code_asked = False
        self._pressed_at: float | None = None  # when the learner asked for the run on show
        self._warm = False  # the backend's child has answered once: runs no longer pay its start
        self._deferred: list = []  # notices held while a dialog is open, shown once it closes
        self._code_width = CODE_MIN
        self._narrow = False
        self._marks_config = (0, 0)  # which config of the last run the editor's marks are of
        self._room_message = None  # a served room's MessageWatch (tutor.workshop.room_message)

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Tabs(Tab("Lesson", id="tab-lesson"), Tab("Code", id="tab-code"), Tab("Threads", id="tab-threads"),
                   id="switcher", active="tab-code")  # shown only in a small terminal
        with Horizontal(id="main"):
            with Vertical(id="lesson-pane", classes="pane"):
                with LessonScroll(id="lesson-scroll"):
                    yield LessonMarkdown(id="lesson")
                yield HintsPanel(id="hints")
            with Vertical(id="code-pane", classes="pane"):
                yield CodeEditor.code_editor("", language="python", id="editor", soft_wrap=False)
                yield VerdictView(id="verdict")
            yield ThreadPane(id="threads", classes="pane")
        yield FittingFooter(compact=True, show_command_palette=False)  # ctrl+p is in the help

    def on_mount(self) -> None:
        if self.repeatable:
            self._main.query_one("#editor", TextArea).cursor_blink = False
            self._main.query_one(VerdictView).show_timings = False
        # a borrowed runner of the backend, or for "gpu" one that takes the room's GPU turns on
        # Numba's simulator (the queue's path on a machine without a GPU)
        lent = self._borrowed
        if lent is not None and (lent.backend == self.backend or (
                self.backend == "gpu" and lent.backend == "numba-sim" and lent.gpu_queue is not None)):
            self.runner = lent
        else:
            self.runner = Runner(self.backend, timeout=self._runner_timeout, session=self.session)
        # Start the children (numba's import takes both cores for a second) only once the first
        # frame is on screen, so the app paints as fast as a bare one.
        self.call_after_refresh(lambda: self.set_timer(0.2, self._warm_runner))
        self.set_interval(0.25, self._autosave_tick)
        self.load_puzzle(self.puzzle.id)
        self._main.query_one("#editor", TextArea).focus()
        for notice in self.store.notices:  # they quote paths and ids from the data folder
            self.notify(terminal_safe(notice), severity="warning", timeout=10, markup=False)
        if self.workshop is not None or self._ask_name:
            self._start_workshop()
        if self.session.room_message:
            from tutor.workshop.room_message import MessageWatch

            self._room_message = MessageWatch(self.session.room_message, time.time)
            self._check_room_message()
            self.set_interval(MESSAGE_EVERY, self._check_room_message)
        self._apply_width(self.size.width)

    def _check_room_message(self) -> None:
        """The facilitator's message to the room, shown once: a stat when nothing changed, and a
        file that is missing or broken is no message (tutor.workshop.room_message)."""
        for message in self._room_message.check():  # made terminal-safe by the watch; no markup: someone's text
            self.notify(message.text, title=FROM_FACILITATOR, timeout=MESSAGE_SHOWN_S, markup=False)

    def _start_workshop(self) -> None:
        """A workshop's welcome: why the backend differs from its file, and the learner's name, asked once."""
        if self._workshop_notice:
            self.notify(self._workshop_notice, severity="warning", timeout=10)
        if self._ask_name:
            from tutor.workshop.learner import load_learner

            if load_learner(self.store.root).name is None:
                from .screens.learner_name import NameScreen

                title = self.workshop.title if self.workshop is not None else "gpu-tutor"
                self.push_screen(NameScreen(title, self.store.root))

    @property
    def served(self) -> bool:
        """In a browser (gpu-tutor serve): the keys are the ones a browser lets through."""
        return self.session.trust == Trust.SERVED

    @property
    def solutions_policy(self) -> str:
        return self.workshop.solutions if self.workshop is not None else "after-solving"

    @work(thread=True, group="warm", exit_on_error=False)
    def _warm_runner(self) -> None:
        try:
            self.runner.start()
            self.runner.wait_ready()
            self._warm = True
        except Exception as e:  # shown, never fatal: the first run will say more
            if self.runner.is_shut_down:
                return  # the app is closing
            self.call_from_thread(self.notify, terminal_safe(f"Could not start the {self.backend} backend: {e}"),
                                  severity="error", markup=False)

    def on_resize(self, event) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        narrow = width < NARROW
        self._narrow = narrow
        self._main.set_class(narrow, "-narrow")
        self._main.set_class(not narrow and width < STACKED, "-stacked")
        if narrow:
            self._unzoom()
            switcher = self._switcher()
            self._show_pane(switcher.active or "tab-code")
        self._fit_code_pane()
        self.refresh_bindings()  # the footer's keys differ between the two layouts

    @property
    def _main(self):
        """The main screen, which holds the panes (a dialog may be the screen on top)."""
        return self.screen_stack[0] if self.screen_stack else self.screen

    def _fit_code_pane(self) -> None:
        """Side by side, the code pane gets the columns its longest line needs (at least CODE_MIN,
        at most half the screen); the lesson and the threads share the rest."""
        pane = self._main.query_one("#code-pane")
        if self._narrow or pane.has_class("-zoom"):
            pane.styles.width = "1fr"
            return
        editor = self._main.query_one("#editor", TextArea)
        longest = max((len(line) for line in editor.text.splitlines()), default=0)
        self._code_width = self._code_width_for(longest)
        pane.styles.width = self._code_width
        self._main.query_one("#main").styles.grid_columns = f"1fr {self._code_width}"  # app.tcss: -stacked

    def _code_width_for(self, longest: int) -> int:
        """The code pane's columns for a longest line of `longest` characters."""
        pane = self._main.query_one("#code-pane")
        editor = self._main.query_one("#editor", TextArea)
        # Beside the code: the gutter, the pane's border, the editor's scrollbar, a cell for the cursor.
        frame = pane.size.width - editor.scrollable_content_region.width if pane.size.width else 6
        need = longest + editor.gutter_width + max(frame, 4) + 1
        return max(CODE_MIN, min(need, self.size.width // 2))

    def _switcher(self) -> Tabs:
        """The pane tabs of a small terminal."""
        return self._main.query_one("#switcher", Tabs)

    def _opening_pane(self) -> str:
        """A puzzle not yet touched opens on its lesson (a newcomer must see the task), one under way
        on the code."""
        if self.store.progress(self.puzzle.id).solved:
            return "code"
        return "lesson" if self._main.query_one("#editor", TextArea).text == self.puzzle.starter else "code"

    def _show_pane(self, tab_id: str) -> None:
        for pane, tab, _ in PANES.values():
            self._main.query_one(f"#{pane}").set_class(tab != tab_id, "-hidden")
        name = next(n for n, (_, tab, _) in PANES.items() if tab == tab_id)
        if not self._holds_focus(name):
            self._focus_pane(name)  # the pane on show has the keys: letters never fire shortcuts elsewhere

    def _focus_pane(self, name: str) -> None:
        """The focus moves now, not from the app's queue (Widget.focus defers it there): the keys
        typed right after ctrl+e, already queued, must land in the editor."""
        self._main.set_focus(self._main.query_one(f"#{PANES[name][2]}"))

    def on_descendant_focus(self, event) -> None:
        self._mark_focused_pane()

    def on_descendant_blur(self, event) -> None:
        self.call_later(self._mark_focused_pane)  # focus may have gone nowhere

    def _mark_focused_pane(self) -> None:
        """The pane with the keys gets its accent border. Only the pane itself is restyled: a
        `:focus-within` rule restyled the whole pane (every block of the lesson, its code
        re-highlighted) at every pane key."""
        focused = self._main.focused  # a dialog on top leaves the pane under it marked
        for pane_id, _, _ in PANES.values():
            pane = self._main.query_one(f"#{pane_id}")
            holds = focused is not None and (focused is pane or pane in focused.ancestors)
            if pane.has_class("-focused") != holds:
                pane.set_class(holds, "-focused", update=False)
                self.stylesheet.update_nodes([pane], animate=False)

    def _holds_focus(self, name: str) -> bool:
        focused, pane = self.focused, self._main.query_one(f"#{PANES[name][0]}")
        return focused is not None and (focused is pane or pane in focused.ancestors)

    def _pane_of_focus(self) -> str:
        focused = self.focused
        if focused is not None and focused.id == PANES["failures"][2]:
            return "failures"
        return next((name for name in PANES if name != "failures" and self._holds_focus(name)), "code")

    def _has_failures(self) -> bool:
        return self._main.query_one(VerdictView).list.option_count > 0

    @on(Tabs.TabActivated, "#switcher")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        if self._narrow:
            self._show_pane(event.tab.id)

    def action_next_pane(self) -> None:
        names = [n for n in PANES if n != "failures" or self._has_failures()]
        now = self._pane_of_focus()
        self.action_pane(names[(names.index(now) + 1) % len(names)] if now in names else "threads")

    def action_pane(self, name: str) -> None:
        """One key per pane: in a small terminal its tab, side by side its focus (and the zoom, if on).
        The code's key, pressed in the editor, goes to the failures under it, and back."""
        if name == "code" and self._pane_of_focus() == "code" and self._has_failures():
            name = "failures"
        if self._narrow:
            self._switcher().active = PANES[name][1]
            self._show_pane(PANES[name][1])
            self._focus_pane(name)
            return
        if self._main.has_class("-zoomed"):
            self._zoom(name)
        self._focus_pane(name)

    def action_zoom(self) -> None:
        if self._main.has_class("-zoomed"):
            self._unzoom()
        else:
            self._zoom(self._pane_of_focus())

    def _zoom(self, name: str) -> None:
        """The zoom is the panes' own display, set inline: a class on the screen restyled every
        widget of it (a tenth of a second, more on a busy machine); the classes stay as markers."""
        self._main.set_class(True, "-zoomed", update=False)
        zoomed = PANES[name][0]
        for pane_id in {pane_id for pane_id, _, _ in PANES.values()}:  # the failures' pane is the code's
            pane = self._main.query_one(f"#{pane_id}")
            pane.set_class(pane_id == zoomed, "-zoom", update=False)
            pane.display = pane_id == zoomed
            if pane_id == zoomed:  # the whole height too, where the stacked layout caps the threads'
                pane.styles.min_height, pane.styles.max_height = 0, "100%"
        self._main.query_one("#main").styles.layout = "horizontal"  # a stacked layout's grid is for three
        self._fit_code_pane()
        self._focus_pane(name)

    def _unzoom(self) -> None:
        if not self._main.has_class("-zoomed"):
            return
        self._main.set_class(False, "-zoomed", update=False)
        for pane_id, _, _ in PANES.values():
            pane = self._main.query_one(f"#{pane_id}")
            pane.set_class(False, "-zoom", update=False)
            pane.styles.display = None  # the stylesheet's again (a small terminal's tabs hide panes)
            pane.styles.min_height = pane.styles.max_height = None
        self._main.query_one("#main").styles.layout = None
        self._fit_code_pane()

    # -- puzzles --------------------------------------------------------------------------------
    def load_puzzle(self, puzzle_id: str) -> None:
        self._save_code()
        self.puzzle = self.catalog.get(puzzle_id)
        self.store.record_open(puzzle_id)
        editor = self._main.query_one("#editor", TextArea)
        code = self.autosaver.unsaved(puzzle_id)  # typed but never saved (a full folder): still theirs
        if code is None:
            code = self.store.load_code(puzzle_id, self.puzzle.starter)
        editor.load_text(code)
        self._in_editor = (puzzle_id, editor)  # kept: on unmount the screens are gone
        self._main.query_one("#lesson", LessonMarkdown).show_lesson(self._lesson_text())
        progress = self.store.progress(puzzle_id)
        if self._hint_cancel is not None:
            self._hint_cancel.set()  # a hint for the puzzle left behind is of no use
        self._full_code_asked = False
        self._main.query_one(HintsPanel).show_puzzle(self.puzzle, progress.hint_levels_used)
        self._clear_results()
        self._main.query_one("#lesson-scroll").scroll_home(animate=False, immediate=True)  # a new lesson opens at its title
        editor.scroll_home(animate=False, immediate=True)
        if self.is_mounted:
            self._fit_code_pane()
            if self._narrow:
                self.action_pane(self._opening_pane())
        self._update_titles()

    def _clear_results(self, text: str | None = None) -> None:
        """No verdict or grid of other code stays on screen; a run still in flight lands nowhere."""
        self._generation += 1
        self._running_since = None
        view = self._main.query_one(VerdictView)
        if text:
            view.clear(text)
        else:
            view.clear()
        self._main.query_one(ThreadPane).show_runs([])
        self.last_result = None

    def _lesson_text(self) -> str:
        text = self.puzzle.lesson
        if self.store.progress(self.puzzle.id).solved:
            text += "\n\n---\n\n## What you learned\n\n" + self.puzzle.learned
        return text

    def _update_titles(self) -> None:
        ids = self.catalog.ids()
        n = ids.index(self.puzzle.id) + 1
        solved = self.store.solved_count(ids)
        mark = " (solved)" if self.store.progress(self.puzzle.id).solved else ""
        brand = self.workshop.title if self.workshop is not None else "gpu-tutor"
        self.title = f"{brand} · {n}/{len(ids)} {self.puzzle.title}{mark}"
        watch = " · watch on" if self.watching else ""
        self.sub_title = f"backend: {self.backend}{watch} · {solved}/{len(ids)} solved"

    def _neighbour(self, step: int) -> str | None:
        ids = self.catalog.ids()
        i = ids.index(self.puzzle.id) + step
        return ids[i] if 0 <= i < len(ids) else None

    def action_next_puzzle(self) -> None:
        nxt = self._neighbour(1)
        if nxt:
            self.load_puzzle(nxt)
        else:
            self.notify("This is the last puzzle.")

    def action_previous_puzzle(self) -> None:
        prev = self._neighbour(-1)
        if prev:
            self.load_puzzle(prev)
        else:
            self.notify("This is the first puzzle.")

    def action_puzzles(self) -> None:
        from .screens.puzzles import PuzzleList

        def chosen(puzzle_id: str | None) -> None:
            if puzzle_id:
                self.load_puzzle(puzzle_id)

        self.push_screen(PuzzleList(self.catalog, self.store, self.puzzle.id), chosen)

    def action_reset(self) -> None:
        from .screens.confirm import Confirm

        def answered(yes: bool | None) -> None:
            if yes:
                self._save_code()  # what was typed is what the backup keeps
                if self.autosaver.unsaved(self.puzzle.id) is not None:
                    self.notify("Your code is not saved yet, so no backup of it could be kept: nothing was reset.",
                                severity="error", timeout=15)
                    return
                try:
                    self.store.reset_code(self.puzzle.id, self.puzzle.starter)
                except OSError as e:
                    self.notify(f"Your code was not reset, and is unchanged: {terminal_safe(e.strerror or str(e))}",
                                severity="error", timeout=15, markup=False)
                    return
                self._main.query_one("#editor", TextArea).load_text(self.puzzle.starter)
                self._clear_results("Back to the starter: press ctrl+r to run it.")
                self.notify("Back to the starter. Your previous code is kept as a backup file.")

        self.push_screen(Confirm(f"Reset {self.puzzle.title} to its starter file?",
                                 "Your current code is kept as a backup beside it, never deleted."), answered)

    def action_reference(self) -> None:
        refusal = reference_refusal(self.solutions_policy, self.store.progress(self.puzzle.id).solved)
        if refusal:
            self.notify(refusal, severity="warning")
            return
        from .screens.reference import ReferenceScreen

        self.push_screen(ReferenceScreen(self.puzzle, self._main.query_one("#editor", TextArea).text))

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen(app_keys.listed(self.served)))

    def action_hint(self) -> None:
        panel = self._main.query_one(HintsPanel)
        if panel.streaming:
            self.notify("A hint is on its way (esc cancels it).")
            return
        if self.ai_settings.unavailable() is not None:
            level = panel.reveal_next()
            if level:
                self.store.record_hint(self.puzzle.id, level)
            else:
                self.notify("No more authored hints for this puzzle.")
            return
        level = panel.shown + 1
        if level > 3:
            if not self.ai_settings.full_code_hints:
                self.notify("That was the last hint level; full solutions are off by your facilitator's policy.")
                return
            if not self._full_code_asked:
                self._full_code_asked = True
                self.notify("That was the last hint. Press F7 again to see full code.")
                return
            level = 4
        import threading

        self._hint_cancel = threading.Event()
        seen = panel.seen()  # what the learner read, AI hints included: the model goes one step further
        panel.begin_ai(level, self.ai_settings.model)
        self._ai_hint(self.puzzle, level, self._main.query_one("#editor", TextArea).text, self.last_result, seen,
                      self._hint_cancel)

    def check_action(self, action: str, parameters) -> bool | None:
        if action in APP_ACTIONS and action != "quit" and self.screen_stack and self.screen is not self._main:
            return False  # a dialog on top has the keys (its own escape, F1, F3); the app's wait for it
        if action == "cancel_hint":  # escape is the editor's and the dialogs' unless a hint streams
            return self._hint_cancel is not None
        if action == "zoom":  # a small terminal's panes are tabs, each the whole width already
            return not self._narrow
        return super().check_action(action, parameters)

    async def _check_bindings(self, key: str, priority: bool = False) -> bool:
        """Every key acts in the order it was typed, though Textual runs a priority key as soon as the
        app reads it and any other binding only once the key has gone down to the focused widget and
        back up to the app (called with `priority` as the app reads a key, without it on the way back).

        A priority key waits for the keys typed before it, which may still sit in the focused widget's
        queue: ctrl+r right after typing ran the code without its last letters (F3, ctrl+s, ctrl+n
        likewise), a dialog's Enter took the puzzle before the arrows typed ahead of it."""
        focused = self.focused
        if not priority:
            return await super()._check_bindings(key)
        if focused is not None and any(binding.priority for _, bindings in self.screen._binding_chain
                                       for binding in bindings.key_to_bindings.get(key, ())):
            await caught_up(focused)
        if await super()._check_bindings(key, priority=True):
            return True
        if not takes_text(focused):
            # A widget that takes no text (the lesson, the grid, the failures, a dialog's list or
            # buttons) has nothing to do with a key before its bindings: they run now, not after any
            # pane key or dialog's close read meanwhile (down, ctrl+e moved the editor's cursor
            # instead of the lesson; escape left help with the letters typed next still going to it).
            return await super()._check_bindings(key)
        if not isinstance(focused, (CodeEditor, InOrderInput)) and own_binding(focused, key):
            # A text box of Textual's own (the command palette's): its backspace and arrows run now,
            # once it holds the letters typed before them, not after the letters typed behind them
            # (issue 6605; ours run their bindings in their key handler, keys_in_order).
            await caught_up(focused)
            return await run_binding(focused, key)
        return False

    async def _on_key(self, event: events.Key) -> None:
        """A key no binding took reaches the app last. A character typed where no text goes (the
        lesson, the grid, the failures) does nothing but say where text goes: no letter is a shortcut,
        so a learner typing in the wrong pane never opens a hint or runs anything."""
        if (event.is_printable and self.screen_stack and self.screen is self._main
                and not isinstance(self.focused, (TextArea, Input))
                and not any(event.key in bindings.key_to_bindings for _, bindings in self.screen._modal_binding_chain)):
            event.prevent_default()
            self._say_where_text_goes("Press ctrl+e to type code: letters go only into the code editor.")

    def _say_where_text_goes(self, words: str) -> None:
        """Quietly: once in NOTICE_EVERY seconds, not once a letter."""
        if time.monotonic() - self._typed_nowhere_at > NOTICE_EVERY:
            self._typed_nowhere_at = time.monotonic()
            self.notify(words, timeout=NOTICE_EVERY)

    def action_saved(self) -> None:
        """ctrl+s, from habit: the code saves itself; say so, and save what is pending now."""
        self.autosaver.feed(self.puzzle.id, self._main.query_one("#editor", TextArea).text, time.monotonic())
        self._save_code()
        if self.autosaver.unsaved(self.puzzle.id) is None:
            self.notify("Saved. Your code saves itself as you type; nothing to press.", timeout=3)

    def action_optimise(self) -> None:
        if not self.store.progress(self.puzzle.id).solved:
            self.notify("Solve this puzzle first; then the AI coach can look for a faster kernel.", severity="warning")
            return
        from tutor.coach.optimise import PuzzleTarget

        code = self._main.query_one("#editor", TextArea).text
        self._open_optimiser(PuzzleTarget(self.puzzle, code, backend=self.backend), code)

    def action_optimise_task(self) -> None:
        from tutor.coach.tasks import coaching_tasks
        from .screens.optimise import TaskPicker

        def chosen(name: str | None) -> None:
            if not name:
                return
            from tutor.coach.optimise import TaskTarget

            target = TaskTarget(name, backend=self.backend)
            self._open_optimiser(target, target.baseline_source())

        self.push_screen(TaskPicker(coaching_tasks()), chosen)

    def _no_model(self) -> str | None:
        """Why no model may be called, in the words of this mode: a served learner cannot start
        the program with --model, so the room's facilitator is the one to ask."""
        reason = self.ai_settings.unavailable()
        if reason and self.served and not self.ai_settings.model:
            return "this room has no AI model (your facilitator chooses one)"
        return reason

    def _open_optimiser(self, target, start_code: str) -> None:
        reason = self._no_model()
        if reason:
            self._worked_answer(target, start_code, reason)
            return
        from .screens.optimise import OptimiseScreen

        root = self.store.root
        walkthrough = None
        if target.kind == "task" and reference_refusal(self.solutions_policy, True) is None:
            from tutor.coach.walkthrough import walkthrough_markdown

            walkthrough = walkthrough_markdown(target.task) or None
        self.push_screen(OptimiseScreen(target, start_code, self.ai_settings, root / "optimised", root,
                                        walkthrough=walkthrough))

    def _worked_answer(self, target, start_code: str, reason: str) -> None:
        """No model: the worked answer the optimiser's policy allows (worked_answer, as the CLI
        asks it), beside the starting code; a workshop that keeps references closed keeps a
        puzzle's closed here too."""
        from tutor.coach.optimise import worked_answer

        answer = worked_answer(target, self.ai_settings)
        refusal = reference_refusal(self.solutions_policy, True) if answer and target.kind == "puzzle" else None
        if answer is None or refusal:
            self.notify(f"The optimiser needs a model: {reason}." + (f" {refusal}" if refusal else ""),
                        severity="warning", timeout=8)
            return
        from .screens.reference import ReferenceScreen

        # In the dialog, not a toast: opening a dialog clears the toasts.
        self.push_screen(ReferenceScreen(answer, start_code, f"The optimiser needs a model ({reason}). "
                                                             f"{answer.notice()}"))

    def action_cancel_hint(self) -> None:
        if self._hint_cancel is not None:
            self._hint_cancel.set()

    @work(thread=True, group="hint", exit_on_error=False)
    def _ai_hint(self, puzzle, level, source, result, shown, cancel) -> None:
        """Off the UI thread: litellm's import and the model's stream; the guard's checks run in
        the engine's child process."""
        from tutor.ai.hints import HintLog, HintOutcome, SimChecker, ask_hint, failure_context

        panel = self._main.query_one(HintsPanel)
        last = [0.0]

        def progress(received: int) -> None:  # a count only, a few times a second
            if time.monotonic() - last[0] >= 0.2:
                last[0] = time.monotonic()
                self.call_from_thread(panel.progress, received)

        try:
            with SimChecker(puzzle.id, timeout=self._runner_timeout) as passes:
                outcome = ask_hint(puzzle, level, source, failure_context(result), shown, self.ai_settings,
                                   passes=passes, cancel=cancel, on_progress=progress,
                                   on_text=lambda t: self.call_from_thread(panel.stream, t),
                                   on_status=lambda t: self.call_from_thread(panel.status, t),
                                   log=HintLog(self.store.root / "ai-hints.jsonl", room=self.store.room_for))
        except Exception as e:  # never a traceback in the panel: one line, and the authored hint
            from tutor.ai.hints import authored_hint

            outcome = HintOutcome(level, authored_hint(puzzle, min(level, 3)) or "", "authored",
                                  note=f"The AI hint failed ({type(e).__name__}: {e}); here is the authored one.")
        self.call_from_thread(self._hint_done, puzzle.id, outcome)

    def _hint_done(self, puzzle_id: str, outcome) -> None:
        self._hint_cancel = None
        if puzzle_id != self.puzzle.id:
            return  # the learner moved on; the panel shows the new puzzle
        self._main.query_one(HintsPanel).finish_ai(outcome)
        if not outcome.cancelled:
            self.store.record_hint(puzzle_id, outcome.level)  # the ladder position, AI or authored
            if outcome.source == "ai":
                self.store.record_hint(puzzle_id, outcome.level, ai=True)

    def action_switch_backend(self) -> None:
        choices = [b for b in BACKENDS if b != "numba-sim"]
        nxt = choices[(choices.index(self.backend) + 1) % len(choices)] if self.backend in choices else "sim"
        if nxt == "gpu" and not gpu_present(self.session):
            self.notify("This machine has no CUDA GPU, so your runs stay on the simulator, which checks "
                        "everything a GPU would and more. On a machine with a GPU, F8 switches to it.",
                        timeout=8)
            return
        self.backend = nxt

    def watch_backend(self, old: str, new: str) -> None:
        if self.runner is not None and self.runner.backend != new:
            old_runner = self.runner
            self._warm = False
            self.runner = Runner(new, timeout=self._runner_timeout, session=self.session)
            self._close(old_runner)
            self._warm_runner()
            self.notify(f"Backend: {new}" + ("" if new == "sim" else " (needs a CUDA GPU)"))
        if self.is_mounted:
            self._update_titles()

    # -- editing --------------------------------------------------------------------------------
    @on(TextArea.Changed, "#editor")
    def _edited(self, event: TextArea.Changed) -> None:
        self.autosaver.feed(self.puzzle.id, event.text_area.text, time.monotonic())
        self._mark_legend()  # a mark goes with the change of its line
        line = event.text_area.document[event.text_area.cursor_location[0]]
        if not self._narrow and self._code_width_for(len(line)) > self._code_width:
            self._fit_code_pane()  # a line outgrew the pane: widen it (up to half the screen)
        if self.watching:
            if self._watch_timer is not None:
                self._watch_timer.stop()
            self._watch_timer = self.set_timer(WATCH_DELAY, self._watch_run)

    def _keep_typed(self) -> None:
        """The editor's text as it stands, to the autosaver, for the puzzle it was typed in. The
        autosaver hears of a change once the editor's Changed message has bubbled up to the app, pane
        by pane: a puzzle switch, a reset or quit read before it saved the puzzle without its last letters."""
        if self._in_editor is not None:
            puzzle_id, editor = self._in_editor
            self.autosaver.feed(puzzle_id, editor.text, time.monotonic())

    def _autosave_tick(self) -> None:
        if self.autosaver.due(time.monotonic()):
            self._save_code()
        self.store.flush_activity()  # the learner's active time, written every few seconds at most
        self._show_deferred()

    def _save_code(self) -> None:
        """Save what is pending, the editor's text as it stands included; a save that fails (a full
        folder, a full disk) is said once per cause, and the text stays in the editor and pending
        until a save works."""
        self._keep_typed()
        if self.autosaver.flush():
            self._unsaved_said = None
            return
        why = terminal_safe(getattr(self.autosaver.last_error, "strerror", None) or str(self.autosaver.last_error))
        if why != self._unsaved_said:
            self._unsaved_said = why
            self.notify(f"Your code could not be saved: {why}", severity="error", timeout=15, markup=False)

    def action_toggle_watch(self) -> None:
        self.watching = not self.watching
        self.notify("Watch mode on: runs a moment after you stop typing." if self.watching else "Watch mode off.")
        self._update_titles()

    # -- running --------------------------------------------------------------------------------
    def _watch_run(self) -> None:
        """Watch mode runs only complete Python: a line still being typed leaves the last grid and
        verdict where they are, with one quiet word under them."""
        source = self._main.query_one("#editor", TextArea).text
        problem = incomplete_python(source)
        if problem:
            self._main.query_one(VerdictView).quiet(f"watch: {problem}; the last run stays on screen until it parses.")
            return
        self.action_run()

    def action_run(self) -> None:
        self._save_code()
        self._generation += 1
        source = self._ran_source = self._main.query_one("#editor", TextArea).text
        if self._running_since is not None and time.monotonic() - self._running_since > 0.3:
            self.runner.cancel()  # a newer run replaces a slow one; a quick one just finishes unseen
        self._running_since = self._pressed_at = time.monotonic()
        self._main.query_one(VerdictView).running(self.backend, starting=not self._warm)
        self._run(self._generation, self.puzzle.id, source, self.runner)

    @work(thread=True, group="run", exit_on_error=False)
    def _run(self, generation: int, puzzle_id: str, source: str, runner: Runner) -> None:
        started = time.perf_counter()
        result, error = None, None
        provisional = lambda r: self.post_message(  # noqa: E731 (the simulator's word, while the compiler works)
            RunFinished(generation, puzzle_id, r, None, time.perf_counter() - started, final=False))
        try:
            result = runner.check(puzzle_id, source, f"{puzzle_id}.py", seed=self.seed, on_provisional=provisional,
                                  on_wait=lambda n: self.call_from_thread(self._waiting_for_gpu, generation, n))
        except RunnerError as e:
            error = str(e)
        except Exception as e:  # never a traceback in the UI
            error = f"{type(e).__name__}: {e}"
        self._warm = self._warm or result is not None
        self.post_message(RunFinished(generation, puzzle_id, result, error, time.perf_counter() - started))

    def _waited(self, seconds: float) -> float:
        """The learner's whole wait: from the key press, the process's start and the compiler included."""
        return max(seconds, time.monotonic() - self._pressed_at) if self._pressed_at is not None else seconds

    def _waiting_for_gpu(self, generation: int, ahead: int) -> None:
        """Other learners' runs hold the shared GPU (engine.gpulock): say how many are ahead."""
        if generation == self._generation:
            self._main.query_one(VerdictView).waiting(waiting_text(ahead))

    @on(RunFinished)
    def _run_finished(self, message: RunFinished) -> None:
        if message.generation != self._generation or message.puzzle != self.puzzle.id:
            return  # a newer run or another puzzle took over
        verdict_view = self._main.query_one(VerdictView)
        if message.error is not None:
            self._running_since = None
            verdict_view.error(message.error)
            return
        result = message.result
        if message.generation != self._shown_runs:  # the provisional verdict drew them already
            self._shown_runs = message.generation
            self._main.query_one(ThreadPane).show_runs(
                result.runs, [c.counters for c in result.verdict.configs], self._ran_source,
                [self._flops(run.config) for run in result.runs])
        if not message.final:  # the simulator has spoken; the compiler is still at work
            verdict_view.show(result.verdict, self._waited(message.seconds), compiling=True)
            return
        self._running_since = None
        self._finalise(result, message.seconds)

    def _finalise(self, result, seconds: float) -> None:
        """The runner's final verdict (the simulator's and the compiler's): one progress record."""
        verdict = result.verdict
        was_solved = self.store.progress(self.puzzle.id).solved
        from tutor.workshop.misconceptions import failure_summary

        self.store.record_run(self.puzzle.id, verdict.passed,
                              None if verdict.passed else failure_summary(verdict.failures, self._ran_source))
        self._main.query_one(VerdictView).show(verdict, self._waited(seconds))
        self.last_result = result
        if verdict.passed and not was_solved:
            reference = "The lesson" if self.solutions_policy == "never" else \
                "The reference is now open to you (F3), and the lesson"
            # In the verdict, not a toast: a toast outlived the puzzle and covered the next one's failures.
            solved = f"Solved {self.puzzle.title}! {reference} ends with what you learned."
            self._main.query_one(VerdictView).solved(solved)
            self._main.query_one("#lesson", Markdown).update(self._lesson_text())
        self._update_titles()

    def _flops(self, config) -> float | None:
        """The puzzle's useful FLOPs for a config (its [perf] flops), for the roofline; None where
        it declares none (or its expression does not evaluate for this config)."""
        try:
            return self.puzzle.flops_for(config)
        except Exception:
            return None

    @on(VerdictView.FailureSelected)
    def _failure_selected(self, event: VerdictView.FailureSelected) -> None:
        failure = event.failure
        if failure.line:
            self._cursor_to(failure.line - 1)
        if failure.thread is not None:
            self._main.query_one(ThreadPane).select(failure.block, failure.thread, config=failure.config)
        self.action_pane("code")

    def _cursor_to(self, row: int) -> None:
        """The cursor on a line's code, never a selection the next key would replace."""
        editor = self._main.query_one("#editor", TextArea)
        row = min(max(0, row), editor.document.line_count - 1)
        line = editor.document[row]
        editor.move_cursor((row, len(line) - len(line.lstrip())), center=True)

    @on(ThreadPane.CountsShown)
    def _counts_shown(self, event: ThreadPane.CountsShown) -> None:
        """The editor marks the costly lines of the config on show in the thread pane."""
        self._main.query_one("#editor", CodeEditor).show_marks(marks_of(event.counters), event.source)
        self._marks_config = (event.index, event.total)
        self._mark_legend()

    @on(CountersView.LineChosen)
    def _line_chosen(self, event: CountersView.LineChosen) -> None:
        """Enter on a line of the counters: the editor's cursor goes there; the keys stay in the list."""
        self._cursor_to(self._main.query_one("#editor", CodeEditor).row_now(event.line))

    def _mark_legend(self) -> None:
        """The marks' legend under the code, for the kinds on show; none without marks."""
        kinds = {kind for found in self._main.query_one("#editor", CodeEditor).marks.values() for kind, _ in found}
        pane = self._main.query_one("#code-pane")
        if not kinds:
            pane.border_subtitle = ""
            return
        index, total = self._marks_config
        legend = "  ".join(f"[${colour}]{glyph}[/] {word}"
                           for kind, (glyph, word, colour) in MARKS.items() if kind in kinds)
        pane.border_subtitle = f"{legend} · config {index + 1}/{total} (/ in the thread pane: why)"

    # -- notices and dialogs ----------------------------------------------------------------------
    def notify(self, message, *, title: str = "", severity="information", timeout=None, markup: bool = True):
        """A toast never draws over an open dialog: it waits until the dialog closes."""
        if isinstance(self.screen, ModalScreen):
            self._deferred.append((message, dict(title=title, severity=severity, timeout=timeout, markup=markup)))
            return
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _on_notify(self, event) -> None:
        """At most TOASTS notices stand at once, the newest: a stack of them grew down over the verdict.
        The app's own older notices make way, never a message from the facilitator: it stands its time
        (two "Saved" notices pushed the room's "Break until 10:30" off the screen in a second)."""
        super()._on_notify(event)
        standing = list(self._notifications)
        over = len(standing) - TOASTS
        if over <= 0:
            return
        for old in [n for n in standing[:-1] if n.title != FROM_FACILITATOR][:over]:
            self._unnotify(old, refresh=False)
        self._refresh_notifications()

    def push_screen(self, screen, *args, **kwargs):
        if isinstance(screen, ModalScreen):
            # A toast already up would draw over the dialog. The facilitator's message goes too, but
            # comes back when the dialog closes, for what was left of its time: a learner who opened
            # a dialog a second after it came had not read it.
            held = [(n.message, dict(title=n.title, severity=n.severity, markup=n.markup,
                                      timeout=max(n.time_left, MESSAGE_AGAIN_S)))
                    for n in self._notifications if n.title == FROM_FACILITATOR]
            self._deferred[:0] = held
            self.clear_notifications()
        return super().push_screen(screen, *args, **kwargs)

    def _show_deferred(self) -> None:
        """From the autosave tick: the notices held while a dialog was open, once none is."""
        if not self._deferred or isinstance(self.screen, ModalScreen):
            return
        held, self._deferred = self._deferred, []
        for message, options in held:
            self.notify(message, **options)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, LEARNER_INPUT) and not event.is_forwarded:
            self.store.record_activity(self.puzzle.id)  # time at the puzzle (tutor.activity); memory only
        if (isinstance(event, events.Paste) and not event.is_forwarded and self.screen_stack
                and self.screen is self._main and not takes_text(self.focused)):
            # A paste where no text goes would vanish without a word; the focus is read as the paste
            # arrives (a paste the editor took also bubbles up, maybe after a pane key).
            self._say_where_text_goes("Press ctrl+e, then paste: code goes only into the code editor.")
        tab = self._tab_clicked(event)
        await super().on_event(event)
        if tab is not None:
            # The tab's own switch comes from its message, after the letters typed right behind the
            # click had gone to the pane before: the pane is on show and has the keys now.
            self._switcher().active = tab
            self._show_pane(tab)

    def _tab_clicked(self, event: events.Event) -> str | None:
        """The pane tab (of a small terminal) a mouse button is let go on, as it went down on it."""
        if not (isinstance(event, events.MouseUp) and not event.is_forwarded and self._narrow
                and self.screen_stack and self.screen is self._main):
            return None
        try:
            widget, _ = self.get_widget_at(event.x, event.y)
        except Exception:  # nothing there (NoWidget)
            return None
        tabs = {tab for _, tab, _ in PANES.values()}
        return widget.id if widget.id in tabs and widget is self._mouse_down_widget else None

    # -- shutting down --------------------------------------------------------------------------
    async def action_quit(self) -> None:
        self.exit()

    def on_unmount(self) -> None:
        if self._hint_cancel is not None:
            self._hint_cancel.set()
        self._keep_typed()
        self.autosaver.flush()
        self.store.record_close()  # a closed app (a browser tab closed) is on no puzzle now
        self._close(self.runner)

    def _close(self, runner: Runner | None) -> None:
        """A child of the app's own ends with it, at once (quit waits for no child); a borrowed one
        is its owner's to close."""
        if runner is not None and runner is not self._borrowed:
            runner.shut_down()


def takes_text(widget) -> bool:
    """A widget that handles keys itself before its bindings (and runs those in order, keys_in_order)."""
    return isinstance(widget, Input) or (isinstance(widget, TextArea) and not widget.read_only)


async def caught_up(widget, limit: float = 1.0) -> None:
    """Once `widget` has handled every message queued to it before now (at most `limit` seconds:
    a widget stuck elsewhere must not stop the app's keys)."""
    import asyncio

    done = asyncio.Event()
    if not widget.call_later(done.set):
        return  # its queue is closed (the widget is gone): nothing of the learner's is in it
    try:
        await asyncio.wait_for(done.wait(), limit)
    except TimeoutError:
        pass


def incomplete_python(source: str) -> str | None:
    """What stops `source` from parsing, in a few words, or None. Parsing runs none of it."""
    import ast

    try:
        ast.parse(source)
    except SyntaxError as e:
        return f"line {e.lineno} is not complete Python yet ({e.msg})"
    except (ValueError, RecursionError, MemoryError) as e:
        return f"the file does not parse ({type(e).__name__})"
    return None


def make_app(*, data_dir: str | Path | None = None, backend: str | None = None, puzzle: str | None = None,
             catalog: Catalog | None = None, runner_timeout: float = 10.0, seed: int | None = None,
             repeatable: bool = False, ai_settings=None, workshop=None, runner: Runner | None = None,
             ask_name: bool = False, data_quota_mb: int | None = None, session: Session | None = None) -> TutorApp:
    """The app as the CLI and the tests build it: same wiring, their own data directory. A workshop
    (tutor.workshop.config) narrows the puzzles to its own and sets the title, policies and backend.
    `data_quota_mb`: what the data folder may hold (a served learner's, see Store)."""
    return TutorApp(catalog=catalog, store=Store(Path(data_dir) if data_dir else None, quota_mb=data_quota_mb),
                    backend=backend,
                    puzzle=puzzle, runner_timeout=runner_timeout, seed=seed, repeatable=repeatable,
                    ai_settings=ai_settings, workshop=workshop, runner=runner, ask_name=ask_name,
                    session=session or Session.from_environment())
