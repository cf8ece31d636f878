"""The launch as a learner pictures it: blocks of threads, each thread a cell coloured by what it did.

Seeing a race or an out-of-bounds thread *in place* — which lane of which block — is what makes the
failure messages click, so every thread gets a cell laid out by its x/y index inside a box for its
block. Launches of thousands of threads must stay readable and cheap, so past MAX_BLOCKS_SHOWN
blocks only the first few, the last few and the selected one are drawn, with a line saying how
many are hidden; arrow keys walk into hidden blocks and bring them into view.

It is a Line API widget: the layout (which cell sits where) is computed when the model, the width
or the visible blocks change, and strips are cached per line until the selection, the phase or the
theme changes, so holding an arrow key redraws only the few dozen visible lines. Everything it
knows about threads comes from the GridModel; it derives nothing from the trace itself.
"""

from __future__ import annotations

from bisect import bisect_right

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from ...engine.views.gridmodel import STATUSES, GridModel
from ...engine.trace import fmt_dim

GLYPHS = {"idle": "·", "ok": "●", "wrong": "✗", "raced": "≈", "out_of_bounds": "!", "stopped": "■"}
CELL_WIDTH = 3
MAX_BLOCKS_SHOWN = 16  # up to this many blocks, all are drawn
HEAD_BLOCKS = 8  # past it: the first HEAD_BLOCKS, the last TAIL_BLOCKS and the selected block
TAIL_BLOCKS = 4
WARP = 32  # a 1-D block wraps at a warp per row, when the width allows
PLAY_SECONDS = 0.8
PHASE_KEYS = Binding.Group("phase", compact=True)


