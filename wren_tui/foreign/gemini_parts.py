"""Gemini's content parts as Gemini CLI writes them and Qwen Code (whose messages are Gemini-shaped) does: a
`Part` (its text, whether that is a thought, its `functionCall` or `functionResponse`), a `functionCall` as a Wren
call, a `functionResponse` as its text and whether it says the call failed."""

from __future__ import annotations

from typing import Any

import msgspec

from ..journal.events import ToolCall


class Part(msgspec.Struct, rename="camel"):
    """One content part: Qwen Code's are decoded as this (strictly, with its line); Gemini CLI's are read by
    `content_parts`, which keeps what a malformed part still says."""

    text: str | None = None
    thought: bool = False
    function_call: dict[str, Any] | None = None
    function_response: dict[str, Any] | None = None


def content_parts(content: object, *, empty_strings: bool = True) -> list[Part]:
    """A record's `content` (a list of parts, or one) as parts, read leniently: a bare string is a text part
    (`empty_strings=False` drops an empty one), an object keeps the members of the right type (`thought` as its
    truth), anything else is no part."""
    found: list[Part] = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            if part or empty_strings:
                found.append(Part(text=part))
        elif isinstance(part, dict):
            text, call, response = part.get("text"), part.get("functionCall"), part.get("functionResponse")
            found.append(
                Part(
                    text=text if isinstance(text, str) else None,
                    thought=bool(part.get("thought")),
                    function_call=call if isinstance(call, dict) else None,
                    function_response=response if isinstance(response, dict) else None,
                )
            )
    return found


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
