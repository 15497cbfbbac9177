"""The command palette's commands (Ctrl+P): every key of the screen shown and of the app, by its footer description.

Textual's own system commands come first; `WrenApp.get_system_commands` adds these after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen


def key_commands(app: App[Any], screen: Screen[object], taken: Iterable[str] = ()) -> Iterator[SystemCommand]:
    """One command per described key of `screen`, then of `app`, skipping titles already in the palette.

    Args:
        app: The running app (it runs the key's action later, after the palette closes).
        screen: The screen the palette was opened over: its keys act on it.
        taken: Titles the palette already has (Textual's own "Quit", "Keys"...).
    """
    seen = set(taken)
    for owner, bindings in ((screen, screen.BINDINGS), (app, app.BINDINGS)):
        for binding in bindings:
            if not isinstance(binding, Binding) or not binding.description or binding.description in seen:
                continue
            seen.add(binding.description)
            yield SystemCommand(
                binding.description,
                f"key: {binding.key.split(',')[0]}",
                partial(app.call_later, owner.run_action, binding.action),
            )
