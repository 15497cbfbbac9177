"""The tools the model may call, confined to the workspace: three read-only, three with side effects.

A tool is one `Tool` in the TOOLS table (after the tools' code below): what the model is told,
whether it is read-only, and the code that runs it. The loop offers TOOLS to the model, approval and
`tool_start.read_only` read `read_only` from it, and `Toolbox` dispatches through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import stat
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from ..journal.targets import NotReplaceable, replaceable
from ..portable import O_BINARY, O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK
from .workspace import Place, Workspace, WorkspaceError

OUTPUT_CAP = 16_000
COMMAND_TIMEOUT = 120.0
_READ_LIMIT = 2_000_000  # bytes read_file and grep read of one file, whatever its size
_EDIT_LIMIT = 8_000_000  # edit_file holds the whole file in memory
_GREP_MATCHES = 200
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules", ".venv"}


@dataclass(frozen=True)
class Tool:
    """One tool: its name, description and JSON-schema `parameters` (what the model is told), and `run`.

    `read_only` decides approval (a read-only call always runs), `tool_start.read_only`, and whether
    resume may run the call again after an interruption. `run` gets the Toolbox (the workspace and
    its limits) and the arguments as a dict; a ToolFailure or WorkspaceError it raises is the result.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    read_only: bool
    run: ToolRun


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: str
    truncated: bool = False
    stopped_by: Literal["timeout"] | None = None


ToolRun: TypeAlias = Callable[["Toolbox", dict[str, Any]], Awaitable[ToolResult]]


class ToolFailure(Exception):
    """A call that cannot be done as asked; the message goes back to the model as the result."""


def _params(required: list[str], **props: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind, "description": text} for name, (kind, text) in props.items()},
        "required": required,
    }


def cap(text: str, limit: int = OUTPUT_CAP) -> tuple[str, bool]:
    """Text no longer than about `limit`: its head and tail kept (a test summary is at the end)."""
    if len(text) <= limit:
        return text, False
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n[... {cut} characters cut: the output was longer than {limit} ...]\n{tail}", True


class Toolbox:
    """Runs tool calls in one workspace; `protected` folders (the journals) are never read or written.

    Every path a file tool takes goes through `Workspace.place` once, then is reached without
    following links. run_command is a shell with the user's rights: paths do not confine it.
    """

    def __init__(
        self,
        root: Path,
        *,
        protected: tuple[Path, ...] = (),
        command_timeout: float = COMMAND_TIMEOUT,
        output_cap: int = OUTPUT_CAP,
    ) -> None:
        self.workspace = Workspace(root, protected)
        self.root = self.workspace.root
        self.command_timeout = command_timeout
        self.output_cap = output_cap

    async def run(self, name: str, args_json: str) -> ToolResult:
        """The result of one call; a failure is a result the model reads, never an exception."""
        tool = TOOLS.get(name)
        if tool is None:
            return ToolResult(False, f"there is no tool named {name!r}; the tools are: {', '.join(TOOLS)}")
        if holds_lone_surrogate(args_json):  # the agent refuses these before they start; this is the last guard
            return ToolResult(False, f"the arguments of {name} hold a lone surrogate; send the text whole")
        try:
            args = json.loads(args_json or "{}")
        except json.JSONDecodeError as exc:
            return ToolResult(False, f"the arguments of {name} are not valid JSON ({exc}); send a JSON object")
        if not isinstance(args, dict):
            return ToolResult(False, f"the arguments of {name} must be a JSON object, not {type(args).__name__}")
        try:
            result = await tool.run(self, args)
        except (ToolFailure, WorkspaceError) as exc:
            return ToolResult(False, str(exc))
        except OSError as exc:
            return ToolResult(False, f"{name} failed: {exc.strerror or exc} ({exc.filename or ''})")
        text, truncated = cap(result.content, self.output_cap)
        return ToolResult(result.ok, text, truncated or result.truncated, result.stopped_by)


