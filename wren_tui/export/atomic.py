"""An export's file, written whole or not at all: a temporary name, fsync, rename, fsync of the folder.

What an export says first (where reading stopped, the totals) is known only once the journal is read,
so the conversation is kept in an unnamed temporary file as it is read, and copied in after the head.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .. import portable
from ..journal.targets import fsync_dir, replaceable
from ..portable import O_BINARY, O_CLOEXEC, O_NOFOLLOW, set_mode

_FLUSH = 1 << 20
# What an export's refusal of a FIFO, a device, a socket, a folder or a link at its name ends with.
REPLACES_ONLY = "an export replaces only a regular file: name another file, or a folder to write it in"


class ExportRefused(Exception):
    """An export cannot be written where it was asked for; the message says why and what to do."""


class AtomicOutput:
    """A body written as it comes, then `finish(head, foot)` puts head + body + foot at `path` at once.

    The file gets `mode` (the journal's: an export is as private as what it was made from).
    """

    def __init__(self, path: Path, mode: int = 0o600) -> None:
        self.path, self.mode = path, mode
        # A random name created with O_EXCL: nothing prepared at a guessable name (a FIFO) is ever opened.
        self._tmp = path.parent / f".{path.name[:120]}.{secrets.token_hex(6)}.tmp"
        try:
            self._body: BinaryIO = tempfile.TemporaryFile(dir=path.parent)  # noqa: SIM115 (closed by finish or close)
        except FileNotFoundError:
            raise ExportRefused(f"{path.parent}: no such folder; name a folder that exists with -o") from None
        except OSError as exc:
            raise ExportRefused(f"{path.parent}: cannot write there ({_why(exc)})") from None
        self._parts: list[str] = []
        self._pending = 0

    def write(self, text: str) -> None:
        self._parts.append(text)
        self._pending += len(text)
        if self._pending >= _FLUSH:
            self._flush()

    def write_raw(self, data: bytes) -> None:
        if self._parts:
            self._flush()
        self._body.write(data)

    def _flush(self) -> None:
        self._body.write("".join(self._parts).encode("utf-8", "surrogateescape"))
        self._parts.clear()
        self._pending = 0

    def finish(self, head: str, foot: str = "") -> None:
        """Write head, the body and foot to a temporary file, make it durable, then give it its name.

        The name is checked again (`journal.targets`) just before the rename: a FIFO or a device put
        there while the journal was read is refused, not replaced.
        """
        self._flush()
        try:
            fd = os.open(self._tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY | O_CLOEXEC, 0o600)
        except OSError as exc:
            self.close()
            raise ExportRefused(f"{self.path.parent}: cannot write there ({_why(exc)})") from None
        try:
            with os.fdopen(fd, "wb", closefd=True) as out:
                set_mode(out.fileno(), self._tmp, self.mode)  # exactly, whatever the umask
                out.write(head.encode("utf-8", "surrogateescape"))
                out.flush()
                self._body.flush()
                _copy(self._body.fileno(), out.fileno())
                out.write(foot.encode("utf-8", "surrogateescape"))
                out.flush()
                os.fsync(out.fileno())
            replaceable(self.path, advice=REPLACES_ONLY)
            os.replace(self._tmp, self.path)  # over an earlier export: rename does not, on Windows
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise
        finally:
            self.close()
        fsync_dir(self.path.parent)

    def close(self) -> None:
        self._body.close()


def _copy(src: int, dst: int) -> None:
    """The whole of `src` appended to `dst`, in the kernel where it can be."""
    portable.copy_range(src, dst, 0, os.fstat(src).st_size)


def _why(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else str(exc)


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A private temporary folder, removed with what it holds when the block ends (an export to hand on)."""
    folder = Path(tempfile.mkdtemp(prefix="wren-export-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
