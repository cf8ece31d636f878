"""Every key of the app in one table: the bindings, the footer, F1 and the command palette read it.

A served learner's keys pass through a browser first, and a browser keeps some for itself: ctrl+w
closes the tab, ctrl+n and ctrl+t open a window and a tab, and the page never hears them. So each
entry has its terminal keys and, where they differ, its served ones; the app binds the set of its
mode, and F1 and the palette name only keys that reach it.

Every app key is a priority binding, run by the app the moment it reads the key from its queue:
a non-priority one would run only once the key had gone down to the focused widget and back up,
after the keys typed behind it. No letter is an app key: a letter typed where no text goes only
says where text goes (TutorApp._on_key).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class AppKey:
    id: str
    action: str
    label: str                  # the footer's word
    what: str                   # F1's and the palette's sentence
    terminal: str               # keys, comma-separated, in a terminal
    served: str | None = None   # keys in a browser, where they differ ("" for none)
    show: bool = True           # in the footer
    palette: bool = True        # in the command palette (an alias stays out)

    def keys(self, served: bool) -> str:
        return self.terminal if not served or self.served is None else self.served


KEYS = [
    AppKey("run", "run", "Run", "Run the kernel on every config", "ctrl+r,f5"),
    AppKey("watch", "toggle_watch", "Watch", "Watch mode: re-run a moment after you stop typing",
           "ctrl+w", served="ctrl+o"),
    # A terminal sends ctrl+h as the backspace byte, so the hint key is F7 (and ctrl+t); ctrl+h still
    # works where the terminal reports it as itself (the kitty keyboard protocol), and is not advised.
    AppKey("hint", "hint", "Hint", "Reveal the next hint", "f7,ctrl+t", served="f7"),
    AppKey("hint_ctrl_h", "hint", "Hint", "Reveal the next hint", "ctrl+h", served="", show=False, palette=False),
    AppKey("cancel_hint", "cancel_hint", "Cancel hint", "Cancel the AI hint on its way", "escape", show=False),
    AppKey("pane_lesson", "pane('lesson')", "Lesson", "The lesson (its diagrams scroll sideways with the arrows)",
           "ctrl+l"),
    AppKey("pane_code", "pane('code')", "Code",
           "The code editor; pressed in the editor, the failures under it (Enter on one: its line and thread)",
           "ctrl+e"),
    AppKey("pane_threads", "pane('threads')", "Grid", "The thread grid (arrows pick a thread)", "ctrl+g"),
    AppKey("zoom", "zoom", "Zoom", "The pane you are in fills the screen; again to bring the others back", "ctrl+f"),
    AppKey("pane", "next_pane", "Pane", "The next pane: lesson, code, its failures, threads", "f4"),
    AppKey("puzzles", "puzzles", "Puzzles", "All puzzles and your progress", "f2"),
    AppKey("next", "next_puzzle", "Next", "The next puzzle", "ctrl+n", served="f10", show=False),
    AppKey("previous", "previous_puzzle", "Prev", "The previous puzzle", "ctrl+b", show=False),
    AppKey("reference", "reference", "Reference", "The reference solution beside yours (once solved)", "f3",
           show=False),
    AppKey("optimise", "optimise", "Optimise", "The AI coach proposes faster kernels; the verifier judges each",
           "f6", show=False),
    AppKey("backend", "switch_backend", "Backend", "Switch backend: simulator or GPU", "f8", show=False),
    AppKey("reset", "reset", "Reset", "Back to the starter file (asks first; your code is kept as a backup)", "f9",
           show=False),
    AppKey("saved", "saved", "Save", "Your code saves itself as you type: this says when it last did", "ctrl+s",
           show=False),
    AppKey("help", "help", "Help", "Keys and help", "f1"),
    AppKey("quit", "quit", "Quit", "Quit (your code is saved)", "ctrl+q", show=False),
]

# Actions with no key of their own, offered in the palette only.
PALETTE_ONLY = [("Optimise a coaching task (softmax, matmul, attention ...) with the AI coach", "optimise_task")]


def bindings(served: bool) -> list[Binding]:
    """The app's bindings in a terminal or a browser, all priority (see the module's docstring)."""
    out = []
    for key in KEYS:
        for n, one in enumerate(k for k in key.keys(served).split(",") if k):
            # the first key in the footer; its aliases (f5 for ctrl+r) only in F1 and the palette
            out.append(Binding(one, key.action, key.label, show=key.show and n == 0,
                               id=key.id if n == 0 else f"{key.id}_{n}", priority=True, tooltip=key.what))
    return out


def shown(keys: str) -> str:
    """Keys as F1 and the palette write them: `ctrl+r / f5`."""
    return " / ".join(keys.split(","))


def listed(served: bool) -> list[tuple[str, str, str]]:
    """(keys, what, action) for F1 and the palette: one row per action, the aliases not advised left out."""
    rows: dict[str, tuple[str, str, str]] = {}
    for key in KEYS:
        keys = key.keys(served)
        if not keys or not key.palette:
            continue
        if key.action in rows:
            had = rows[key.action]
            rows[key.action] = (f"{had[0]} / {shown(keys)}", had[1], had[2])
        else:
            rows[key.action] = (shown(keys), key.what, key.action)
    return list(rows.values())
