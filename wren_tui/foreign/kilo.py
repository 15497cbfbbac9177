"""Kilo Code CLI's sessions (one SQLite database, `~/.local/share/kilo/kilo.db`), read as Wren events.

Kilo Code CLI is a fork of OpenCode and keeps OpenCode's tables, rows and events, plus two tables of
its own (`kilo_board`, `kilo_board_message`): by those it is told from OpenCode (`opencode.Schema`),
and its database is read by OpenCode's reader. Its rows differ in one way the reader minds: while it
works it writes a synthetic text part marked transient ("Initializing snapshot..."), then removes
it (`message.part.removed.1`); such a part is never a reply (`opencode._transient`).

A session is named `DB#SESSION_ID`; the database alone names its only session.
"""

from __future__ import annotations

from pathlib import Path

from . import opencode
from .folders import variable_or_home

NAME = opencode.KILO.name
LABEL = opencode.KILO.label
ENV = opencode.ENV
WHERE = "Kilo Code CLI keeps every session in one database (one of them is named DB#ID)"
_SCHEMA = opencode.KILO


def session_id(path: Path) -> str:
    return opencode.session_id(path, _SCHEMA)


def export(path: Path) -> bytes:
    return opencode.export(path, schema=_SCHEMA)


def export_all(db: Path, said: list[str] | None = None) -> dict[Path, bytes]:
    return opencode.export_all(db, said, _SCHEMA)


def exporter(path: Path) -> opencode.Follower:
    return opencode.Follower(path, _SCHEMA)


def claims_file(path: Path, head: bytes) -> bool:
    """A SQLite database whose tables are OpenCode's and Kilo's own two."""
    return opencode.claims_file(path, head, _SCHEMA)


# OpenCode's format (its translator, kinds, tools, files and tokens) for Kilo's schema, in Kilo's folder.
FORMAT = opencode.FORMAT.replace(
    name=NAME,
    label=LABEL,
    folder=opencode.FORMAT.folder.replace(root=variable_or_home(ENV, ".local/share", "kilo"), where=WHERE),
    session_id=session_id,
    claims_file=claims_file,
    export=export,
    export_all=export_all,
    exporter=exporter,
)
