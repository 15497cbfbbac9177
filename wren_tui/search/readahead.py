"""Reading ahead for the indexer: session files read whole in other processes while the index is written.

Building an index from nothing spends most of its time reading: every line of every session decoded and
translated (in Python), then its items written into SQLite (one writer). Each half can run on its own
core: `Readahead` starts a few worker processes (forked from the indexer's when it has one thread, else
`python -m wren_tui.search.readahead`), gives each its share of the files new to the index (file i to
worker i mod N), and each worker reads its files in order, as `indexer` would read them in-process, and
sends their items as rows ready to insert, file after file, down a pipe. The indexer takes them in the
files' order, in its own transactions: a worker writes nothing, so the index's crash safety is the
indexer's (a kill leaves it as it was before the file being written). The pipes are bounded (a worker
waits while its pipe is full), so memory does not grow with the sessions' size; a worker whose parent
is gone finds its pipe closed and ends.

A frame is 4 bytes of length, then a marshalled tuple: (ROWS, [(item blob, text, name), ...]) a few
hundred items at a time, then one of (END, ...) (how the file was and where its reading ended),
(SKIP,) (it could not be opened: left out), (BAD,) (a JournalError: left out, as in-process) or
(FAIL,) (anything else: the indexer reads that file itself, and sees what it raises).
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import signal
import struct
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeAlias

from .. import portable
from ..foreign import FORMATS
from ..journal.errors import JournalError
from ..portable import open_read_only
from . import index
from .foreign import ForeignSession
from .index import fts_name, fts_text, item_blob, stop_blob
from .query import Query
from .sources import Item, SearchSource
from .stored import ref_of
from .wren_session import WrenSession

if TYPE_CHECKING:
    import subprocess

# Every line of every session: the query the indexer reads with (no line is left out by the raw pass).
EVERYTHING = Query.of("(?s).", regex=True)
ROWS, END, SKIP, BAD, FAIL = range(5)
BATCH = 256  # items a frame carries
# Processes reading ahead, at most: reading a file costs about twice writing its items, so past three the
# writer is what waits (with fewer CPUs, as many as there are: the writer mostly waits for them).
WORKERS = 3
# The bytes of files new to the index, in all, from which reading ahead pays for starting the workers
# (WREN_INDEX_READAHEAD_BYTES says otherwise: 0, always; the tests make small folders read ahead).
AHEAD_BYTES = 32 << 20
PIPE_BYTES = 1 << 20  # how far a worker may read ahead of the writer (the pipe's size, where Linux allows it)
_LENGTH = struct.Struct("<I")

Frame = tuple[Any, ...]


def workers() -> int:
    """How many processes read ahead here: none with one CPU (the writer would wait for them as long)."""
    cpus = portable.usable_cpus()
    return 0 if cpus < 2 else min(WORKERS, cpus)


def ahead_bytes() -> int:
    """From how many bytes of files new to the index they are read ahead."""
    try:
        return int(os.environ.get("WREN_INDEX_READAHEAD_BYTES", AHEAD_BYTES))
    except ValueError:
        return AHEAD_BYTES


def job_of(source: SearchSource) -> tuple[str, str] | None:
    """How a worker names `source` (its agent, its path), or None when it cannot be read in another process."""
    if type(source) is WrenSession:
        return source.agent, str(source.path)
    if type(source) is ForeignSession and FORMATS.get(source.agent) is not None:
        return source.agent, str(source.path)
    return None


def source_of(agent: str, path: str) -> SearchSource:
    """The source a worker reads for the job (agent, path)."""
    return WrenSession(Path(path)) if agent == WrenSession.agent else ForeignSession(Path(path), FORMATS[agent])


def read_whole(source: SearchSource) -> Iterator[Frame]:
    """The frames of one file read whole, as the indexer reads a file new to it (`indexer._read`)."""
    try:
        fd = open_read_only(source.path)
    except OSError:
        yield (SKIP,)
        return
    try:
        st = os.fstat(fd)
        rows: list[tuple[bytes, str, str]] = []
        for item, blob in blobs(source, source.items(EVERYTHING)):
            rows.append((blob, fts_text(item.text), fts_name(item.name)))
            if len(rows) >= BATCH:
                yield (ROWS, rows)
                rows = []
        if rows:
            yield (ROWS, rows)
        done = getattr(source, "saved", None)
        if done is None:  # a reader that cannot say where it ended: kept as read whole, read again whole
            offset, state, provisional = 0, None, 0
        else:
            offset, state, provisional = done.offset, done.state, done.provisional
        head, tail = index.checksums(fd, offset)
    except JournalError:
        yield (BAD,)
        return
    finally:
        os.close(fd)
    warnings = marshal.dumps(list(source.warnings)) if source.warnings else None
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    yield (END, identity, offset, state, provisional, head, tail, stop_blob(source.stop), warnings)


def blobs(source: SearchSource, items: Iterable[Item]) -> Iterator[tuple[Item, bytes]]:
    """Each of `items` (as `source` gives them) with what the items table keeps of it: a Wren journal's item as
    where it is in the journal (`wren.Ref`: its text is read there again), another agent's whole.

    Another agent's items are translations (a translator's memory of earlier lines makes them), and the
    exported formats (OpenCode's database, aider's history) are not the file searched: their texts are kept.
    """
    if not isinstance(source, WrenSession):
        for item in items:
            yield item, item_blob(item)
        return
    last, which = -1, 0
    for item in items:
        located = source.located
        which = which + 1 if located[0] == last else 0  # the line's items come one after the other
        last = located[0]
        yield item, marshal.dumps(ref_of(item, located, which))


class _Forked:
    """A worker forked from this process: what `Readahead` asks of a worker (as of a `subprocess.Popen`)."""

    def __init__(self, pid: int, stdout: IO[bytes]) -> None:
        self.pid, self.stdout = pid, stdout

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def wait(self) -> None:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


Worker: TypeAlias = "subprocess.Popen[bytes] | _Forked"


class Readahead:
    """Worker processes reading the files of `jobs` (in order, ahead of the writer); `frames(n)` are the n-th's."""

    def __init__(self, jobs: Sequence[tuple[str, str]], workers: int) -> None:
        self.broken = False
        self._procs: list[Worker] = []
        self._taken = 0
        try:
            for k in range(workers):
                mine = list(jobs[k::workers])
                proc = _fork(mine, self._procs) if forking() else _spawn(mine)
                self._procs.append(proc)
        except OSError:
            self.close()
            self.broken = True

    def frames(self, n: int) -> Iterator[Frame]:
        """The frames of the n-th job (taken in order); (FAIL,) from a worker gone wrong (the rest read in-process)."""
        if self.broken or not self._procs:
            yield (FAIL,)
            return
        out = self._procs[n % len(self._procs)].stdout
        assert out is not None
        while True:
            frame = _frame(out)
            if frame is None:
                self.broken = True
                yield (FAIL,)
                return
            yield frame
            if frame[0] != ROWS:
                return

    def close(self) -> None:
        """Stop the workers (they may still be reading ahead: what they read is not wanted)."""
        for proc in self._procs:
            proc.kill()
        for proc in self._procs:
            if proc.stdout is not None:
                proc.stdout.close()
            proc.wait()
        self._procs = []


