"""What a program loads with the journal: only the modules of the names it asks for.

A command that only finds journals (a warm `wren search`, `wren ls` of another agent: `journals_dir`,
`journal_paths`, `resolve`, `project_label`, a `Stop` or a `JournalError`) loads no reader, no event type and
no msgspec, nor datetime or zlib; `describe_session` and `list_sessions` load them when they read a journal,
`parse_ts` datetime and `starts_as_journal` the framing. Each check runs in a
fresh interpreter, as a command starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.journal.helpers import write_journal
from wren_tui.journal import RunEnd, RunStart

# What finding journals never needs: the reader and what it stands on, the event types and their decoder, the
# open calls, the locks, the conversation's replay, the code that writes.
READING = (
    "msgspec",
    "wren_tui.journal.reader",
    "wren_tui.journal._fastpath",
    "wren_tui.journal._lines",
    "wren_tui.journal.events",
    "wren_tui.journal.calls",
    "wren_tui.journal.locks",
    "wren_tui.journal.replay",
    "wren_tui.journal.writer",
    "wren_tui.journal.forking",
)


def _loaded_after(code: str, cwd: Path) -> tuple[list[str], str]:
    """The modules of READING loaded after `code` runs in a fresh interpreter, and what it printed."""
    program = f"import json, sys\n{code}\nprint(json.dumps(sorted(m for m in sys.modules if m in {READING!r})))\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, cwd=cwd)
    assert done.returncode == 0, done.stderr
    *said, loaded = done.stdout.splitlines()
    return json.loads(loaded), "\n".join(said)


def _journal(folder: Path, name: str) -> None:
    run = [RunStart(pid=1, cwd=str(folder), model="scripted", version="test"), RunEnd(reason="done")]
    write_journal(folder / f"{name}.jsonl", run)


def test_finding_journals_loads_no_reader_no_event_type_no_msgspec_and_no_datetime_zlib_or_unicodedata(
    tmp_path: Path,
) -> None:
    _journal(tmp_path, "s-20260101-000000-aaaa")
    _journal(tmp_path, "s-20260102-000000-bbbb")
    code = f"""
from pathlib import Path
from wren_tui.journal import errors, store, verdict
from wren_tui.journal.visible import visible
folder = Path({str(tmp_path)!r})
print(store.journals_dir(env={{"WREN_DIR": str(folder)}}) == folder)
print([p.name for p in store.journal_paths(folder)])
print(store.latest(folder).name, store.resolve(folder, "s-20260101-000000-aaaa").name)
print(store.project_label("/work/a\\x1bb", 40), visible("a\\x1b"), store.SUFFIX, store.DOCUMENT_SUFFIX)
try:
    store.resolve(folder, "s-20260103-000000-cccc")
except errors.SessionNotFound as exc:
    print(exc)
print(errors.JournalCorrupt(folder / "x.jsonl", verdict.Stop(line=3, offset=9, why="bad")))
# Nor datetime (a time is parsed only by parse_ts), nor zlib (the framing's CRC: starts_as_journal loads the framing),
# nor the Unicode tables (asked only of a character above ASCII in text that is not printable).
print([name for name in ("datetime", "zlib", "unicodedata") if name in sys.modules])
print(store.parse_ts("2026-01-01T00:00:00Z"), store.parse_ts("2026-01-01T00:00:00"), store.parse_ts("soon"))
print(store.starts_as_journal(store.latest(folder)), store.starts_as_journal(folder / "x.jsonl"))
"""
    loaded, said = _loaded_after(code, tmp_path)
    assert said.splitlines() == [
        "True",
        "['s-20260102-000000-bbbb.jsonl', 's-20260101-000000-aaaa.jsonl']",
        "s-20260102-000000-bbbb.jsonl s-20260101-000000-aaaa.jsonl",
        "/work/a␛b a␛ .jsonl .json",
        f"no session s-20260103-000000-cccc in {tmp_path}",
        f"{tmp_path / 'x.jsonl'}: line 3: bad. Nothing was written. Read it with `wren log`, then fork from a point "
        "before line 3 or move the file aside.",
        "[]",
        "2026-01-01 00:00:00+00:00 2026-01-01 00:00:00+00:00 None",
        "True False",
    ]
    assert loaded == []


def test_the_unicode_tables_are_loaded_by_the_first_text_that_needs_them_and_hide_the_same_characters(
    tmp_path: Path,
) -> None:
    code = """
