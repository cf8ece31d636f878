"""Every action of the app in the command palette, with the key that also does it."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

ACTIONS = [
    ("Run the kernel", "run", "ctrl+r / f5"),
    ("Toggle watch mode", "toggle_watch", "ctrl+w"),
    ("Reveal the next hint", "hint", "f7 / ctrl+t"),
    ("Reveal the next hint (the h key, from the lesson or the thread pane)", "hint_key", "h"),
    ("Cancel the AI hint on its way", "cancel_hint", "escape"),
    ("Optimise this solved puzzle with the AI coach", "optimise", "f6"),
    ("Optimise a coaching task (softmax, matmul, attention ...) with the AI coach", "optimise_task", ""),
    ("Puzzle list", "puzzles", "f2"),
    ("Next puzzle", "next_puzzle", "ctrl+n"),
    ("Previous puzzle", "previous_puzzle", "ctrl+b"),
    ("Show the reference solution (once solved)", "reference", "f3"),
    ("Switch backend (simulator / GPU)", "switch_backend", "f8"),
    ("Reset to the starter file", "reset", "f9"),
    ("Keys and help", "help", "f1"),
    ("Next pane", "next_pane", "f4"),
    ("Go to the lesson", "pane('lesson')", "ctrl+l"),
    ("Go to the code editor", "pane('code')", "ctrl+e"),
    ("Go to the thread grid", "pane('threads')", "ctrl+g"),
    ("Zoom the pane you are in (again to bring the others back)", "zoom", "ctrl+f"),
    ("Quit", "quit", "ctrl+q"),
]


class TutorCommands(Provider):
    async def discover(self) -> Hits:
        for title, action, key in ACTIONS:
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=key)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, key in ACTIONS:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.run_action, action), help=key)