class ThreadGrid(ScrollView, can_focus=True):
    """Every thread of one launch, grouped by block; arrows select, [ and ] step through phases."""

    BINDINGS = [
        Binding("left", "move(-1, 0)", "thread left", show=False),
        Binding("right", "move(1, 0)", "thread right", show=False),
        Binding("up", "move(0, -1)", "thread up", show=False),
        Binding("down", "move(0, 1)", "thread down", show=False),
        # One short item in the footer, "[] phase", so that the app's keys fit beside the pane's.
        Binding("left_square_bracket", "step(-1)", "phase back", group=PHASE_KEYS),
        Binding("right_square_bracket", "step(1)", "phase on", group=PHASE_KEYS),
        Binding("space", "play", "play"),
    ]

    COMPONENT_CLASSES = {
        "threadgrid--idle",
        "threadgrid--ok",
        "threadgrid--wrong",
        "threadgrid--raced",
        "threadgrid--out_of_bounds",
        "threadgrid--stopped",
        "threadgrid--selected",
        "threadgrid--quiet",
        "threadgrid--border",
        "threadgrid--border-selected",
        "threadgrid--summary",
        "threadgrid--legend",
    }

    DEFAULT_CSS = """
    ThreadGrid {
        background: $surface;
        height: 1fr;
    }
    ThreadGrid:focus {
        background-tint: $foreground 3%;
    }
    ThreadGrid > .threadgrid--idle { color: $text-disabled; }
    ThreadGrid > .threadgrid--ok { color: $success; }
    ThreadGrid > .threadgrid--wrong { color: $error; text-style: bold; }
    ThreadGrid > .threadgrid--raced { color: $warning; text-style: bold; }
    ThreadGrid > .threadgrid--out_of_bounds { color: $error; text-style: bold; }
    ThreadGrid > .threadgrid--stopped { color: $accent; text-style: bold; }
    ThreadGrid > .threadgrid--selected { text-style: bold reverse; }
    ThreadGrid > .threadgrid--quiet { text-style: dim; }
    ThreadGrid > .threadgrid--border { color: $foreground-muted; }
    ThreadGrid > .threadgrid--border-selected { color: $primary; text-style: bold; }
    ThreadGrid > .threadgrid--summary { color: $text-muted; text-style: italic; }
    ThreadGrid > .threadgrid--legend { color: $text-muted; }
    """

    class ThreadSelected(Message):
        """The selected thread changed (by key, click, or select())."""

        def __init__(self, grid: "ThreadGrid", tid: int, block: tuple, thread: tuple) -> None:
            super().__init__()
            self.grid = grid
            self.tid = tid
            self.block = block
            self.thread = thread

        @property
        def control(self) -> "ThreadGrid":
            return self.grid

    class PhaseChanged(Message):
        """The phase shown changed (by key, the animation, or show())."""

        def __init__(self, grid: "ThreadGrid", phase: int) -> None:
            super().__init__()
            self.grid = grid
            self.phase = phase

        @property
        def control(self) -> "ThreadGrid":
            return self.grid

    phase: reactive[int] = reactive(0, init=False)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.model: GridModel | None = None
        self._selected: int | None = None
        self._lines: list[list] = []  # per virtual line: pieces ("text", str, component) / ("cell", tid)
        self._cells: dict[int, tuple[int, int]] = {}  # drawn tid -> (y, x)
        self._hits: dict[int, tuple[list[int], list[int]]] = {}  # y -> (xs, tids), for clicks
        self._shown_blocks: list[int] = []
        self._layout_width = -1
        self._layout_cols = 1  # cells per row inside a block, as last laid out
        self._strips: dict[int, Strip] = {}
        self._timer: Timer | None = None
        self.play_interval = PLAY_SECONDS  # seconds per phase when playing

    # -- public API -------------------------------------------------------------------------------
    @property
    def selected(self) -> int | None:
        """The selected thread's linear id, or None when nothing is shown."""
        return self._selected

    @property
    def playing(self) -> bool:
        return self._timer is not None

    @property
    def drawn_threads(self) -> list[int]:
        """The threads that have a cell in the current layout (hidden blocks have none)."""
        return list(self._cells)

    @property
    def hidden_blocks(self) -> int:
        return (self.model.n_blocks - len(self._shown_blocks)) if self.model is not None else 0

    def show(self, model: GridModel | None) -> None:
        """Draw a launch (or nothing, for None); selects its most telling thread, phase 0."""
        self._stop_play()
        self.model = model
        self.set_reactive(ThreadGrid.phase, 0)
        if model is None or model.n_threads == 0:
            self._selected = None
        else:
            self._selected = model.default_thread()
        self._relayout()
        self._scroll_to_selected()
        if self._selected is not None:
            self._post_selected()
        self.post_message(self.PhaseChanged(self, 0))

    def select(self, block: tuple, thread: tuple) -> None:
        """Select a thread by position, e.g. the one a failure names."""
        if self.model is None:
            return
        tid = self.model.tid_of(block, thread)
        if 0 <= tid < self.model.n_threads:
            self._set_selected(tid)

    def select_tid(self, tid: int) -> None:
        if self.model is not None and 0 <= tid < self.model.n_threads:
            self._set_selected(tid)

    def lines_text(self) -> list[str]:
        """The plain text of every line of the layout (for tests and copying)."""
        return [self._plain(pieces) for pieces in self._lines]

    # -- phases -----------------------------------------------------------------------------------
    @property
    def last_phase(self) -> int:
        return max(0, self.model.n_phases - 1) if self.model is not None else 0

    def validate_phase(self, phase: int) -> int:
        return max(0, min(int(phase), self.last_phase))

    def watch_phase(self, phase: int) -> None:
        self._invalidate()
        self.post_message(self.PhaseChanged(self, phase))

    def action_step(self, delta: int) -> None:
        self._stop_play()
        self.phase = self.phase + delta

    def action_play(self) -> None:
        """Play the phases from here (from the start when at the end); again to stop."""
        if self._timer is not None:
            self._stop_play()
            return
        if self.model is None or self.last_phase == 0:
            return
        if self.phase >= self.last_phase:
            self.phase = 0
        self._timer = self.set_interval(self.play_interval, self._tick)

    def _tick(self) -> None:
        if self.phase >= self.last_phase:
            self._stop_play()
            return
        self.phase = self.phase + 1
        if self.phase >= self.last_phase:
            self._stop_play()

    def _stop_play(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    # -- selection --------------------------------------------------------------------------------
    def _set_selected(self, tid: int) -> None:
        if tid == self._selected:
            return
        old_block = None if self._selected is None else self._selected // self.model.threads_per_block
        self._selected = tid
        if old_block != tid // self.model.threads_per_block and self.model.n_blocks > MAX_BLOCKS_SHOWN:
            self._relayout()  # the selected block is always drawn, hidden or not
        else:
            self._invalidate()
        self._scroll_to_selected()
        self._post_selected()

    def _post_selected(self) -> None:
        block, thread = self.model.where(self._selected)
        self.post_message(self.ThreadSelected(self, self._selected, block, thread))

    def action_move(self, dx: int, dy: int) -> None:
        if self.model is None or self._selected is None:
            return
        m = self.model
        tpb = m.threads_per_block
        cols = self._layout_cols
        rows = -(-tpb // cols)
        b, t = divmod(self._selected, tpb)
        c, r = t % cols + dx, t // cols + dy
        if 0 <= c < cols and 0 <= r < rows and r * cols + c < tpb:
            self._set_selected(b * tpb + r * cols + c)
            return
        nb = self._neighbour_block(b, dx, dy)
        if nb is None:
            return
        if dx > 0:
            c = 0
        elif dx < 0:
            c = cols - 1
        if dy > 0:
            r = 0
        elif dy < 0:
            r = rows - 1
        r = max(0, min(r, rows - 1))
        t = min(r * cols + max(0, min(c, cols - 1)), tpb - 1)
        self._set_selected(nb * tpb + t)

    def _neighbour_block(self, b: int, dx: int, dy: int) -> int | None:
        m = self.model
        gx, gy, _ = m.grid3
        if dy and gy > 1:
            x, y, z = b % gx, (b // gx) % gy, b // (gx * gy)
            y += dy
            if not 0 <= y < gy:
                return None
            return x + y * gx + z * gx * gy
        nb = b + (dx or dy)
        return nb if 0 <= nb < m.n_blocks else None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.model is None:
            return
        x = offset.x + int(self.scroll_x)
        y = offset.y + int(self.scroll_y)
        hit = self._hits.get(y)
        if not hit:
            return
        xs, tids = hit
        i = bisect_right(xs, x) - 1
        if i >= 0 and x < xs[i] + CELL_WIDTH:
            self.focus()
            self._set_selected(tids[i])

    # -- layout -----------------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        if self._available_width() != self._layout_width:
            self._relayout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def _available_width(self) -> int:
        width = self.scrollable_content_region.width or self.size.width
        return max(width, 12)

    def _cols(self) -> int:
        """Cells per row inside a block: x across for 2-D/3-D blocks; a 1-D block wraps (at a
        warp, or narrower when the pane is narrow)."""
        m = self.model
        bx = m.block3[0]
        if m.block3[1] > 1 or m.block3[2] > 1:
            return bx
        fit = max(1, (self._available_width() - 2) // CELL_WIDTH)
        if bx <= min(fit, WARP):
            return bx
        for cols in (WARP, 16, 8, 4, 2, 1):
            if cols <= fit:
                return min(cols, bx)
        return 1

    def _visible_blocks(self) -> list[int]:
        n = self.model.n_blocks
        if n <= MAX_BLOCKS_SHOWN:
            return list(range(n))
        shown = set(range(HEAD_BLOCKS)) | set(range(n - TAIL_BLOCKS, n))
        if self._selected is not None:
            shown.add(self._selected // self.model.threads_per_block)
        return sorted(shown)

    def _relayout(self) -> None:
        self._lines = []
        self._cells = {}
        self._hits = {}
        self._strips.clear()
        self._layout_width = self._available_width()
        m = self.model
        if m is None or m.n_threads == 0:
            self._shown_blocks = []
            self._lines = [[("text", "no launch to show", "threadgrid--summary")]]
            self._finish_layout()
            return
        self._lines.append(self._legend())
        self._lines.append([])
        self._shown_blocks = self._visible_blocks()
        width = self._layout_width
        tpb = m.threads_per_block
        cols = self._layout_cols = self._cols()
        rows = -(-tpb // cols)
        titles = {b: f" block {fmt_dim(m.where(b * tpb)[0])} " for b in self._shown_blocks}
        inner = max(cols * CELL_WIDTH, max(len(t) for t in titles.values()) + 1)
        box_w = inner + 2

        # rows of boxes: by block y for a small 2-D grid that fits, else packed to the width
        groups: list[list[int] | int] = []  # a list of blocks on one row, or a count of hidden blocks
        gx = m.grid3[0]
        if m.n_blocks <= MAX_BLOCKS_SHOWN and (m.grid3[1] > 1 or m.grid3[2] > 1) and \
                gx * (box_w + 1) - 1 <= width:
            for start in range(0, m.n_blocks, gx):
                groups.append(list(range(start, start + gx)))
        else:
            per_row = max(1, (width + 1) // (box_w + 1))
            row: list[int] = []
            prev = None
            for b in self._shown_blocks:
                if prev is not None and b != prev + 1:
                    if row:
                        groups.append(row)
                        row = []
                    groups.append(b - prev - 1)
                if len(row) == per_row:
                    groups.append(row)
                    row = []
                row.append(b)
                prev = b
            if row:
                groups.append(row)

        for group in groups:
            if isinstance(group, int):
                text = f"  ··· {group} block{'s' if group != 1 else ''} hidden ···"
                self._lines.append([("text", text, "threadgrid--summary")])
                continue
            self._layout_row(group, titles, cols, rows, inner)
        self._finish_layout()

    def _layout_row(self, blocks: list[int], titles: dict, cols: int, rows: int, inner: int) -> None:
        m = self.model
        tpb = m.threads_per_block
        top: list = []
        bottom: list = []
        body: list[list] = [[] for _ in range(rows)]
        y0 = len(self._lines)
        x = 0
        for n, b in enumerate(blocks):
            if n:
                top.append(("text", " ", None))
                bottom.append(("text", " ", None))
                for line in body:
                    line.append(("text", " ", None))
                x += 1
            title = titles[b]
            border = ("border", b)
            top.append(("text", "┌─" + title + "─" * (inner - 1 - len(title)) + "┐", border))
            bottom.append(("text", "└" + "─" * inner + "┘", border))
            for r in range(rows):
                line = body[r]
                line.append(("text", "│", border))
                drawn = 0
                for c in range(cols):
                    t = r * cols + c
                    if t >= tpb:
                        break
                    tid = b * tpb + t
                    line.append(("cell", tid))
                    self._cells[tid] = (y0 + 1 + r, x + 1 + c * CELL_WIDTH)
                    drawn += 1
                pad = inner - drawn * CELL_WIDTH
                if pad:
                    line.append(("text", " " * pad, None))
                line.append(("text", "│", border))
            x += inner + 2
        self._lines.append(top)
        self._lines.extend(body)
        self._lines.append(bottom)

    def _finish_layout(self) -> None:
        hits: dict = {}
        for tid, (y, x) in self._cells.items():
            hits.setdefault(y, []).append((x, tid))
        self._hits = {y: ([x for x, _ in sorted(v)], [t for _, t in sorted(v)]) for y, v in hits.items()}
        width = max((self._width(p) for p in self._lines), default=0)
        resized = self.virtual_size.height != len(self._lines)
        self.virtual_size = Size(width, len(self._lines))
        if resized:
            self._relayout_height()
        else:
            self.refresh()

    def _relayout_height(self) -> None:
        """An auto-height grid (a narrow pane's) grows or shrinks with its layout. Textual caches a
        widget's box under a count that refresh(layout=True) raises only when no layout is already
        pending; a box worked out between a pending request and this one keeps the old height. So
        the grid laid out at width 0 (its pane empty), resized to 65 columns and laid out again
        before the first request ran, stayed 8 rows high for its 5 lines, one run in a few on a
        busy machine. Raising the count here makes every change of height a new box."""
        self._layout_updates += 1
        self.refresh(layout=True)

    def _legend(self) -> list:
        counts = self.model.status_counts()
        pieces: list = []
        for status in reversed(STATUSES):
            if status in counts:
                if pieces:
                    pieces.append(("text", "  ", None))
                pieces.append(("text", GLYPHS[status], f"threadgrid--{status}"))
                pieces.append(("text", f" {status.replace('_', ' ')} {counts[status]}", "threadgrid--legend"))
        return pieces

    @staticmethod
    def _width(pieces: list) -> int:
        return sum(CELL_WIDTH if p[0] == "cell" else len(p[1]) for p in pieces)

    def _plain(self, pieces: list) -> str:
        out = []
        for p in pieces:
            if p[0] == "cell":
                glyph = GLYPHS[self.model.status(p[1])]
                out.append(f"[{glyph}]" if p[1] == self._selected else f" {glyph} ")
            else:
                out.append(p[1])
        return "".join(out)

    def _scroll_to_selected(self) -> None:
        if self._selected is None or self._selected not in self._cells:
            return
        y, x = self._cells[self._selected]
        height = self.scrollable_content_region.height or self.size.height
        width = self.scrollable_content_region.width or self.size.width
        if not height or not width:
            return
        sy, sx = int(self.scroll_y), int(self.scroll_x)
        top = y - 1 if y - 1 >= 0 else y  # keep the block's title in view
        if top < sy:
            sy = top
        elif y >= sy + height:
            sy = y - height + 1
        if x < sx:
            sx = max(0, x - 1)
        elif x + CELL_WIDTH > sx + width:
            sx = x + CELL_WIDTH - width + 1
        self.scroll_to(x=sx, y=sy, animate=False, immediate=True)

    # -- drawing ----------------------------------------------------------------------------------
    def _invalidate(self) -> None:
        self._strips.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        width = self.size.width
        base = self.rich_style
        strip = self._strips.get(line)
        if strip is None:
            strip = self._render_full_line(line, base)
            self._strips[line] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _render_full_line(self, line: int, base: Style) -> Strip:
        if line >= len(self._lines):
            return Strip.blank(0, base)
        style = self.get_component_rich_style
        selected = self._selected
        tpb = self.model.threads_per_block if self.model is not None else 1
        sel_block = selected // tpb if selected is not None else None
        active = self.model.active(self.phase) if self.model is not None else None
        quiet = style("threadgrid--quiet", partial=True)
        sel_style = style("threadgrid--selected", partial=True)
        segments = []
        for piece in self._lines[line]:
            if piece[0] == "cell":
                tid = piece[1]
                status = self.model.status(tid)
                s = style(f"threadgrid--{status}")
                glyph = GLYPHS[status]
                if not active[tid]:
                    s += quiet
                if tid == selected:
                    segments.append(Segment(f"[{glyph}]", s + sel_style))
                else:
                    segments.append(Segment(f" {glyph} ", s))
            else:
                comp = piece[2]
                if isinstance(comp, tuple):  # a block's border
                    comp = "threadgrid--border-selected" if comp[1] == sel_block else "threadgrid--border"
                s = style(comp) if comp else base
                segments.append(Segment(piece[1], s))
        return Strip(segments)


__all__ = ["ThreadGrid", "GLYPHS"]
