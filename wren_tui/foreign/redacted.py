"""Another agent's session as Wren writes it anywhere: with secrets redacted as Wren's own journal has them.

A fork's journal, an ATIF export, OpenTelemetry spans and the search index are made from the events
a session's lines translate to; each goes through here, so a key the other agent's session holds
(in a prompt, a command, a result) is `[redacted]` in what Wren writes, with the rule and the key
shapes of `journal.redact` (the environment's *_KEY, *_TOKEN, *_SECRET values; sk-…, ghp_…, AKIA…).
Reading the file (`wren log`, the viewer, the fork's list of points) shows it as it is: the file is
the person's own.
"""

from __future__ import annotations

import functools
from typing import TypeVar

from ..journal.events import Event
from ..journal.redact import Redactor
from .base import Translated

T = TypeVar("T")


@functools.cache
def redactor() -> Redactor:
    """The process's redactor (the environment's secrets, read once)."""
    return Redactor()


def redacted(value: T) -> T:
    """`value` (an event, a message, any Struct, list or dict) with every text in it redacted."""
    return redactor().clean_fields(value)


def clean(text: str) -> str:
    return redactor().clean(text)


def shown(line: Translated) -> list[Event]:
    """The events a translated line gives (those it hides left out), each redacted: what Wren writes of it."""
    hidden = line.hidden
    clean_fields = redactor().clean_fields
    return [clean_fields(e) for i, e in enumerate(line.events) if i not in hidden]
