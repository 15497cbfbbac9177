"""`wren search` by file and by page, as a person runs it: `-l`, `--limit`, `--after`, `--all`, the count of the rest.

Each test runs the CLI as a separate process over journals built in tmp_path, with the index and without.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_wren
from tests.tui.journals import assistant, encode, user, write_journal
from wren_tui.journal.events import RunStart

START = datetime(2025, 3, 1, 9, 0, 0, tzinfo=UTC)
# Hits of "needle" in each session, oldest session first: 12 (more than a screenful), 3, none, 7, 1.
COUNTS = (12, 3, 0, 7, 1)
INDEX = pytest.mark.parametrize("index", [[], ["--no-index"]], ids=["index", "no-index"])


def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "journals"
    for n, count in enumerate(COUNTS):
        moment = START + timedelta(days=n)
        events = [RunStart(pid=7, cwd="/work/demo", model="scripted", version="0.1.0"), user("where is it?")]
        for k in range(count):
            events.append(assistant(f"hit {k} of session {n}: the needle is here"))
            events.append(user(f"nothing in {k}"))
        path = write_journal(folder / f"s-2025030{n + 1}-090000-s{n:03d}.jsonl", events, start=moment)
        os.utime(path, (moment.timestamp(), moment.timestamp()))
    return folder


def wren(tmp_path: Path, *args: str) -> Any:
    return run_wren(["search", "needle", "--dir", str(tmp_path / "journals"), *args], cwd=tmp_path)


def rows(result: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def cursor_on_stderr(result: Any) -> str | None:
    said = [line for line in result.stderr.splitlines() if line.startswith("next page: --after ")]
    assert len(said) <= 1, result.stderr
    return said[0].removeprefix("next page: --after ") if said else None


def is_heading(line: str) -> bool:
    return not line.startswith("  ")


@INDEX
@pytest.mark.parametrize("limit", [1, 4, 5, 23, 100])
def test_json_pages_put_together_are_every_hit_and_each_page_ends_with_its_cursor(
    tmp_path: Path, index: list[str], limit: int
) -> None:
    corpus(tmp_path)
    whole = wren(tmp_path, "--json", *index)
    assert whole.returncode == 0, whole.stderr
    every = rows(whole)
    assert len(every) == sum(COUNTS) and all(row["type"] == "hit" for row in every)
    pages: list[list[dict[str, Any]]] = []
    after: list[str] = []
    while True:
        page = wren(tmp_path, "--json", "--limit", str(limit), *after, *index)
        assert page.returncode == 0, page.stderr
        got = rows(page)
        pages.append([row for row in got if row["type"] == "hit"])
        assert len(pages[-1]) <= limit
        if got[-1]["type"] != "page":
            break
        assert [row["type"] for row in got[:-1]] == ["hit"] * limit  # a full page, then its cursor
        after = ["--after", got[-1]["after"]]
    assert [row for page in pages for row in page] == every
    assert len(pages) == -(-sum(COUNTS) // limit)
    ended = wren(tmp_path, "--json", "--limit", str(limit), *after, *index) if after else None
    assert ended is None or ended.returncode == 0  # the last page's own cursor still names that page


@INDEX
@pytest.mark.parametrize("every", [True, False], ids=["all", "first-of-each"])
def test_text_pages_put_together_are_the_search_in_one_go(tmp_path: Path, index: list[str], every: bool) -> None:
    corpus(tmp_path)
    shown = ["--all"] if every else []
    whole = wren(tmp_path, *shown, *index)
    assert whole.returncode == 0, whole.stderr
    assert cursor_on_stderr(whole) is None
    body: list[str] = []
    after: list[str] = []
    for _ in range(40):
        page = wren(tmp_path, *shown, "--limit", "3", *after, *index)
        assert page.returncode == 0, page.stderr
        lines = page.stdout.splitlines()
        assert is_heading(lines[0])  # a page that starts inside a session says which
        body += [line for line in lines if not is_heading(line)]
        cursor = cursor_on_stderr(page)
        if cursor is None:
            break
        after = ["--after", cursor]
    assert body == [line for line in whole.stdout.splitlines() if not is_heading(line)]


@INDEX
def test_a_session_shows_its_first_hits_and_a_count_of_the_rest_unless_all(tmp_path: Path, index: list[str]) -> None:
    corpus(tmp_path)
    result = wren(tmp_path, *index)  # a pipe, as here, gets what a terminal gets
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    headings = [at for at, line in enumerate(lines) if is_heading(line)]
    sessions = [lines[a + 1 : b] for a, b in zip(headings, [*headings[1:], len(lines)], strict=True)]
    more = "  … and {} more in this session; --all prints every hit"
    # Newest first: 1 hit, 7 (5 and 2 more), 3, 12 (5 and 7 more).
    assert [len(hits) for hits in sessions] == [1, 6, 3, 6]
    assert sessions[1][-1] == more.format(2) and sessions[3][-1] == more.format(7)
    assert "hit 4 of session 3" in sessions[1][4] and "hit 4 of session 0" in sessions[3][4]
    every = wren(tmp_path, "--all", *index).stdout.splitlines()
    assert len(every) == 4 + sum(COUNTS) and not any("more in this session" in line for line in every)


@INDEX
def test_files_with_matches_are_the_sessions_of_every_hit_each_once_as_a_path_wren_log_opens(
    tmp_path: Path, index: list[str]
) -> None:
    folder = corpus(tmp_path)
    every = rows(wren(tmp_path, "--json", *index))
    files = wren(tmp_path, "-l", *index)
    assert files.returncode == 0, files.stderr
    listed = files.stdout.splitlines()
    assert listed == list(dict.fromkeys(row["path"] for row in every))
    assert len(listed) == 4
    log = run_wren(["log", listed[0], "--dir", str(folder)], cwd=tmp_path)
    assert log.returncode == 0, log.stderr
    assert "the needle is here" in log.stdout
    as_json = rows(wren(tmp_path, "-l", "--json", *index))
    assert [(row["type"], row["path"]) for row in as_json] == [("session", path) for path in listed]
    # by page: two sessions, then the two others
    first = wren(tmp_path, "-l", "--limit", "2", *index)
    cursor = cursor_on_stderr(first)
    assert first.stdout.splitlines() == listed[:2] and cursor is not None
    second = wren(tmp_path, "-l", "--limit", "2", "--after", cursor, *index)
    assert second.stdout.splitlines() == listed[2:] and cursor_on_stderr(second) is None
    none = run_wren(["search", "absent", "-l", "--dir", str(folder), *index], cwd=tmp_path)
    assert none.returncode == 1 and none.stdout == ""


def test_files_with_matches_reads_a_session_no_further_than_its_first_hit(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    events = [RunStart(pid=7, cwd="/work/demo", model="scripted", version="0.1.0"), user("the needle, first")]
    events += [assistant(f"line {k}") for k in range(10)] + [user("the needle, after the damage")]
    lines = encode(events, start=START).splitlines(keepends=True)
    digit = lines[6][-4:-3]  # line 7 gets a wrong CRC: reading the whole file stops there, and says so
    lines[6] = lines[6][:-4] + (b"1" if digit == b"0" else b"0") + lines[6][-3:]
    folder.mkdir()
    path = folder / "s-20250301-090000-dmg0.jsonl"
    path.write_bytes(b"".join(lines))
    whole = run_wren(["search", "needle", "--no-index", "--dir", str(folder)], cwd=tmp_path)
    assert "reading stops at line 7" in whole.stdout
    files = run_wren(["search", "needle", "-l", "--no-index", "--dir", str(folder)], cwd=tmp_path)
    assert files.returncode == 0
    assert files.stdout.splitlines() == [str(path)]
    assert files.stderr == ""  # the damage after the first hit was never read


@INDEX
def test_files_with_matches_says_a_session_whose_reading_stopped_as_a_warning_and_lists_only_paths(
    tmp_path: Path, index: list[str]
) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    good = write_journal(folder / "s-20250302-090000-good.jsonl", [user("the needle, whole")], start=START)
    events = [RunStart(pid=7, cwd="/work/demo", model="scripted", version="0.1.0"), user("nothing yet")]
    events += [assistant(f"line {k}") for k in range(10)] + [user("the needle, after the damage")]
    lines = encode(events, start=START).splitlines(keepends=True)
    digit = lines[6][-4:-3]  # line 7 gets a wrong CRC: reading stops there, before the only needle
    lines[6] = lines[6][:-4] + (b"1" if digit == b"0" else b"0") + lines[6][-3:]
    damaged = folder / "s-20250301-090000-dmg1.jsonl"
    damaged.write_bytes(b"".join(lines))
    files = run_wren(["search", "needle", "-l", "--dir", str(folder), *index], cwd=tmp_path)
    assert files.returncode == 0
    assert files.stdout.splitlines() == [str(good)]  # paths alone: the stop is no line among them
    assert f"warning: {damaged}: reading stops at line 7" in files.stderr
    as_json = rows(run_wren(["search", "needle", "-l", "--json", "--dir", str(folder), *index], cwd=tmp_path))
    by_type = {row["type"]: row for row in as_json}
    assert len(as_json) == 2 and by_type["session"]["path"] == str(good)  # with --json the stop is a row of its own
    assert by_type["stopped"]["path"] == str(damaged) and by_type["stopped"]["stoppedAtLine"] == 7


@INDEX
@pytest.mark.parametrize("pattern", ["many lines does", "Many Lines", "lines does"])
def test_files_with_matches_lists_a_session_whose_first_candidate_is_not_a_hit(
    tmp_path: Path, index: list[str], pattern: str
) -> None:
    """The index reads each session's first candidate for -l: a session whose first candidate only shares the words
    (`many-lines, does`) and whose hit comes later is still listed, as without the index and as every hit's session."""
    folder = tmp_path / "journals"
    first = [user("many-lines, does it? Many-Lines"), assistant("many lines does, Many Lines")]  # candidate, hit
    plain = [assistant("many lines does, Many Lines")]  # its first candidate is its hit
    never = [user("many-lines, does it? Many-Lines")]  # candidates and no hit
    told = [user("many lines does, Many Lines"), *plain]  # its first hit is a user's: --role assistant leaves it out
    for n, said in enumerate((first, plain, never, [*never, *never, *first], told)):
        moment = START + timedelta(days=n)
        events = [RunStart(pid=7, cwd="/work/demo", model="scripted", version="0.1.0"), *said]
        path = write_journal(folder / f"s-2025030{n + 1}-090000-m{n:03d}.jsonl", events, start=moment)
        os.utime(path, (moment.timestamp(), moment.timestamp()))
    search = ["search", pattern, "--dir", str(folder), *index]
    every = list(dict.fromkeys(row["path"] for row in rows(run_wren([*search, "--json"], cwd=tmp_path))))
    files = run_wren([*search, "-l"], cwd=tmp_path)
    assert files.returncode == 0, files.stderr
    assert files.stdout.splitlines() == every
    assert [Path(path).name[-9:-6] for path in every] == ["004", "003", "001", "000"]
    by_role = run_wren([*search, "-l", "--role", "assistant"], cwd=tmp_path)  # a filter: a first hit is a user's
    assert by_role.stdout.splitlines() == every


def test_a_cursor_that_is_not_one_or_a_bad_limit_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    corpus(tmp_path)
    bad = wren(tmp_path, "--after", "not a cursor")
    assert bad.returncode == 2 and "is not a cursor a page printed" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    zero = wren(tmp_path, "--limit", "0")
    assert zero.returncode == 2 and "is not a number of hits" in zero.stderr
    page = rows(wren(tmp_path, "--json", "--limit", "2"))
    cursor = page[-1]["after"]
    for session in (tmp_path / "journals").glob("*s003.jsonl"):
        session.unlink()  # the second newest, where the cursor points
    gone = wren(tmp_path, "--json", "--after", cursor)
    assert gone.returncode == 2 and "is no longer among the sessions searched" in gone.stderr