def holds_lone_surrogate(args_json: str) -> bool:
    """Whether a call's arguments hold half of a UTF-16 pair, as a character or as a JSON escape (`\\ud800`).

    No path, file or command line can hold one (encoding it fails, or makes bytes the model never
    wrote), so such a call is refused before it starts. Arguments that are not JSON are not looked
    into: the tool says so.
    """
    try:
        args_json.encode("utf-8")
        if "\\u" not in args_json and "\\U" not in args_json:
            return False
        json.dumps(json.loads(args_json), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):
        return False
    return False


def _arg(args: dict[str, Any], key: str, default: str | None = None) -> str:
    """The string argument `key` (or `default`); a ToolFailure the model reads when it is missing or not a string."""
    value = args.get(key, default)
    if value is None:
        raise ToolFailure(f"missing argument {key!r}")
    if not isinstance(value, str):
        raise ToolFailure(f"argument {key!r} must be a string")
    return value


# --- read-only -------------------------------------------------------------------------------


async def _read_file(box: Toolbox, args: dict[str, Any]) -> ToolResult:
    place = box.workspace.place(_arg(args, "path"))
    try:
        fd, st = box.workspace.open_file(place)
    except FileNotFoundError:
        raise ToolFailure(f"{place.rel}: no such file in the workspace; list_dir shows what is there") from None
    try:
        if stat.S_ISDIR(st.st_mode):
            raise ToolFailure(f"{place.rel}: is a folder; use list_dir")
        data = read_at_most(fd, _READ_LIMIT)
    finally:
        os.close(fd)
    if b"\x00" in data[:8192]:
        raise ToolFailure(f"{place.rel}: is a binary file")
    text = data.decode("utf-8", errors="replace")
    if st.st_size > len(data):
        note = f"[... the file has {st.st_size} bytes; only the first {len(data)} were read ...]"
        return ToolResult(True, f"{text}\n{note}", truncated=True)
    return ToolResult(True, text)


async def _list_dir(box: Toolbox, args: dict[str, Any]) -> ToolResult:
    place = box.workspace.place(_arg(args, "path", "."))
    try:
        fd = box.workspace.open_folder(place.parts)
    except FileNotFoundError:
        raise ToolFailure(f"{place.rel}: no such folder in the workspace") from None
    try:
        with os.scandir(fd) as found:
            names = [
                e.name + ("@" if e.is_symlink() else "/" if e.is_dir(follow_symlinks=False) else "")
                for e in found
                if e.name not in _SKIP_DIRS and not box.workspace.is_protected(place.path / e.name)
            ]
    finally:
        os.close(fd)
    entries = sorted(names, key=str.lower)
    return ToolResult(True, "\n".join(entries) if entries else "(empty folder)")


async def _grep(box: Toolbox, args: dict[str, Any]) -> ToolResult:
    pattern_text = _arg(args, "pattern")
    try:
        pattern = re.compile(pattern_text)
    except re.error as exc:
        raise ToolFailure(f"{pattern_text!r} is not a valid regular expression: {exc}") from None
    start = box.workspace.place(_arg(args, "path", "."))
    try:
        fd, st = box.workspace.open_file(start)
    except FileNotFoundError:
        raise ToolFailure(f"{start.rel}: no such file or folder in the workspace") from None
    hits: list[str] = []
    try:
        for rel, data in _texts(box, start, fd, st):
            if b"\x00" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{rel}:{number}: {line}")
                    if len(hits) >= _GREP_MATCHES:
                        hits.append(f"[stopped at {_GREP_MATCHES} matches; narrow the pattern or the path]")
                        return ToolResult(True, "\n".join(hits), truncated=True)
    finally:
        os.close(fd)
    return ToolResult(True, "\n".join(hits) if hits else f"no match for {pattern_text!r}")


def _texts(box: Toolbox, start: Place, fd: int, st: os.stat_result) -> Iterator[tuple[str, bytes]]:
    """The regular files at `start` (a file, or a folder walked without following links), their first bytes."""
    if stat.S_ISREG(st.st_mode):
        yield start.rel, read_at_most(fd, _READ_LIMIT)
        return
    for where, folders, files, folder_fd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
        base = os.path.normpath(os.path.join(start.rel, where))
        folders[:] = sorted(
            f for f in folders if f not in _SKIP_DIRS and not box.workspace.is_protected(start.path / where / f)
        )
        for name in sorted(files):
            data = _read_regular(name, folder_fd)
            if data is not None:
                yield (name if base == "." else f"{base}/{name}"), data


