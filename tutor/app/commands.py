"""Every action of the app in the command palette, with the keys that also do it in this mode."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .keys import PALETTE_ONLY, listed


def actions(served: bool) -> list[tuple[str, str, str]]:
    """(title, action, keys) for the palette: each key's sentence, then the actions with no key."""
    return [(what, action, keys) for keys, what, action in listed(served)] + \
        [(title, action, "") for title, action in PALETTE_ONLY]


class TutorCommands(Provider):
    def _actions(self):
        return actions(getattr(self.app, "served", False))

    async def discover(self) -> Hits:
        for title, action, key in self._actions():
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=key)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, key in self._actions():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.run_action, action), help=key)
