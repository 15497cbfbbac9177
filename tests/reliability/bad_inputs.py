"""The bad-inputs table: each hostile journal, what read_events, `wren log`, `wren resume` and the viewer do with it.

`python -m tests.reliability.bad_inputs` prints the measured table (markdown) for the README;
test_bad_inputs.py, test_bad_inputs_resume.py and test_bad_inputs_viewer.py assert every row.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tests.journal.helpers import framed, write_journal
from tests.tui.conftest import FixedClock, screen_text, wait_for
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.errors import JournalError
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.reader import read_events
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.status_line import StatusLine

REPO = Path(__file__).resolve().parents[2]
# Asks the scripted model about the replayed conversation: an answer without tools, so resume appends and ends.
RESUME_MESSAGE = "what did you find earlier?"

N = 13  # events in the sample session
_LINE = b'{"seq":%d,"ts":"2026-01-01T00:00:00.000Z","type":"message","message":{"role":"user","content":"%s"}}\n'


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], Path]
    events: int | None  # events read_events returns; None: it refuses the path (JournalError)
    outcome: str  # "whole", "torn" or "corrupt" for a read; the error's phrase when refused
    phrase: str  # in the reason (or the error)
    log_exit: int
    as_user: bool = False


def _session(folder: Path, lines: Callable[[list[bytes]], list[bytes]] | None = None) -> Path:
    path = folder / "s-20260101-000000-abcd.jsonl"
    write_journal(path)
    if lines is not None:
        path.write_bytes(b"".join(lines(path.read_bytes().splitlines(keepends=True))))
    return path


def _raw(folder: Path, data: bytes) -> Path:
    path = folder / "s-20260101-000000-abcd.jsonl"
    path.write_bytes(data)
    return path


def _append(extra: bytes) -> Callable[[Path], Path]:
    return lambda folder: _session(folder, lambda ls: [*ls, extra])


def _insert_at(index: int, line: bytes) -> Callable[[Path], Path]:
    return lambda folder: _session(folder, lambda ls: [*ls[:index], line, *ls[index:]])


def _missing(folder: Path) -> Path:
    return folder / "s-20260101-000000-abcd.jsonl"


def _folder(folder: Path) -> Path:
    path = folder / "s-20260101-000000-abcd.jsonl"
    path.mkdir()
    return path


def _symlink(folder: Path) -> Path:
    real = _session(folder)
    link = folder / "s-20260101-000000-link.jsonl"
    link.symlink_to(real)
    return link


def _unreadable(folder: Path) -> Path:
    path = _session(folder)
    path.chmod(0)
    return path


def _ten_megabytes(folder: Path) -> Path:
    path = folder / "s-20260101-000000-abcd.jsonl"
    write_journal(path, [Message(message=ChatMessage(role="tool", content="x" * 10_000_000))])
    return path


def _crlf(folder: Path) -> Path:
    return _session(folder, lambda ls: [line.replace(b"\n", b"\r\n") for line in ls])


def _spliced(folder: Path) -> Path:
    other = folder / "other"
    other.mkdir()
    foreign = _session(other).read_bytes().splitlines(keepends=True)[2]  # seq 3, its CRC intact
    return _insert_at(6, foreign)(folder)


def _flip(folder: Path) -> Path:
    def flip(ls: list[bytes]) -> list[bytes]:
        ls[4] = ls[4].replace(b'"ok":false', b'"ok":true ')
        return ls

    return _session(folder, flip)


def _reseq(seq: int) -> Callable[[Path], Path]:
    """Line 7 carrying `seq` (written with a correct CRC, so only seq is wrong)."""

    def build(folder: Path) -> Path:
        from wren_tui.journal.writer import encode_line

        path = _session(folder)
        lines = path.read_bytes().splitlines(keepends=True)
        event = Message(message=ChatMessage(role="user", content="resequenced"))
        lines[6:] = [encode_line(event, seq, "2026-01-01T00:00:00.000Z")]
        path.write_bytes(b"".join(lines))
        return path

    return build


def _capital_crc(line: bytes) -> bytes:
    """The line with its CRC's hex digits in capitals (the same value, not the writer's bytes)."""
    capital = line[:-11] + line[-11:-3].upper() + line[-3:]
    assert capital != line, "this CRC has no letter to write in capitals"
    return capital


DEEP = b"[" * 10_000 + b"]" * 10_000

CASES = [
    Case("empty file", lambda f: _raw(f, b""), 0, "whole", "", 0),
    Case("missing file", _missing, None, "refused", "no such", 1),
    Case("a folder where the journal should be", _folder, None, "refused", "not a regular file", 1),
    Case("a symlink to a journal", _symlink, None, "refused", "symbolic link", 1),
    Case("permission denied", _unreadable, None, "refused", "permission denied", 1, as_user=True),
    Case("NUL-filled tail", _append(b"\x00" * 4096), N, "torn", "cut short", 4),
    Case("NUL-filled tail with newlines", _append(b"\x00" * 100 + b"\n" + b"\x00" * 50), N, "torn", "NUL bytes", 4),
    Case("garbage after the last newline", _append(b"garbage"), N, "torn", "cut short", 4),
    Case("CRLF line endings", _crlf, 0, "corrupt", "ends with CR", 4),
    Case(
        "UTF-8 byte-order mark",
        lambda f: _raw(f, b"\xef\xbb\xbf" + _LINE % (1, b"hi")),
        0,
        "corrupt",
        "byte-order mark",
        4,
    ),
    Case("invalid UTF-8", _insert_at(3, _LINE % (4, b"\xff\xfe")), 3, "corrupt", "not valid UTF-8", 4),
    Case("a 10 MB line", _ten_megabytes, 1, "whole", "", 0),
    Case(
        "JSON nested 10,000 deep",
        _insert_at(3, b'{"seq":4,"ts":"t","type":"x","v":' + DEEP + b"}\n"),
        3,
        "corrupt",
        "nested too deeply",
        4,
    ),
    Case("NaN", _insert_at(3, b'{"seq":4,"ts":"t","type":"x","v":NaN}\n'), 3, "corrupt", "not JSON", 4),
    Case("Infinity", _insert_at(3, b'{"seq":4,"ts":"t","type":"x","v":Infinity}\n'), 3, "corrupt", "not JSON", 4),
    Case(
        "duplicate keys (the last value wins; the CRC covers both)",
        lambda f: _raw(f, framed(b'{"seq":1,"ts":"t","type":"delta","text":"a","text":"b"}\n')),
        1,
        "whole",
        "",
        0,
    ),
    Case("a line with no crc member", _append(_LINE % (N + 1, b"forged")), N, "corrupt", "no crc member", 4),
    Case(
        "a crc member written another way (json.dumps spacing)",
        _append(_LINE[:-2] % (N + 1, b"forged") + b', "crc": "00000000"}\n'),
        N,
        "corrupt",
        "crc member is not written as Wren writes it",
        4,
    ),
    Case(
        "a crc in capitals",
        _append(_capital_crc(framed(_LINE % (N + 1, b"forged")))),
        N,
        "corrupt",
        "not 8 lowercase hex digits",
        4,
    ),
    Case("seq gap", _reseq(20), 7, "whole", "", 0),
    Case("seq repeat", _reseq(6), 6, "corrupt", "seq 6 does not increase on 6", 4),
    Case("seq decrease", _reseq(2), 6, "corrupt", "seq 2 does not increase on 6", 4),
    Case("CRC mismatch (a value changed in place)", _flip, 4, "corrupt", "CRC does not match", 4),
    Case("a line spliced in from another journal", _spliced, 6, "corrupt", "seq 3 does not increase on 6", 4),
    Case(
        "an unknown type",
        _insert_at(13, framed(b'{"seq":14,"ts":"t","type":"checkpoint","files":["a.py"]}\n')),
        N + 1,
        "whole",
        "",
        0,
    ),
    Case("missing seq", _insert_at(3, b'{"ts":"t","type":"delta","text":"a"}\n'), 3, "corrupt", "it has no seq", 4),
    Case(
        "mistyped seq",
        _insert_at(3, b'{"seq":"4","ts":"t","type":"checkpoint"}\n'),
        3,
        "corrupt",
        "seq is not a positive integer",
        4,
    ),
    Case(
        "seq as a bool",
        _insert_at(3, b'{"seq":true,"ts":"t","type":"checkpoint"}\n'),
        3,
        "corrupt",
        "seq is not a positive integer",
        4,
    ),
    Case("missing ts", _insert_at(3, b'{"seq":4,"type":"checkpoint"}\n'), 3, "corrupt", "it has no ts", 4),
    Case(
        "mistyped ts", _insert_at(3, b'{"seq":4,"ts":17,"type":"checkpoint"}\n'), 3, "corrupt", "ts is not a string", 4
    ),
    Case("missing type", _insert_at(3, b'{"seq":4,"ts":"t"}\n'), 3, "corrupt", "it has no type", 4),
    Case(
        "mistyped type",
        _insert_at(3, b'{"seq":4,"ts":"t","type":["message"]}\n'),
        3,
        "corrupt",
        "type is not a string",
        4,
    ),
    Case(
        "a known type with a wrong field",
        _insert_at(3, b'{"seq":4,"ts":"t","type":"usage","inputTokens":"many","outputTokens":1}\n'),
        3,
        "corrupt",
        "does not fit format 1",
        4,
    ),
    Case("JSON that is not an object", _insert_at(3, b"[4]\n"), 3, "corrupt", "not an object", 4),
]


@dataclass(frozen=True)
class Outcome:
    events: int | None
    outcome: str
    text: str  # the reason or the error
    log_exit: int
    log_output: str


def _without_root_powers() -> None:
    """In the child, before exec: drop the capabilities that let root read any file (PR_CAPBSET_DROP)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _as_user(args: list[str], *, cwd: Path, plain: bool) -> subprocess.CompletedProcess[str]:
    """Run a child; with `plain`, as root without its power to read every file (a user is never root)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    drop = _without_root_powers if plain and os.geteuid() == 0 else None
    return subprocess.run(
        args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, preexec_fn=drop
    )


def measure(case: Case, folder: Path) -> Outcome:
    path = case.build(folder)
    if case.as_user and os.geteuid() == 0:
        # root reads anything: ask a child without that power what read_events says
        probe = (
            "import sys\nfrom wren_tui.journal.reader import read_events\n"
            "try:\n read_events(sys.argv[1])\nexcept Exception as e:\n print(e)"
        )
        text = _as_user([sys.executable, "-c", probe, str(path)], cwd=folder, plain=True).stdout.strip()
        events, outcome = None, "refused"
    else:
        try:
            result = read_events(path)
        except JournalError as exc:
            events, outcome, text = None, "refused", str(exc)
        else:
            events = len(result.events)
            outcome = "whole" if result.ok else "torn" if result.torn else "corrupt"
            text = str(result.stop) if result.stop else "; ".join(result.warnings)
    log = _as_user([sys.executable, "-m", "wren_tui", "log", str(path)], cwd=folder, plain=case.as_user)
    last = (log.stdout.strip().splitlines() or [""])[-1] if log.returncode == 4 else log.stderr.strip()
    return Outcome(events, outcome, text, log.returncode, last)


def _bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it is not a regular file we can read (missing, folder, symlink)."""
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


