"""Secret redaction: nothing that looks like a credential reaches a journal line.

The values of WREN_API_KEY and of any environment variable named like *_KEY, *_TOKEN or *_SECRET
(at least 8 characters), and common key shapes (sk-..., ghp_..., AKIA...), are replaced before an
event is appended. The replacement names what was removed, never any part of it. `clean_fields`
walks every text field of an event, whatever its type: a new event type is covered without a line
here. The agent redacts what it journals; another agent's session is redacted the same way wherever
Wren writes it (`foreign.redacted`: a fork's journal, an ATIF export, OTel spans, the search index).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from types import UnionType
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin

import msgspec

from .visible import valid_text

T = TypeVar("T")

MARK = "[redacted]"
_MIN_SECRET = 8
_SECRET_NAME = re.compile(r"(?:^|_)(?:KEY|TOKEN|SECRET)$|^WREN_API_KEY$", re.IGNORECASE)
# Shapes of keys that leak through tool output even when they are not in our environment.
_KEY_SHAPES = re.compile(
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"
    r"|\b(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{30,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{30,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"
)


class Redactor:
    """Replaces secret values and key shapes in text, counting each replacement."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        values = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
        # Longest first, so a secret that contains another is removed whole.
        self._values = sorted(values, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in self._values)) if self._values else None

    def redact(self, text: str) -> tuple[str, int]:
        """The text with every secret replaced by [redacted], and how many were replaced.

        A lone surrogate (which UTF-8 cannot hold, so no journal line could) becomes U+FFFD first.
        """
        text = valid_text(text)
        count = 0
        if self._pattern is not None:
            text, n = self._pattern.subn(MARK, text)
            count += n
        text, n = _KEY_SHAPES.subn(MARK, text)
        return text, count + n

    def clean(self, text: str) -> str:
        return self.redact(text)[0]

    def clean_fields(self, value: T) -> T:
        """`value` (an event, or any Struct, list or dict) with every string in it cleaned, however deep."""
        return cast(T, _walk(value, self.clean))

    def longest_secret(self) -> int:
        """How long a secret may be, so a stream can hold back text that might still complete one."""
        return max((len(v) for v in self._values), default=0)

    def safe_cut(self, text: str, cut: int) -> int:
        """The largest place at or before `cut` where `text` can be split with no secret in two pieces.

        A stream is redacted piece by piece, so a cut must not fall inside a secret the text holds whole,
        nor inside the start of one the next piece may finish (a known value's first characters at the end).
        """
        spans = [m.span() for m in _KEY_SHAPES.finditer(text)]
        if self._pattern is not None:
            spans += [m.span() for m in self._pattern.finditer(text)]
        for value in self._values:
            for length in range(min(len(value) - 1, len(text)), 0, -1):
                if text.endswith(value[:length]):
                    spans.append((len(text) - length, len(text) + 1))
                    break
        moved = True
        while moved:
            moved = False
            for start, end in spans:
                if start < cut < end:
                    cut, moved = start, True
        return cut


def _walk(value: Any, clean: Callable[[str], str]) -> Any:
    """Every str in `value` cleaned: Struct fields that can hold text, list items, dict keys and values."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, msgspec.Struct):
        changed = {}
        for name in _text_fields(type(value)):
            old = getattr(value, name)
            new = _walk(old, clean)
            if new != old:
                changed[name] = new
        return msgspec.structs.replace(value, **changed) if changed else value
    if isinstance(value, list):
        return [_walk(item, clean) for item in value]
    if isinstance(value, dict):
        return {_walk(key, clean): _walk(item, clean) for key, item in value.items()}
    return value


@functools.cache
def _text_fields(cls: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of a Struct type that can hold text; a Literal's few words are not text, so they stay valid."""
    return tuple(f.name for f in msgspec.structs.fields(cls) if _holds_text(f.type))


def _holds_text(kind: object) -> bool:
    if kind in (int, bool, float, type(None)) or get_origin(kind) is Literal:
        return False
    if get_origin(kind) in (Union, UnionType):
        return any(_holds_text(member) for member in get_args(kind))
    return True  # str, a list, a dict, a Struct, Any: walked, and every str in it cleaned
