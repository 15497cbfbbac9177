"""The journals folder: session ids that never escape it, listing newest first with each journal's state."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.journal.helpers import framed, session_events, write_journal
from wren_tui.journal.events import ChatMessage, Delta, KnownEvent, Message, RunEnd, RunStart
from wren_tui.journal.locks import lock_holder
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import (
    WHOLE_UNDER,
    SessionNotFound,
    describe_session,
    is_session_id,
    journals_dir,
    latest,
    latest_of_project,
    list_sessions,
    new_session_id,
    resolve,
)
from wren_tui.journal.writer import JournalWriter


def test_session_ids_sort_by_their_utc_time() -> None:
    early = new_session_id(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    late = new_session_id(datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC))
    assert early.startswith("s-20260102-030405-") and is_session_id(early)
    assert sorted([late, early]) == [early, late]


@pytest.mark.parametrize(
    "ref",
    [
        "../s-20260101-000000-abcd",
        "s-20260101-000000-abcd/../../etc/passwd",
        "s-20260101-000000-ab\x00d",
        "/etc/passwd",
        "s-20260101-000000-ABCD",
        "passwd",
    ],
)
def test_references_that_are_not_a_journal_in_the_folder_are_refused(tmp_path: Path, ref: str) -> None:
    with pytest.raises(SessionNotFound):
        resolve(tmp_path, ref)


def test_a_symlinked_journal_path_is_refused(tmp_path: Path) -> None:
    write_journal(tmp_path / "real.jsonl")
    (tmp_path / "s-20260101-000000-abcd.jsonl").symlink_to(tmp_path / "real.jsonl")
    with pytest.raises(SessionNotFound, match="symbolic link"):
        resolve(tmp_path, str(tmp_path / "s-20260101-000000-abcd.jsonl"))


def test_an_id_and_a_path_resolve_to_the_same_journal(tmp_path: Path) -> None:
    path = tmp_path / "s-20260101-000000-abcd.jsonl"
    write_journal(path)
    assert resolve(tmp_path, "s-20260101-000000-abcd") == path
    assert resolve(tmp_path, str(path)) == path


def test_the_folder_is_the_option_then_wren_dir_then_the_state_folder_outside_the_workspace(tmp_path: Path) -> None:
    assert journals_dir("x", env={"WREN_DIR": "/y"}, cwd=tmp_path) == tmp_path / "x"
    assert journals_dir(None, env={"WREN_DIR": "/y"}, cwd=tmp_path) == Path("/y")
    state = {"XDG_STATE_HOME": "/s", "HOME": "/h"}
    assert journals_dir(None, env=state, cwd=tmp_path) == Path("/s/wren/journals")
    assert journals_dir(None, env={"HOME": "/h"}, cwd=tmp_path) == Path("/h/.local/state/wren/journals")
    # A relative XDG_STATE_HOME is ignored, as the XDG spec says.
    assert journals_dir(None, env={"XDG_STATE_HOME": "s", "HOME": "/h"}, cwd=tmp_path) == Path(
        "/h/.local/state/wren/journals"
    )


def _journal(folder: Path, name: str, events: int | None = None, tail: bytes = b"") -> Path:
    path = folder / f"s-2026010{name}-000000-abcd.jsonl"
    write_journal(path, session_events()[:events] if events is not None else None)
    with open(path, "ab") as f:
        f.write(tail)
    return path


def test_listing_is_newest_first_with_each_state(tmp_path: Path) -> None:
    _journal(tmp_path, "1")  # ends with run_end
    _journal(tmp_path, "2", events=5)  # a side-effecting call started, never answered
    _journal(tmp_path, "3", events=2)  # the user asked, nothing more
    _journal(tmp_path, "4", tail=b'{"seq":14')
    _journal(tmp_path, "5", tail=b"garbage\n" + session_events()[0].__class__.__name__.encode() + b"\n")
    (tmp_path / "s-20260106-000000-abcd.jsonl").touch()
    (tmp_path / "notes.txt").write_text("not a journal")
    rows = list_sessions(tmp_path)
    assert [(r.id[2:10], r.state) for r in rows] == [
        ("20260106", "empty"),
        ("20260105", "corrupt"),
        ("20260104", "torn tail"),
        ("20260103", "interrupted"),
        ("20260102", "outcome unknown"),
        ("20260101", "done"),
    ]
    done = rows[-1]
    assert done.events == 13 and done.tokens == 1240 and done.duration_s is not None
    assert rows[1].reason is not None and rows[1].reason.startswith("line 14:")
    # The stop in its parts, as the reader gave it, for whoever needs more than the sentence.
    corrupt, torn = rows[1].stop, rows[2].stop
    assert corrupt is not None and str(corrupt) == rows[1].reason and (corrupt.line, corrupt.torn) == (14, False)
    assert torn is not None and str(torn) == rows[2].reason and (torn.line, torn.torn) == (14, True)
    assert all(r.stop is None for r in rows[3:]) and rows[0].stop is None
    assert latest(tmp_path) == tmp_path / "s-20260106-000000-abcd.jsonl"


def test_a_journal_with_a_writer_is_live_and_names_its_pid(tmp_path: Path) -> None:
    path = tmp_path / "s-20260101-000000-abcd.jsonl"
    assert not path.exists()
    with JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="hi")))
        assert lock_holder(path) == os.getpid()
        assert describe_session(path).state == "live"
    assert lock_holder(path) is None
    assert describe_session(path).state == "interrupted"


def test_a_journal_with_an_odd_ts_still_lists(tmp_path: Path) -> None:
    path = tmp_path / "s-20260101-000000-abcd.jsonl"
    path.write_bytes(framed(b'{"seq":1,"ts":"yesterday","type":"message","message":{"role":"user","content":"hi"}}\n'))
    info = describe_session(path)
    assert info.events == 1 and info.duration_s is None


def _big(folder: Path, name: str, tail_events: list[KnownEvent]) -> Path:
    """A journal over the whole-read size: a long middle of deltas, then `tail_events`."""
    path = folder / f"s-2026010{name}-000000-abcd.jsonl"
    with JournalWriter.create(path, fsync="none") as writer:
        for event in session_events()[:2]:
            writer.append(event)
        while writer.size <= WHOLE_UNDER:
            writer.append(Delta(text="streamed text " * 8))
        for event in tail_events:
            writer.append(event)
    return path


def test_a_big_journal_is_listed_from_its_head_and_tail(tmp_path: Path) -> None:
    done = _big(tmp_path, "1", session_events()[2:])
    unknown = _big(tmp_path, "2", session_events()[2:5])
    rows = {r.path: r for r in list_sessions(tmp_path)}
    assert rows[done].state == "done" and rows[unknown].state == "outcome unknown"
    last = read_events(done).events[-1]
    assert rows[done].events == last.seq and not rows[done].exact
    assert rows[done].tokens == 1240 and rows[done].started == read_events(done).events[0].ts


def test_a_big_journal_with_a_damaged_end_is_read_whole_to_say_why(tmp_path: Path) -> None:
    torn = _big(tmp_path, "1", session_events()[2:])
    with open(torn, "ab") as f:
        f.write(b'{"seq":')
    corrupt = _big(tmp_path, "2", session_events()[2:])
    with open(corrupt, "ab") as f:
        f.write(b"garbage\n")
    rows = {r.path: r for r in list_sessions(tmp_path)}
    assert (rows[torn].state, rows[torn].exact) == ("torn tail", True)
    assert rows[corrupt].state == "corrupt" and rows[corrupt].reason is not None
    assert rows[corrupt].reason.endswith("it is not JSON") and rows[corrupt].exact


def test_a_fork_never_resumed_is_listed_as_forked_and_as_its_run_ended_once_resumed(tmp_path: Path) -> None:
    import json

    from tests.conftest import run_wren

    parent = _journal(tmp_path, "1")
    made = run_wren(["fork", "--dir", str(tmp_path), parent.stem, "2"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    [fork] = [p for p in tmp_path.glob("s-*.jsonl") if p != parent]
    table = run_wren(["ls", "--dir", str(tmp_path)], cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    row = next(line for line in table.stdout.splitlines() if line.startswith(fork.stem))
    assert " forked " in row and f"{parent.stem}@2" in row and " done " not in row
    rows = json.loads(run_wren(["ls", "--dir", str(tmp_path), "--json"], cwd=tmp_path).stdout)
    assert {r["id"]: r["state"] for r in rows} == {fork.stem: "forked", parent.stem: "done"}
    # Resumed, its own run says how it stands.
    with JournalWriter.open(fork, fsync="none") as writer:
        writer.append(RunStart(pid=os.getpid(), cwd="/work/demo", model="scripted", version="test", resumed=True))
        writer.append(RunEnd(reason="cancelled"))
    assert describe_session(fork).state == "cancelled"


def test_ls_on_a_terminal_gives_up_lesser_columns_to_fit_its_width_and_piped_prints_them_all(tmp_path: Path) -> None:
    from tests.agent.tty import Tty
    from tests.conftest import run_wren

    parent = _journal(tmp_path, "1")
    _journal(tmp_path, "2", events=5)
    assert run_wren(["fork", "--dir", str(tmp_path), parent.stem, "2"], cwd=tmp_path).returncode == 0
    columns = {"COLUMNS": "100", "LINES": "40"}
    piped = run_wren(["ls", "--dir", str(tmp_path)], cwd=tmp_path, env=columns)
    assert piped.returncode == 0, piped.stderr
    header, *rows = piped.stdout.splitlines()
    assert header.split() == ["ID", "STARTED", "EVENTS", "DURATION", "TOKENS", "STATE", "PROJECT", "FORKED", "FROM"]
    assert len(rows) == 3 and all(len(line) > 100 for line in rows)  # as before: every column, for scripts
    tty = Tty(["ls", "--dir", str(tmp_path)], tmp_path, columns)
    try:
        assert tty.finish() == 0, tty.text()
    finally:
        tty.kill()
    header, *rows = tty.text().splitlines()
    assert header.split() == ["ID", "EVENTS", "STATE", "FORKED", "FROM"]  # the viewer's lesser columns gave way
    assert len(rows) == 3 and all(len(line) <= 100 for line in [header, *rows])
    forked = next(line for line in rows if " forked " in line)
    assert forked.endswith(f"{parent.stem}@2") and any(" outcome unknown" in line for line in rows)


def test_ls_marks_the_tokens_of_a_big_journal_as_approximate(tmp_path: Path) -> None:
    from tests.conftest import run_wren

    _big(tmp_path, "1", session_events()[2:])
    proc = run_wren(["ls", "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "~1240" in proc.stdout and "done" in proc.stdout


def test_the_latest_session_is_the_newest_and_a_projects_latest_the_newest_whose_last_run_worked_there(
    tmp_path: Path,
) -> None:
    older, newer = tmp_path / "s-20260101-000000-abcd.jsonl", tmp_path / "s-20260102-000000-abcd.jsonl"
    write_journal(older, [RunStart(pid=1, cwd="/work/demo", model="scripted", version="test"), RunEnd(reason="done")])
    write_journal(newer, [RunStart(pid=1, cwd="/work/other", model="scripted", version="test"), RunEnd(reason="done")])
    assert latest(tmp_path) == newer
    assert latest_of_project(tmp_path, Path("/work/demo")) == older
    assert latest_of_project(tmp_path, Path("/work/other")) == newer
    with pytest.raises(SessionNotFound, match="no session of /work/none in"):
        latest_of_project(tmp_path, Path("/work/none"))
    empty = tmp_path / "empty"
    empty.mkdir()
    for newest in (lambda: latest(empty), lambda: latest_of_project(empty, Path("/work/demo"))):
        with pytest.raises(SessionNotFound, match="no sessions in"):
            newest()


def _ls_on_a_terminal_of_100(folder: Path, project: str) -> tuple[str, list[str]]:
    """`wren ls` in a pty 100 columns wide over two journals, one of `project` and one of /work/plain: its header and
    its rows."""
    from tests.agent.tty import Tty

    for n, cwd in (("1", project), ("2", "/work/plain")):
        write_journal(
            folder / f"s-2026010{n}-000000-abcd.jsonl",
            [RunStart(pid=1, cwd=cwd, model="scripted", version="test"), RunEnd(reason="done")],
        )
    tty = Tty(["ls", "--dir", str(folder)], folder, {"COLUMNS": "100", "LINES": "40"})
    try:
        assert tty.finish() == 0, tty.text()
    finally:
        tty.kill()
    header, *rows = tty.text().splitlines()
    return header, rows


def test_ls_on_a_terminal_measures_wide_characters_as_two_cells_and_keeps_its_columns_aligned(tmp_path: Path) -> None:
    from rich.cells import cell_len

    header, rows = _ls_on_a_terminal_of_100(tmp_path, "/work/数据分析项目")
    assert len(rows) == 2 and all(cell_len(line) <= 100 for line in [header, *rows])
    assert "PROJECT" in header  # 92 cells: the project column fits, counted in cells
    wide = next(line for line in rows if "数据" in line)
    plain = next(line for line in rows if "plain" in line)
    # The project is padded to its column's cells, so the column after it starts at the same cell in both rows.
    assert cell_len(wide) == cell_len(plain) == header.index("FORKED FROM")


def test_ls_on_a_terminal_cuts_a_project_of_wide_characters_to_its_columns_cells_and_keeps_the_columns_aligned(
    tmp_path: Path,
) -> None:
    # 24 characters (under the column's 28) that take 42 cells: cut by characters alone, it pushed the next column out.
    from rich.cells import cell_len

    header, rows = _ls_on_a_terminal_of_100(tmp_path, "/work/" + "数据分析项目" * 3)
    assert len(rows) == 2 and "PROJECT" in header
    wide = next(line for line in rows if "数据" in line)
    plain = next(line for line in rows if "plain" in line)
    assert cell_len(wide) == cell_len(plain) == header.index("FORKED FROM")
    assert "…" in wide and wide.rstrip().endswith("分析项目")  # its tail kept, as a long project's is
