"""The searchable texts of a Wren event (`items_of`): what the readers of sessions give search as `Item`s.

Apart from `sources` (the shape every source has) so that a search the index answers loads no event type and no
msgspec: only the readers (`wren.py`, `skim.py`) turn events into items.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..journal.events import Error, Event, Message
from .sources import Item

# The kinds of event `items_of` finds texts in: a reader may pass over any other without calling it.
SPOKEN: frozenset[type] = frozenset({Message, Error})


def items_of(event: Event, offset: int, part: int = 0, project: str | None = None) -> Iterator[Item]:
    """The searchable texts of one event: what people and tools said, not the journal's bookkeeping."""
    if isinstance(event, Message):
        msg, seq, ts = event.message, event.seq, event.ts
        if msg.role == "user":
            yield Item(seq, ts, "user", "message", msg.content, offset, part, project=project)
        elif msg.role == "tool":
            yield Item(seq, ts, "tool", "result", msg.content, offset, part, project=project)
        else:
            thought = "\n".join(r.text for r in msg.reasoning or () if r.text)
            if thought:
                yield Item(seq, ts, "thinking", "reasoning", thought, offset, part, project=project)
            if msg.content:
                yield Item(seq, ts, "assistant", "message", msg.content, offset, part, project=project)
            for call in msg.tool_calls or ():
                yield Item(seq, ts, "tool", "call", call.args, offset, part, call.name, project)
    elif isinstance(event, Error):
        yield Item(event.seq, event.ts, "error", "error", event.message, offset, part, project=project)
