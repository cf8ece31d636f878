"""The lesson's scroll: Markdown whose diagrams scroll sideways inside their own boxes.

A diagram drawn wider than the lesson pane would otherwise be cut at its edge (map's `t0 t1`
and nothing after). Each code fence keeps its own sideways scroll, with a visible bar, and the
left and right arrows move every fence of the lesson together while the lesson has focus.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets.markdown import MarkdownFence

STEP = 4


class LessonScroll(VerticalScroll):
    DEFAULT_CSS = """
    LessonScroll MarkdownFence {
        scrollbar-size-horizontal: 1;
    }
    LessonScroll MarkdownFence > Label {
        padding: 0 1;
    }
    """
    BINDINGS = [
        Binding("left", "sideways(-1)", "diagrams left", show=False),
        Binding("right", "sideways(1)", "diagrams right", show=False),
    ]

    def fences(self) -> list[MarkdownFence]:
        return list(self.query(MarkdownFence))

    def action_sideways(self, direction: int) -> None:
        for fence in self.fences():
            fence.scroll_to(x=max(0, fence.scroll_x + direction * STEP), animate=False)
