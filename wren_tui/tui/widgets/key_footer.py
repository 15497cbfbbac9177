"""The footer: the screen's keys, and when the terminal is too narrow for all, the lesser ones give way."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer

# Private (textual.widgets._footer): Textual exports no FooterKey; pyproject caps Textual below 9 and
# tests/test_private_api_fences.py fails when the name or what _width reads of it moves.
from textual.widgets._footer import FooterKey

from ..text import width_of


class KeyFooter(Footer):
    """A Footer that drops its least important keys to fit, never the last ones it lists (Quit, Help).

    `keep` names actions, most important first; a key whose action is not named gives way before them.
    """

    def __init__(self, keep: tuple[str, ...]) -> None:
        super().__init__()
        self.keep = keep
        self._composed_width = 0

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        self._composed_width = room = self.size.width
        if not room:
            yield from widgets
            return
        every = [w for w in widgets if isinstance(w, FooterKey)]
        keys = [k for k in every if not k.has_class("-command-palette")]
        room -= sum(_width(k) + 1 for k in every if k.has_class("-command-palette"))  # and its border
        rank = {action: place for place, action in enumerate(self.keep)}
        # Least important first: actions not named (the later the lesser), then the named ones from the end.
        order = sorted(keys, key=lambda k: -rank.get(k.action, len(rank) + keys.index(k)))
        dropped: set[int] = set()
        used = sum(map(_width, keys))
        for key in order:
            if used <= room:
                break
            dropped.add(id(key))
            used -= _width(key)
        yield from (w for w in widgets if id(w) not in dropped)

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._composed_width:
            self.call_after_refresh(self.recompose)


def _width(key: FooterKey) -> int:
    """Cells a key takes, as FooterKey draws it (not compact): " k " then "description "."""
    if not key.description:
        return width_of(key.key_display)
    return width_of(key.key_display) + 2 + width_of(key.description) + 1
