"""What writes search's index (`indexer`) as `wren search` hands it to `folder_index.Index`: imported when first asked.

A warm search begins its read on the index opened read-only (`Index.begin`) and, when every file is as the index
holds it, never opens it for writing: it loads neither the indexer nor what only writing runs. The viewer never
imports this module (it gives `Index` no writer).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from .sources import SearchSource


class LazyWriter:
    """`indexer` as a `folder_index.Writer`, imported by its first call."""

    def connect_write(self, path: Path, said: list[str] | None = None) -> sqlite3.Connection:
        from . import indexer

        return indexer.connect_write(path, said)

    def refresh(
        self, db: sqlite3.Connection, sources: Iterable[SearchSource], *, forget: Iterable[str] | None = None
    ) -> int:
        from . import indexer

        return indexer.refresh(db, sources, forget=forget)
