"""Gemini's content parts as Gemini CLI writes them and Qwen Code (whose messages are Gemini-shaped) does: a
`functionCall` as a Wren call, a `functionResponse` as its text and whether it says the call failed."""

from __future__ import annotations

from typing import Any

import msgspec

from ..journal.events import ToolCall


def function_call(call: dict[str, Any]) -> ToolCall:
    """A `functionCall` (its id, name and args) as a call."""
    return ToolCall(
        str(call.get("id") or ""), str(call.get("name") or ""), msgspec.json.encode(call.get("args") or {}).decode()
    )


def response_text(response: dict[str, Any], *, content: bool = False) -> tuple[str, bool]:
    """A `functionResponse`'s text, and whether it says the call failed (an `error` member); `content`: its text may
    be in `content` where it has no `output` (Qwen Code's)."""
    body = response.get("response")
    if not isinstance(body, dict):
        return ("" if body is None else str(body)), False
    if body.get("error") is not None:
        return str(body["error"]), True
    output = body.get("output", body.get("content")) if content else body.get("output")
    return (output if isinstance(output, str) else msgspec.json.encode(body).decode()), False
