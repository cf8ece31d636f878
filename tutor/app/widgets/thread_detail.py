"""One thread's story: every read and write it made, in order, with values and source lines.

The grid says *that* a thread went wrong; this says *how*: the learner reads down the accesses,
sees the phase boundaries (the barriers between them), and finds the line where the value or the
index stopped being what they meant. The phase on show is emphasised and scrolled into view, so
stepping through phases in the grid walks through the thread's accesses too. Out-of-bounds
accesses and the write that left a wrong output cell are marked, since those are the rows a
learner is looking for.

Lines are built once per show() and cropped per frame (Line API): a thread in a long loop can make
thousands of accesses.
"""

from __future__ import annotations


from ...engine.views.gridmodel import STATUS_TITLES, GridModel, fmt_value
from ...engine.trace import fmt_dim
from .styled_lines import StyledLines

MAX_ROWS = 5000


class ThreadDetail(StyledLines, can_focus=True):
    """The selected thread's accesses, the current phase's rows emphasised. Rows fold to the pane's
    width and open with their source line, so a narrow pane never cuts the line number off."""

    wrap = True

    COMPONENT_CLASSES = {
        "threaddetail--title",
        "threaddetail--note",
        "threaddetail--barrier",
        "threaddetail--current",
        "threaddetail--other",
        "threaddetail--bad",
        "threaddetail--stopped",
    }

    DEFAULT_CSS = """
    ThreadDetail {
        background: $surface;
        height: 1fr;
    }
    ThreadDetail > .threaddetail--title { color: $text; text-style: bold; }
    ThreadDetail > .threaddetail--note { color: $text-muted; text-style: italic; }
    ThreadDetail > .threaddetail--barrier { color: $text-muted; }
    ThreadDetail > .threaddetail--current { color: $text; background: $boost; text-style: bold; }
    ThreadDetail > .threaddetail--other { color: $text-muted; }
    ThreadDetail > .threaddetail--bad { color: $error; text-style: bold; }
    ThreadDetail > .threaddetail--stopped { color: $accent; text-style: bold; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.model: GridModel | None = None
        self.selected: int | None = None
        self.phase = 0
        self._first_current: int | None = None

    def show(self, model: GridModel | None, selected_tid: int | None, phase: int = 0) -> None:
        """List `selected_tid`'s accesses in `model`, emphasising those of `phase`."""
        moved = (model is not self.model or selected_tid != self.selected or phase != self.phase)
        self.model = model
        self.selected = selected_tid
        self.phase = phase
        self._rebuild()
        if moved:
            self._scroll_to_current()

    def current_rows(self) -> list[str]:
        """The plain text of the emphasised rows: the accesses of the phase on show."""
        return ["".join(t for t, _ in line) for line in self._lines
                if any(c == "threaddetail--current" for _, c in line)]

    # -- building ---------------------------------------------------------------------------------
    def _rebuild(self) -> None:
        self._lines = []
        self._strips.clear()
        self._first_current = None
        m, tid = self.model, self.selected
        if m is None or tid is None:
            self._lines.append([("no thread selected", "threaddetail--note")])
        else:
            self._build(m, tid)
        self.set_lines(self._lines)

    def _build(self, m: GridModel, tid: int) -> None:
        block, thread = m.where(tid)
        status = m.status(tid)
        events = m.events_of(tid)
        about = STATUS_TITLES[status]
        if events:
            about += f" · {len(events)} access{'es' if len(events) != 1 else ''}"
        self._lines.append([(f"thread {fmt_dim(thread)} of block {fmt_dim(block)}", "threaddetail--title"),
                            (f" · {about}",
                             "threaddetail--bad" if status not in ("ok", "idle") else "threaddetail--note")])
        reason = m.stop_reason(tid)
        if reason:
            self._lines.append([(reason, "threaddetail--stopped")])
        if not events:
            return
        wrong_writes = self._wrong_writes(m, tid, events)
        prev_phase = None
        for n, ev in enumerate(events[:MAX_ROWS]):
            if prev_phase is not None and ev.phase != prev_phase:
                line = m.phase_end_line(prev_phase)
                at = f" (line {line})" if line is not None else ""
                self._lines.append([(f"  ── barrier{at}: phase {ev.phase} ──",
                                     "threaddetail--barrier")])
            prev_phase = ev.phase
            current = ev.phase == self.phase
            if current and self._first_current is None:
                self._first_current = len(self._lines)
            comp = "threaddetail--current" if current else "threaddetail--other"
            row = [("▸ " if current else "  ", comp),
                   (_row_text(ev), "threaddetail--bad" if ev.out_of_bounds else comp)]
            if n in wrong_writes:
                row.append((f"  ✗ should be {fmt_value(wrong_writes[n])}", "threaddetail--bad"))
            self._lines.append(row)
        if len(events) > MAX_ROWS:
            self._lines.append([(f"… {len(events) - MAX_ROWS} more accesses", "threaddetail--note")])

    @staticmethod
    def _wrong_writes(m: GridModel, tid: int, events) -> dict[int, object]:
        """Row number -> expected value, for this thread's last write to each wrong output cell
        that it was the last to write."""
        out = m.output
        if out is None or not m.wrong_cells:
            return {}
        mine = {cell.index: cell.expected for cell in m.wrong_cells.values() if cell.tid == tid}
        found: dict = {}
        for n in range(len(events) - 1, -1, -1):
            ev = events[n]
            if ev.aid == out.aid and ev.is_write and ev.index in mine:
                found[n] = mine.pop(ev.index)
        return found

    def _scroll_to_current(self) -> None:
        if self._first_current is None:
            self.scroll_to(y=0, animate=False, immediate=True)
            return
        height = self.scrollable_content_region.height or self.size.height
        y = self.row_of(self._first_current)
        if height and not (self.scroll_y <= y < self.scroll_y + height - 1):
            self.scroll_to(y=max(0, y - 1), animate=False, immediate=True)


def _row_text(ev) -> str:
    """One access as the detail lists it: the line first; the phase is the barrier rows' to say."""
    text = ev.text()
    head = f"phase {ev.phase}  "
    tail = f"  line {ev.line}"
    body = text[len(head):] if text.startswith(head) else text
    if tail in body:
        body = body.replace(tail, "", 1)
    return f"line {ev.line:<3} {body}"


__all__ = ["ThreadDetail"]
