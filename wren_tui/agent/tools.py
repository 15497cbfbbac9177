"""The tools the model may call, confined to the workspace: three read-only, three with side effects."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .workspace import WorkspaceError, confine, is_within, relative

OUTPUT_CAP = 16_000
COMMAND_TIMEOUT = 120.0
_READ_LIMIT = 2_000_000
_GREP_MATCHES = 200
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules", ".venv"}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    read_only: bool

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function schema the model is given."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: str
    truncated: bool = False
    stopped_by: Literal["timeout"] | None = None


class ToolFailure(Exception):
    """A call that cannot be done as asked; the message goes back to the model as the result."""


def _params(required: list[str], **props: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind, "description": text} for name, (kind, text) in props.items()},
        "required": required,
    }


SPECS: dict[str, ToolSpec] = {
    s.name: s
    for s in (
        ToolSpec(
            "read_file",
            "Read a text file in the workspace.",
            _params(["path"], path=("string", "file path, relative to the workspace")),
            read_only=True,
        ),
        ToolSpec(
            "list_dir",
            "List a folder of the workspace (folders end with /).",
            _params([], path=("string", "folder path, relative to the workspace (default .)")),
            read_only=True,
        ),
        ToolSpec(
            "grep",
            "Search the workspace's text files for a regular expression; prints path:line: text.",
            _params(
                ["pattern"],
                pattern=("string", "a Python regular expression"),
                path=("string", "a file or folder to search (default .)"),
            ),
            read_only=True,
        ),
        ToolSpec(
            "write_file",
            "Create or overwrite a file in the workspace with the given content.",
            _params(["path", "content"], path=("string", "file path"), content=("string", "the whole new content")),
            read_only=False,
        ),
        ToolSpec(
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
        ),
        ToolSpec(
            "run_command",
            "Run a shell command in the workspace; prints its output and exit code.",
            _params(
                ["command"],
                command=("string", "the shell command"),
                timeout=("number", "seconds before it is stopped (default set by the user)"),
            ),
            read_only=False,
        ),
    )
}


def cap(text: str, limit: int = OUTPUT_CAP) -> tuple[str, bool]:
    """Text no longer than about `limit`: its head and tail kept (a test summary is at the end)."""
    if len(text) <= limit:
        return text, False
    head, tail = text[: limit * 2 // 3], text[-(limit // 3) :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n[... {cut} characters cut: the output was longer than {limit} ...]\n{tail}", True


class Toolbox:
    """Runs tool calls in one workspace; `protected` folders (the journals) are never written."""

    def __init__(
        self,
        root: Path,
        *,
        protected: tuple[Path, ...] = (),
        command_timeout: float = COMMAND_TIMEOUT,
        output_cap: int = OUTPUT_CAP,
    ) -> None:
        self.root = root.resolve()
        self.protected = protected
        self.command_timeout = command_timeout
        self.output_cap = output_cap
        self._impl: dict[str, Callable[[dict[str, Any]], Awaitable[ToolResult]]] = {
            "read_file": self._read_file,
            "list_dir": self._list_dir,
            "grep": self._grep,
            "write_file": self._write_file,
            "edit_file": self._edit_file,
            "run_command": self._run_command,
        }

    @staticmethod
    def spec(name: str) -> ToolSpec | None:
        return SPECS.get(name)

    async def run(self, name: str, args_json: str) -> ToolResult:
        """The result of one call; a failure is a result the model reads, never an exception."""
        impl = self._impl.get(name)
        if impl is None:
            return ToolResult(False, f"there is no tool named {name!r}; the tools are: {', '.join(SPECS)}")
        try:
            args = json.loads(args_json or "{}")
        except json.JSONDecodeError as exc:
            return ToolResult(False, f"the arguments of {name} are not valid JSON ({exc}); send a JSON object")
        if not isinstance(args, dict):
            return ToolResult(False, f"the arguments of {name} must be a JSON object, not {type(args).__name__}")
        try:
            result = await impl(args)
        except (ToolFailure, WorkspaceError) as exc:
            return ToolResult(False, str(exc))
        except OSError as exc:
            return ToolResult(False, f"{name} failed: {exc.strerror or exc} ({exc.filename or ''})")
        text, truncated = cap(result.content, self.output_cap)
        return ToolResult(result.ok, text, truncated or result.truncated, result.stopped_by)

    # --- arguments and paths ---------------------------------------------------------------

    @staticmethod
    def _arg(args: dict[str, Any], key: str, default: str | None = None) -> str:
        value = args.get(key, default)
        if value is None:
            raise ToolFailure(f"missing argument {key!r}")
        if not isinstance(value, str):
            raise ToolFailure(f"argument {key!r} must be a string")
        return value

    def _path(self, given: str) -> Path:
        return confine(self.root, given)

    def _writable(self, given: str) -> Path:
        path = self._path(given)
        if self._is_protected(path):
            raise ToolFailure(f"{given}: is inside the journals folder, which tools never write")
        return path

    def _is_protected(self, path: Path) -> bool:
        return any(is_within(path, folder) for folder in self.protected)

    def _rel(self, path: Path) -> str:
        return relative(self.root, path)

    # --- read-only -------------------------------------------------------------------------

    async def _read_file(self, args: dict[str, Any]) -> ToolResult:
        path = self._path(self._arg(args, "path"))
        if path.is_dir():
            raise ToolFailure(f"{self._rel(path)}: is a folder; use list_dir")
        if not path.exists():
            raise ToolFailure(f"{self._rel(path)}: no such file in the workspace; list_dir shows what is there")
        data = path.read_bytes()[:_READ_LIMIT]
        if b"\x00" in data[:8192]:
            raise ToolFailure(f"{self._rel(path)}: is a binary file")
        return ToolResult(True, data.decode("utf-8", errors="replace"))

    async def _list_dir(self, args: dict[str, Any]) -> ToolResult:
        path = self._path(self._arg(args, "path", "."))
        if not path.is_dir():
            raise ToolFailure(f"{self._rel(path)}: is not a folder in the workspace")
        entries = sorted(
            (e.name + ("/" if e.is_dir() else "") for e in os.scandir(path) if e.name not in _SKIP_DIRS),
            key=str.lower,
        )
        return ToolResult(True, "\n".join(entries) if entries else "(empty folder)")

    async def _grep(self, args: dict[str, Any]) -> ToolResult:
        pattern_text = self._arg(args, "pattern")
        try:
            pattern = re.compile(pattern_text)
        except re.error as exc:
            raise ToolFailure(f"{pattern_text!r} is not a valid regular expression: {exc}") from None
        start = self._path(self._arg(args, "path", "."))
        files = [start] if start.is_file() else sorted(self._walk(start))
        hits: list[str] = []
        for file in files:
            try:
                data = file.read_bytes()[:_READ_LIMIT]
            except OSError:
                continue
            if b"\x00" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{self._rel(file)}:{number}: {line}")
                    if len(hits) >= _GREP_MATCHES:
                        hits.append(f"[stopped at {_GREP_MATCHES} matches; narrow the pattern or the path]")
                        return ToolResult(True, "\n".join(hits), truncated=True)
        return ToolResult(True, "\n".join(hits) if hits else f"no match for {pattern_text!r}")

    def _walk(self, folder: Path) -> list[Path]:
        found: list[Path] = []
        for base, dirs, names in os.walk(folder):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not self._is_protected(Path(base, d))]
            found.extend(Path(base, n) for n in names)
        return found

    # --- side effects ----------------------------------------------------------------------

    async def _write_file(self, args: dict[str, Any]) -> ToolResult:
        path = self._writable(self._arg(args, "path"))
        content = self._arg(args, "content")
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        _replace_file(path, content)
        verb = "overwrote" if existed else "created"
        return ToolResult(True, f"{verb} {self._rel(path)} ({len(content)} characters)")

    async def _edit_file(self, args: dict[str, Any]) -> ToolResult:
        path = self._writable(self._arg(args, "path"))
        old, new = self._arg(args, "old"), self._arg(args, "new")
        if not path.is_file():
            raise ToolFailure(f"{self._rel(path)}: no such file in the workspace")
        if not old:
            raise ToolFailure("`old` is empty; give the exact text to replace")
        text = path.read_text(encoding="utf-8")
        count = text.count(old)
        if count == 0:
            raise ToolFailure(
                f"{self._rel(path)}: the text to replace is not in the file; read it again and copy the text exactly"
            )
        if count > 1:
            raise ToolFailure(
                f"{self._rel(path)}: the text to replace appears {count} times; include more surrounding lines "
                "so it is unique"
            )
        _replace_file(path, text.replace(old, new, 1))
        return ToolResult(
            True, f"edited {self._rel(path)}: {old.count(chr(10)) + 1} line(s) replaced by {new.count(chr(10)) + 1}"
        )

    async def _run_command(self, args: dict[str, Any]) -> ToolResult:
        command = self._arg(args, "command")
        timeout = args.get("timeout")
        limit = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else self.command_timeout
        limit = min(limit, self.command_timeout)
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
                cwd=self.root,
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


def _replace_file(path: Path, content: str) -> None:
    """Write through a temporary file and a rename, so a kill leaves the old file or the new one."""
    tmp = path.with_name(f".{path.name}.wren-tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        data = content.encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
