"""What a command writes: its output on stdout, its one sentence of error on stderr, JSON for scripts."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from ..journal.visible import escaped_json, visible_text

_json = msgspec.json.Encoder()


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    """`wren: TEXT` on stderr; a model's command or a server's words may be in it: nothing in it drives the terminal."""
    sys.stderr.write(f"wren: {visible_text(text)}\n")
    sys.stderr.flush()


def print_json(data: Any) -> None:
    sys.stdout.buffer.write(escaped_json(_json.encode(data)) + b"\n")
    sys.stdout.flush()