# --- side effects ---------------------------------------------------------------------------


async def _write_file(box: Toolbox, args: dict[str, Any]) -> ToolResult:
    place = box.workspace.place(_arg(args, "path"), writing=True)
    content = _arg(args, "content")
    folder = box.workspace.open_folder(place.parts[:-1], create=True)
    try:
        existed = _replace_file(folder, place, content.encode("utf-8"))
    finally:
        os.close(folder)
    verb = "overwrote" if existed else "created"
    return ToolResult(True, f"{verb} {place.rel} ({len(content)} characters)")


async def _edit_file(box: Toolbox, args: dict[str, Any]) -> ToolResult:
    place = box.workspace.place(_arg(args, "path"), writing=True)
    old, new = _arg(args, "old"), _arg(args, "new")
    try:
        fd, st = box.workspace.open_file(place)
    except FileNotFoundError:
        raise ToolFailure(f"{place.rel}: no such file in the workspace") from None
    try:
        if st.st_size > _EDIT_LIMIT:
            raise ToolFailure(
                f"{place.rel}: is {st.st_size} bytes, and edit_file edits files up to {_EDIT_LIMIT} bytes; "
                "use run_command for this one"
            )
        data = read_at_most(fd, _EDIT_LIMIT)
    finally:
        os.close(fd)
    if not old:
        raise ToolFailure("`old` is empty; give the exact text to replace")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"{place.rel}: is not UTF-8 text; edit_file edits text files only") from None
    count = text.count(old)
    if count == 0:
        raise ToolFailure(
            f"{place.rel}: the text to replace is not in the file; read it again and copy the text exactly"
        )
    if count > 1:
        raise ToolFailure(
            f"{place.rel}: the text to replace appears {count} times; include more surrounding lines so it is unique"
        )
    folder = box.workspace.open_folder(place.parts[:-1])
    try:
        _replace_file(folder, place, text.replace(old, new, 1).encode("utf-8"))
    finally:
        os.close(folder)
    return ToolResult(
        True, f"edited {place.rel}: {old.count(chr(10)) + 1} line(s) replaced by {new.count(chr(10)) + 1}"
    )


async def _run_command(box: Toolbox, args: dict[str, Any]) -> ToolResult:
    command = _arg(args, "command")
    timeout = args.get("timeout")
    limit = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else box.command_timeout
    limit = min(limit, box.command_timeout)
    env = dict(os.environ)
    # Commands see this interpreter as `python`, whether or not its folder is on the user's PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("PYTHONPATH", None)
    # Only this process holds the write end: if it dies (even by kill -9) the guard reads EOF.
    guard_read, guard_write = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            _GUARDED,
            "wren",
            command,
            cwd=box.root,
            stdin=guard_read,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    except BaseException:
        os.close(guard_write)
        raise
    finally:
        os.close(guard_read)
    chunks: list[bytes] = []
    size = 0
    extra = 0

    async def collect() -> None:
        nonlocal size, extra
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            if size < _READ_LIMIT:
                chunks.append(chunk)
                size += len(chunk)
            else:
                extra += len(chunk)
        await proc.wait()

    stopped: Literal["timeout"] | None = None
    try:
        await asyncio.wait_for(collect(), limit)
        # The command ended on its own: the guard stands down and leaves what it started running.
        with contextlib.suppress(OSError):
            os.write(guard_write, b"done\n")
    except TimeoutError:
        stopped = "timeout"
        await _kill_group(proc)
    except BaseException:
        await _kill_group(proc)
        raise
    finally:
        os.close(guard_write)
    output = b"".join(chunks).decode("utf-8", errors="replace").rstrip("\n")
    if extra:
        output += f"\n[... {extra} more bytes of output not kept ...]"
    if stopped:
        tail = f"[stopped: still running after {limit:g} s; the command was killed]"
        return ToolResult(False, f"$ {command}\n{output}\n{tail}", stopped_by="timeout")
    code = proc.returncode
    status = f"[exit code {code}]" if code is not None and code >= 0 else f"[killed by signal {-(code or 0)}]"
    return ToolResult(code == 0, f"$ {command}\n{output}\n{status}", truncated=bool(extra))


