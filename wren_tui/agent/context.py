"""The context gauge: how much of the model's window the next request fills, known before it is sent.

The size is estimated from characters (about four a token; no tokenizer offline) and kept as the
conversation grows, so a request costs one addition, not a walk over the messages. Once the server
reports `usage`, its count of the last request's prompt is the base and only what came after it is
estimated. The window comes from WREN_CONTEXT_WINDOW, else a table of well-known models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..journal.events import ChatMessage
from .errors import UsageError
from .tools import Tool

# The first word of the request that asks the model for a summary of the conversation (a compaction).
COMPACT_MARK = "[compaction]"

# The context windows (tokens) of well-known models, by the start of their name (after any `vendor/`):
# the longest matching start wins. The scripted model stands for a common window.
WINDOWS: dict[str, int] = {
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude": 200_000,
    "deepseek": 128_000,
    "qwen3-coder": 262_144,
    "qwen2.5-coder": 32_768,
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    "llama-3.1": 131_072,
    "llama-3.3": 131_072,
    "mistral-large": 131_072,
    "codestral": 262_144,
    "kimi-k2": 131_072,
    "glm-4.5": 131_072,
    "scripted": 128_000,
}


def estimate_tokens_of(chars: int) -> int:
    return (chars + 3) // 4


def message_chars(message: ChatMessage) -> int:
    """The characters of one message as the model reads them: its text, its calls, its reasoning."""
    size = len(message.content)
    for call in message.tool_calls or ():
        size += len(call.name) + len(call.args) + len(call.id)
    for piece in message.reasoning or ():
        size += len(piece.text)
    return size


def tools_chars(tools: Sequence[Tool]) -> int:
    return sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in tools)


def window_from(model: str, env: Mapping[str, str]) -> tuple[int | None, str]:
    """The model's window and where it came from (`WREN_CONTEXT_WINDOW`, `table`), or None when neither knows it.

    Raises:
        UsageError: WREN_CONTEXT_WINDOW is set and is not a positive whole number.
    """
    raw = env.get("WREN_CONTEXT_WINDOW", "").strip()
    if raw:
        if not raw.isdigit() or int(raw) == 0:
            raise UsageError(f"WREN_CONTEXT_WINDOW={raw[:40]!r} is not a positive whole number of tokens")
        return int(raw), "WREN_CONTEXT_WINDOW"
    name = model.rsplit("/", 1)[-1].lower()
    starts = [start for start in WINDOWS if name.startswith(start)]
    if not starts:
        return None, ""
    return WINDOWS[max(starts, key=len)], "table"


def gauge_text(used: int, window: int | None) -> str:
    """`12,345 / 128,000 tokens (9.6%)`, or the used tokens alone when the window is not known."""
    if not window:
        return f"{used:,} tokens (window unknown: set WREN_CONTEXT_WINDOW)"
    return f"{used:,} / {window:,} tokens ({100 * used / window:.1f}%)"


class Gauge:
    """The size of the conversation as the next request sends it, kept as messages are added."""

    def __init__(self, window: int | None, fixed_chars: int, messages: Sequence[ChatMessage] = ()) -> None:
        self.window = window
        self._fixed = fixed_chars
        self._chars = fixed_chars + sum(map(message_chars, messages))
        self._sent_chars = self._chars
        # The server's count of the last request's prompt, and the characters that request held.
        self._base: tuple[int, int] | None = None

    def rebuilt(self, messages: Sequence[ChatMessage]) -> Gauge:
        """A gauge of the same window for another conversation (a compacted one): estimated, no server count yet."""
        return Gauge(self.window, self._fixed, messages)

    def add(self, message: ChatMessage) -> None:
        self._chars += message_chars(message)

    def used(self) -> int:
        """The tokens the next request holds: the server's last count plus an estimate of what came after it."""
        if self._base is None:
            return estimate_tokens_of(self._chars)
        tokens, chars = self._base
        return tokens + estimate_tokens_of(max(0, self._chars - chars))

    def seed(self, input_tokens: int, later: Sequence[ChatMessage]) -> None:
        """The server counted a request of this conversation before `later` were added (a resumed last usage)."""
        self._base = (input_tokens, self._chars - sum(map(message_chars, later)))

    def sending(self) -> int:
        """A request is about to go: its estimated size (kept to be corrected by the server's usage)."""
        self._sent_chars = self._chars
        return self.used()

    def reported(self, input_tokens: int) -> None:
        """The server counted the last request's prompt: that count replaces the estimate of what it held."""
        self._base = (input_tokens, self._sent_chars)

    def text(self) -> str:
        return gauge_text(self.used(), self.window)

    def short(self) -> str:
        """For the chat prompt: `[9,876/128,000 8%]`."""
        used = self.used()
        if not self.window:
            return f"[{used:,} tokens]"
        return f"[{used:,}/{self.window:,} {100 * used // self.window}%]"