@dataclass(frozen=True)
class Resumed:
    exit: int
    stdout: str
    stderr: str
    before: bytes | None  # the journal's bytes before and after resume (None: not a regular file)
    after: bytes | None
    torn: bytes | None  # what resume set aside in <name>.torn, if anything


def measure_resume(case: Case, folder: Path, workspace: Path, message: str | None = RESUME_MESSAGE) -> Resumed:
    """`wren resume --yes --dir FOLDER --workspace WS ID [MESSAGE]` in a fresh demo workspace, as a user types it.

    The journals record a workspace that does not exist here, so the fresh one is named.
    """
    path = case.build(folder)
    prepare_workspace(workspace)
    before = _bytes(path)
    args = [sys.executable, "-m", "wren_tui", "resume", "--yes", "--dir", str(folder), "--workspace", str(workspace)]
    args.append(path.stem)
    proc = _as_user([*args, *([message] if message else [])], cwd=workspace, plain=case.as_user)
    torn = path.with_name(path.name + ".torn")
    return Resumed(proc.returncode, proc.stdout, proc.stderr, before, _bytes(path), _bytes(torn))


@dataclass(frozen=True)
class Viewed:
    events: int
    integrity: str | None  # the status line's "stopped at line N: reason"
    status: str  # the status line as shown
    screen: str
    crash: str | None  # the exception that ended the app, if one did
    before: bytes | None
    after: bytes | None
    names: list[str]  # the folder's entries afterwards


