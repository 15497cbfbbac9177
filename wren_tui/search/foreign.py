"""Another agent's session file (Claude Code, Codex, pi) as search reads it: its lines translated as `wren log` does.

Every line is translated in order by its format (`wren_tui.foreign`), as `wren log` reads the file:
every branch of a tree of entries, the translator's memory kept line by line, and reading stopped
at a line that is not a JSON object (a torn tail: a last line without its newline). Seq is the
line's number; an item's part is its event's place among the line's events, so the viewer opens the
session at the hit as it opens one of these files. A thinking note is searched as role thinking,
like a Wren reply's reasoning.

This module is the session as a listing makes it (a path, a format, the file as it was when listed):
light, as a search the index answers makes one for every file. The reading (the translators, the skim
that lets a file that cannot hold the query go untranslated) is `skim`, loaded when a file is read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..foreign.folders import ID_ON_TEXT
from ..forwarding import Forward
from .sources import FileSession, Item, Saved

if TYPE_CHECKING:
    from ..foreign import Format
    from ..foreign.folders import Listed
    from ..foreign.listing import AgentSession
    from .query import Query
    from .skim import Skim


class ForeignSession(FileSession):
    """One session file of another agent, searched read-only."""

    def __init__(self, path: str | Path, fmt: Listed, looked: os.stat_result | None = None) -> None:
        # `FileSession.__init__(path, "")` set here, not called: a listing makes thousands (a third of their time).
        if isinstance(path, str):
            self._text = path
        else:
            self._text, self._path = str(path), path
        self._session = ""  # its id is made when something asks for it (`session`): a hit, a stop
        self._warnings: list[str] = []
        # Its format, or only its agent's folder (`folders.Home`): the format's reader is loaded when the file is read.
        self._listed = fmt
        # The file as it was when listed (sorted newest first): the index compares it with what it read.
        self.looked = looked

    @property
    def session(self) -> str:
        if not self._session:
            of_text = ID_ON_TEXT.get(self._listed.session_id)  # claude's, codex's, pi's: no Path made
            self._session = of_text(self._text) if of_text is not None else self._listed.session_id(self.path)
        return self._session

    agent: Forward[str] = Forward("_listed.name")  # read in C: asked of each of thousands of sessions listed

    @property
    def _format(self) -> Format:
        """The whole format (its module imported now, for a `Home`): only to read the file."""
        from ..foreign.folders import Home

        if isinstance(self._listed, Home):
            from ..foreign import FORMATS

            self._listed = FORMATS[self._listed.name]
        from ..foreign import Format

        assert isinstance(self._listed, Format)
        return self._listed

    def items(self, query: Query) -> Iterator[Item]:
        from .skim import Skim

        return self._read(None, Skim.of(query, self._format))

    def listing(self) -> AgentSession | None:
        """`wren ls --agent`'s row of this file as it is now, said as if no process were writing it (the
        listing says "live" itself); None for a file that is not one session or cannot be read."""
        if self._format.export is not None:
            return None  # a database of sessions (`DB#ID`): listed from its export, not kept
        from ..foreign.listing import describe_agent_session

        row = describe_agent_session(self.path, self._format, held=set(), live=False)
        return None if row.state == "unreadable" else row

    def resume(self, query: Query, saved: Saved) -> Iterator[Item]:
        return self._read(saved)

    def _read(self, saved: Saved | None, skim: Skim | None = None) -> Iterator[Item]:
        from .skim import translated  # the translators and the skim: only for a file read, not one the index answers

        stop, after, skimmed = yield from translated(self.path, self._format, saved, skim)
        if not skimmed:
            self._stop, self._saved = stop, after
        elif stop is not None:
            self._stop = stop