from wren_tui.journal.visible import hidden_characters, visible, visible_text
lines = visible_text("a\\x1b[2J\\nb").split("\\n")
print(visible("café ok"), visible("tab\\there"), lines, "unicodedata" in sys.modules)
print(visible("zero\\u200bwidth, \\u202edesrever, caf\\u00e9\\t\\u00a0"), "unicodedata" in sys.modules)
print([hex(ord(c)) for c in hidden_characters("x\\u2028y\\u00adz\\U000e0041\\u00e9\\x07")])
"""
    _, said = _loaded_after(code, tmp_path)
    assert said.splitlines() == [
        "café ok tab    here ['a␛[2J', 'b'] False",
        "zero<U+200B>width, <U+202E>desrever, café    \u00a0 True",
        "['0x2028', '0xad', '0xe0041', '0x7']",
    ]


def test_a_wren_command_line_loads_its_quoting_only_when_one_is_made(tmp_path: Path) -> None:
    code = f"""
from pathlib import Path
from wren_tui.journal.commandline import wren_command
print("shlex" in sys.modules)
print(wren_command("log", "it's", folder=Path({str(tmp_path)!r}), tail="MESSAGE"), "shlex" in sys.modules)
"""
    _, said = _loaded_after(code, tmp_path)
    assert said.splitlines() == ["False", f"wren log --dir {tmp_path} 'it'\"'\"'s' MESSAGE True"]


def test_listing_journals_loads_the_reader_when_it_reads_them(tmp_path: Path) -> None:
    _journal(tmp_path, "s-20260101-000000-aaaa")
    code = f"""
from pathlib import Path
from wren_tui.journal.store import list_sessions
print([(row.id, row.state, row.events, row.project) for row in list_sessions(Path({str(tmp_path)!r}))])
"""
    loaded, said = _loaded_after(code, tmp_path)
    assert said == f"[('s-20260101-000000-aaaa', 'done', 2, {str(tmp_path)!r})]"
    assert {"msgspec", "wren_tui.journal.reader", "wren_tui.journal.events", "wren_tui.journal.locks"} <= set(loaded)
    assert "wren_tui.journal.writer" not in loaded


def test_the_package_alone_loads_no_submodule_and_a_name_loads_only_its_own(tmp_path: Path) -> None:
    code = """
import wren_tui.journal
print(sorted(m for m in sys.modules if m.startswith("wren_tui.journal")))
from wren_tui.journal import JournalError, Stop, journals_dir, visible_text
print(JournalError.__module__, Stop.__module__, journals_dir.__module__, visible_text("a\\x07"))
"""
    loaded, said = _loaded_after(code, tmp_path)
    assert said.splitlines() == [
        "['wren_tui.journal']",
        "wren_tui.journal.errors wren_tui.journal.verdict wren_tui.journal.store a␇",
    ]
    assert loaded == []


def test_replay_and_visible_stay_the_functions_when_their_modules_are_imported_first(tmp_path: Path) -> None:
    # Each is a function of the submodule of the same name: importing that submodule first must not make the
    # package's name the module.
    code = """
from wren_tui.journal.visible import visible_lines
from wren_tui.journal.replay import Replayer
import wren_tui.journal.visible
from wren_tui.journal import replay, visible
import wren_tui.journal as journal
print(type(replay).__name__, type(visible).__name__, type(journal.replay).__name__, visible("a\\x1b"))
print(replay([]).messages, Replayer is journal.Replayer, visible_lines("x\\ny"))
"""
    _, said = _loaded_after(code, tmp_path)
    assert said.splitlines() == ["function function function a␛", "[] True ['x', 'y']"]


def test_a_state_asked_first_loads_what_it_needs(tmp_path: Path) -> None:
    # The viewer asks `state_of` of a journal it read itself: no `describe_session` has loaded the event types before.
    code = """
from wren_tui.journal import store
from wren_tui.journal.events import Fork, RunEnd, RunStart
from wren_tui.journal.verdict import Stop
def state(last_run, stop=None, live=False):
    return store.state_of(stop, live=lambda: live, empty=False, uncertain=lambda: False, last_run=last_run)
start = RunStart(pid=1, cwd="/", model="m", version="v")
print(state(RunEnd(reason="cancelled")), state(Fork(from_="s-1", at_seq=3)), state(start))
torn, bad = Stop(line=2, offset=5, why="cut", torn=True), Stop(line=2, offset=5, why="bad")
print(state(None, torn), state(None, live=True), state(None, bad))
"""
    _, said = _loaded_after(code, tmp_path)
    assert said.splitlines() == ["cancelled forked interrupted", "torn tail live corrupt"]


def test_a_run_mark_is_a_run_start_a_run_end_or_a_fork_when_imported_from_the_store(tmp_path: Path) -> None:
    # `RunMark` is made when first asked for (the store loads no event type): the same union as the type checker's.
    code = """
from wren_tui.journal.store import RunMark
from wren_tui.journal.events import ChatMessage, Fork, Message, RunEnd, RunStart
print(RunMark == RunStart | RunEnd | Fork, isinstance(RunEnd(reason="done"), RunMark))
print(isinstance(Message(message=ChatMessage(role="user", content="hi")), RunMark))
"""
    _, said = _loaded_after(code, tmp_path)
    assert said.splitlines() == ["True True", "False"]
