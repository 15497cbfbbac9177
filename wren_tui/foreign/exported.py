"""A session read through a descriptor of its lines, whatever its agent keeps it in.

Every reader of other agents' sessions (listing, `wren log`, fork points, search, the viewer) reads
whole lines through a descriptor with `pread` (`portable.pread`). A JSONL session file is opened as it is. A
session kept otherwise (OpenCode's database, aider's Markdown) is exported by its format into lines
(`Format.export`) held in an anonymous in-memory file: the same readers then read it unchanged,
and the agent's own file is only ever read, through a private copy where it must be.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import portable
from ..journal.reader import open_for_reading
from .contract import Format


def memory_file(data: bytes, name: str = "wren-session") -> int:
    """A read-write descriptor of an anonymous file holding `data` (gone when the last descriptor closes)."""
    fd = portable.memory_file(name)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_lines(path: Path, fmt: Format) -> int:
    """A descriptor of the session's lines: the file itself, or its export. JournalError if unreadable."""
    if fmt.export is None:
        return open_for_reading(path)
    return memory_file(fmt.export(path), f"wren-{fmt.name}")