# The one table of tools: the model is offered these, in this order.
TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool(
            "read_file",
            "Read a text file in the workspace.",
            _params(["path"], path=("string", "file path, relative to the workspace")),
            read_only=True,
            run=_read_file,
        ),
        Tool(
            "list_dir",
            "List a folder of the workspace (folders end with /, symbolic links with @).",
            _params([], path=("string", "folder path, relative to the workspace (default .)")),
            read_only=True,
            run=_list_dir,
        ),
        Tool(
            "grep",
            "Search the workspace's text files for a regular expression; prints path:line: text.",
            _params(
                ["pattern"],
                pattern=("string", "a Python regular expression"),
                path=("string", "a file or folder to search (default .)"),
            ),
            read_only=True,
            run=_grep,
        ),
        Tool(
            "write_file",
            "Create or overwrite a file in the workspace with the given content.",
            _params(["path", "content"], path=("string", "file path"), content=("string", "the whole new content")),
            read_only=False,
            run=_write_file,
        ),
        Tool(
            "edit_file",
            "Replace one exact occurrence of `old` with `new` in a file; refused if `old` is missing or appears "
            "more than once.",
            _params(
                ["path", "old", "new"],
                path=("string", "file path"),
                old=("string", "the exact text to replace, unique in the file"),
                new=("string", "the replacement text"),
            ),
            read_only=False,
            run=_edit_file,
        ),
        Tool(
            "run_command",
            "Run a shell command in the workspace; prints its output and exit code.",
            _params(
                ["command"],
                command=("string", "the shell command"),
                timeout=("number", "seconds before it is stopped (default set by the user)"),
            ),
            read_only=False,
            run=_run_command,
        ),
    )
}


# Beside the command, in its group, a guard waits on a pipe only Wren writes: "done" lets it exit, end of
# file (Wren died, kill -9 included) makes it SIGKILL the whole group. The command's stdin is /dev/null.
_GUARDED = (
    'exec 3<&0 </dev/null; { read -r _line || kill -s KILL 0; } <&3 >/dev/null 2>&1 & exec 3<&-; exec /bin/sh -c "$1"'
)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """Stop a command and everything it started (its own process group, its guard included), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.shield(proc.wait())


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from the start of an open file: a 2 GB file costs `limit` bytes of memory, no more."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_regular(name: str, folder: int) -> bytes | None:
    """The first bytes of a regular file in an open folder; None for a link, a FIFO, a device or an error."""
    try:
        if not stat.S_ISREG(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            return None  # not even opened: opening a FIFO or a device can block or act
        fd = os.open(name, os.O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_BINARY | O_CLOEXEC, dir_fd=folder)
    except OSError:
        return None
    try:
        return read_at_most(fd, _READ_LIMIT) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _replace_file(folder: int, place: Place, data: bytes) -> bool:
    """Write through a new temporary file and a rename, so a kill leaves the old file or the new one.

    The temporary file has a random name and is created with O_EXCL, so nothing that was at a
    guessable name (a hard link to a file outside the workspace) is ever written through; it is
    removed on every failure. Returns whether a file was there before.
    """
    name = place.parts[-1]
    try:
        old = replaceable(
            name, dir_fd=folder, shown=place.rel, advice="write_file and edit_file replace regular files only"
        )
    except NotReplaceable as exc:
        raise ToolFailure(str(exc)) from None
    fd, tmp = _new_temp(folder, name)
    try:
        try:
            if old is not None:
                os.fchmod(fd, old.st_mode & 0o777)  # its permissions, never a setuid bit on new content
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    return old is not None


def _new_temp(folder: int, name: str) -> tuple[int, str]:
    """A new file beside `name`, under a random name no one could have prepared."""
    for _ in range(100):
        tmp = f".{name[:120]}.{secrets.token_hex(8)}.wren-tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY | O_CLOEXEC
            return os.open(tmp, flags, 0o644, dir_fd=folder), tmp
        except FileExistsError:
            continue
    raise ToolFailure(f"{name}: could not find a free temporary name beside it")