def forking() -> bool:
    """Whether the workers are forked from this process rather than started anew (`python -m`).

    A fork has every module already imported: each worker starts reading at once, where a new interpreter
    spends about 0.13 s of a CPU importing the readers first. Only from a process with one thread (`wren
    search`): a fork copies another thread's locks as they were, held or not, and the viewer has threads.
    """
    return portable.HAS_FORK and threading.active_count() == 1


def _spawn(jobs: list[tuple[str, str]]) -> subprocess.Popen[bytes]:
    import subprocess  # only where a worker cannot be forked: not loaded by every search

    proc = subprocess.Popen(
        [sys.executable, "-m", __name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        close_fds=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    _widen(proc.stdout.fileno())
    mine = marshal.dumps(jobs)
    try:
        proc.stdin.write(_LENGTH.pack(len(mine)) + mine)
        proc.stdin.close()
    except OSError:
        proc.kill()
        proc.wait()
        raise
    return proc


def _fork(jobs: list[tuple[str, str]], before: list[Worker]) -> _Forked:
    """A worker forked from this process, reading `jobs`; `before`: the workers started earlier (their pipes
    are not the new one's to hold open)."""
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        raise
    if pid == 0:  # the worker: it never returns into the caller's code, and leaves by os._exit
        try:
            # The parent's objects are left as they are: no collection here finalizes its garbage (a temporary
            # file's, say), and their pages stay shared.
            gc.freeze()
            os.close(read)
            for worker in before:
                if worker.stdout is not None:
                    os.close(worker.stdout.fileno())
            # Nothing of the parent's: not its terminal (said nothing on), not its event loop's signal wakeup.
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            with os.fdopen(write, "wb") as out:
                _serve(jobs, out)
        finally:
            os._exit(0)  # no atexit, no flush of buffers the parent's output left in this copy
    os.close(write)
    _widen(read)
    return _Forked(pid, os.fdopen(read, "rb"))


def _serve(jobs: list[tuple[str, str]], out: IO[bytes]) -> None:
    """A worker's work: each job's frames written on `out`, in order; a pipe closed by the indexer ends it."""
    try:
        for agent, path in jobs:
            try:
                for frame in read_whole(source_of(agent, path)):
                    data = marshal.dumps(frame)
                    out.write(_LENGTH.pack(len(data)) + data)
            except Exception:
                data = marshal.dumps((FAIL,))
                out.write(_LENGTH.pack(len(data)) + data)
            out.flush()
    except (BrokenPipeError, KeyboardInterrupt):  # the indexer is gone, or stopped us: nothing to say
        return


def _frame(out: IO[bytes]) -> Frame | None:
    head = out.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(head)
    data = out.read(length)
    if len(data) < length:
        return None
    try:
        frame = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    return frame if isinstance(frame, tuple) and frame and frame[0] in (ROWS, END, SKIP, BAD, FAIL) else None


def _widen(fd: int) -> None:
    """Let a worker read further ahead than the default 64 kB pipe (Linux: F_SETPIPE_SZ; elsewhere as it is)."""
    portable.widen_pipe(fd, PIPE_BYTES)  # past the system's limit, or no such call: the pipe as it is


def main() -> None:
    """A worker started anew: read the jobs given on stdin, write each file's frames on stdout."""
    stdin = sys.stdin.buffer
    head = stdin.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return  # no jobs: the indexer went before it gave any
    _serve(marshal.loads(stdin.read(_LENGTH.unpack(head)[0])), sys.stdout.buffer)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):  # the indexer is gone, or stopped us: nothing to say
        os._exit(0)