async def _view(path: Path) -> tuple[int, str | None, str, str]:
    app = WrenApp(folder=path.parent, session=path, clock=FixedClock(datetime(2026, 1, 1, 0, 1, tzinfo=UTC)))
    async with app.run_test(size=(140, 40)) as pilot:

        def settled() -> bool:
            # The first read happens on mount; a long journal is then indexed in the background ("busy").
            lines = app.screen.query(StatusLine)
            return bool(lines) and bool(lines.first().status.session) and lines.first().status.busy is None

        await wait_for(pilot, settled, "the status line to show the journal read")
        await pilot.pause()
        line = app.screen.query_one(StatusLine)
        return line.status.events, line.status.integrity, str(line.render()), screen_text(app)


def view(path: Path) -> tuple[int, str | None, str, str]:
    """The viewer's session screen on `path` through Pilot: events, integrity, status line, screen text."""
    return asyncio.run(_view(path))


def measure_viewer(case: Case, folder: Path) -> Viewed:
    path = case.build(folder)
    before = _bytes(path)
    crash = None
    events, integrity, status, screen = 0, None, "", ""
    if case.as_user and os.geteuid() == 0:
        # root reads anything: the viewer runs in a child without that power and reports as JSON
        child = _as_user(
            [sys.executable, "-m", "tests.reliability.bad_inputs", "--view", str(path)], cwd=REPO, plain=True
        )
        if child.returncode != 0:
            crash = child.stderr.strip()[-2000:]
        else:
            got = json.loads(child.stdout.strip().splitlines()[-1])
            events, integrity, status, screen = got["events"], got["integrity"], got["status"], got["screen"]
    else:
        try:
            events, integrity, status, screen = view(path)
        except Exception as exc:  # the table records a crash; the tests fail on it
            crash = f"{type(exc).__name__}: {exc}"
    names = sorted(p.name for p in folder.iterdir())
    return Viewed(events, integrity, status, screen, crash, before, _bytes(path), names)


