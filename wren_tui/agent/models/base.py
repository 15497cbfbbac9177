"""The model gateway protocol: messages and tools in, an async stream of parts out; and what a gateway is made from."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...journal.events import ChatMessage, Reasoning, ToolCall
from ...journal.visible import valid_text
from ..errors import AgentError
from ..tools import Tool


@dataclass(frozen=True)
class TextPart:
    """A fragment of the reply's text."""

    text: str


@dataclass(frozen=True)
class ReasoningPart:
    """A fragment of the model's reasoning; fragments with the same block belong to one piece.

    `kind` names how the server sent it (see `Reasoning.kind`); `signature` and `data` are what
    Anthropic needs to get back with a thinking block, and arrive once, whole.
    """

    text: str = ""
    block: int = 0
    kind: str = ""
    signature: str | None = None
    data: str | None = None


@dataclass(frozen=True)
class ToolCallPart:
    """A fragment of one tool call; fragments with the same index belong to the same call.

    A server that sends no index (or null) sends each call whole or in order: a fragment with a new
    id starts a new call, one without an id continues the last.
    """

    index: int | None
    id: str | None = None
    name: str | None = None
    args: str = ""


@dataclass(frozen=True)
class UsagePart:
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class FinishPart:
    reason: str


@dataclass(frozen=True)
class RetryPart:
    """The request failed in a way worth retrying; the stream starts over after `delay` seconds."""

    message: str
    attempt: int
    delay: float


StreamPart = TextPart | ReasoningPart | ToolCallPart | UsagePart | FinishPart | RetryPart

# What a gateway hands on for an event or line that carried no character (a keep-alive, an empty delta):
# the agent counts it as one character toward the reply's cap, and nothing else (see http.Quiet).
NOTHING = TextPart("")


class GatewayError(AgentError):
    """The model could not be reached or refused the request; the message is a sentence for a person."""

    def __init__(self, message: str, *, retryable: bool = False, attempt: int = 0, too_long: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.attempt = attempt
        # The server refused the request as longer than the model's window (compacting may help).
        self.too_long = too_long


class ModelUnavailable(Exception):
    """The chosen model cannot be used as configured; the message says what to set (the command exits 2)."""


class Gateway(Protocol):
    @property
    def model(self) -> str: ...

    def stream(self, messages: Sequence[ChatMessage], tools: Sequence[Tool]) -> AsyncIterator[StreamPart]: ...


@dataclass(frozen=True)
class ModelSetup:
    """What a factory in the registry gets to make a gateway; each model takes what it needs."""

    workspace: Path
    # The system prompt: the workspace, and what the prefixes of a tool result mean.
    system: str
    # 0 is as fast as it goes; 1 spaces the steps like a real model (only the offline model slows down).
    pace: float
    env: Mapping[str, str]


ModelFactory = Callable[[ModelSetup], Gateway]


@dataclass
class _CallDraft:
    id: str = ""
    name: str = ""
    args: list[str] = field(default_factory=list)


@dataclass
class _ReasoningDraft:
    kind: str = ""
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    data: str | None = None


@dataclass
class Reply:
    """One assistant reply assembled from its parts."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _CallDraft] = field(default_factory=dict)
    thoughts: dict[int, _ReasoningDraft] = field(default_factory=dict)
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish: str | None = None

    def add(self, part: StreamPart) -> None:
        if isinstance(part, TextPart):
            self.text.append(part.text)
        elif isinstance(part, ReasoningPart):
            thought = self.thoughts.setdefault(part.block, _ReasoningDraft())
            thought.kind = thought.kind or part.kind
            thought.text.append(part.text)
            thought.signature = part.signature or thought.signature
            thought.data = part.data or thought.data
        elif isinstance(part, ToolCallPart):
            draft = self.calls.setdefault(self._call_index(part), _CallDraft())
            draft.id = draft.id or (part.id or "")
            draft.name = draft.name or (part.name or "")
            draft.args.append(part.args)
        elif isinstance(part, UsagePart):
            self.input_tokens, self.output_tokens = part.input_tokens, part.output_tokens
        elif isinstance(part, FinishPart):
            self.finish = part.reason

    def _call_index(self, part: ToolCallPart) -> int:
        if part.index is not None:
            return part.index
        last = max(self.calls, default=None)
        if last is None or (part.id and part.id != self.calls[last].id):
            return 0 if last is None else last + 1
        return last

    @property
    def content(self) -> str:
        return valid_text("".join(self.text))

    @property
    def reasoning(self) -> list[Reasoning] | None:
        """The pieces of reasoning in block order; None when the model sent none."""
        pieces = [
            Reasoning(text=valid_text("".join(t.text)), kind=t.kind, signature=t.signature, data=t.data)
            for _, t in sorted(self.thoughts.items())
        ]
        pieces = [p for p in pieces if p.text or p.signature or p.data]
        return pieces or None

    def tool_calls(self, id_prefix: str) -> list[ToolCall]:
        """The calls in index order; a call the model sent without an id gets one from `id_prefix`."""
        return [
            ToolCall(id=d.id or f"{id_prefix}-{i}", name=d.name, args=valid_text("".join(d.args)) or "{}")
            for i, d in sorted(self.calls.items())
        ]
