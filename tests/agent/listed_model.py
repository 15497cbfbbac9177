"""A model written the way a new gateway would be: it streams, reply by reply, the parts it is given.

Registered in a test with one line (`MODELS["listed"] = ...`), it shows what a new gateway needs and
nothing more: a `model` name and `stream`. It keeps what each request carried, to assert on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from wren_tui.agent.models.base import GatewayError, StreamPart
from wren_tui.agent.tools import Tool
from wren_tui.journal.events import ChatMessage


class ListedModel:
    def __init__(self, replies: Sequence[Sequence[StreamPart]], name: str = "listed") -> None:
        self._replies = [list(parts) for parts in replies]
        self._name = name
        # Per request: the conversation it was sent, and the tools it was offered.
        self.requests: list[tuple[list[ChatMessage], list[Tool]]] = []

    @property
    def model(self) -> str:
        return self._name

    async def stream(self, messages: Sequence[ChatMessage], tools: Sequence[Tool]) -> AsyncIterator[StreamPart]:
        self.requests.append((list(messages), list(tools)))
        if len(self.requests) > len(self._replies):
            raise GatewayError(f"the listed model has {len(self._replies)} replies and was asked for another")
        for part in self._replies[len(self.requests) - 1]:
            yield part