def _cell(text: str, tmp: str) -> str:
    text = re.sub(re.escape(tmp) + r"/(log|resume|view|workspace)", "DIR", text)
    return " ".join(text.replace("|", "\\|").split())[:110] or "-"


def _resume_cell(got: Resumed) -> str:
    if got.exit != 0:
        return f"{got.exit}: {got.stderr.strip().removeprefix('wren: ')}"
    first = (got.stdout.strip().splitlines() or [""])[0]
    kept = (
        got.before is not None
        and got.after is not None
        and got.after.startswith(got.before.removesuffix(got.torn or b""))
    )
    aside = f"; {len(got.torn)} B set aside in .torn" if got.torn is not None else ""
    wrote = (
        f"; {len(got.after or b'') - len(got.before or b'') + len(got.torn or b'')} B appended"
        if got.after != got.before
        else "; nothing written"
    )
    return f"0: {first}{aside}{wrote}{'' if kept else '; PREFIX CHANGED'}"


def _viewer_cell(got: Viewed) -> str:
    if got.crash is not None:
        return f"CRASH: {got.crash.splitlines()[-1]}"
    same = "" if got.before == got.after else "; FILE CHANGED"
    return f"{got.events} events{'; ' + got.integrity if got.integrity else ''}{same}"


def table() -> str:
    rows = [
        "| input | read_events: events, outcome, reason | `wren log`: exit, last words"
        " | `wren resume ID MESSAGE`: exit, words | viewer: status line |",
        "| --- | --- | --- | --- | --- |",
    ]
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            got = measure(case, _fresh(Path(tmp) / "log"))
            resumed = measure_resume(case, _fresh(Path(tmp) / "resume"), Path(tmp) / "workspace")
            viewed = measure_viewer(case, _fresh(Path(tmp) / "view"))
            events = "-" if got.events is None else str(got.events)
            rows.append(
                f"| {case.name} | {events}, {got.outcome}: {_cell(got.text, tmp)} "
                f"| {got.log_exit}: {_cell(got.log_output, tmp)} "
                f"| {_cell(_resume_cell(resumed), tmp)} | {_cell(_viewer_cell(viewed), tmp)} |"
            )
    return "\n".join(rows)


def _fresh(folder: Path) -> Path:
    folder.mkdir(parents=True)
    return folder


if __name__ == "__main__":
    if sys.argv[1:2] == ["--view"]:
        events, integrity, status, screen = view(Path(sys.argv[2]))
        print(json.dumps({"events": events, "integrity": integrity, "status": status, "screen": screen}))
    else:
        print(table())
