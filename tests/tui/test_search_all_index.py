"""The browsers' `/` answered from the index `wren search` keeps, through Pilot: the CLI's hits, as they come.

The index is built by `wren search` (a subprocess, as a person runs it); the viewer reads it as the
full-text table gives its rows (`search/streamed.py`). What the browser lists must be what `wren
search --no-index --json` prints, in its order, whether each file is answered from the index in
order, asked for alone (indexed again since: a cursor allowed no time to read on), grown since it
was indexed (its new lines read from the file), or damaged (the stop said after its hits). The other
agents' browser (`wren watch --agent claude`) gets the same `/`. And the first hit is on screen while
the rest of the sessions are still being searched.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session
from tests.tui.conftest import folder_app, search_every_session, shown_results, wait_for, wait_for_text
from tests.tui.journals import encode, finished_story, user, write_journal
from wren_tui.cli.foreign import agents_browser
from wren_tui.search import streamed
from wren_tui.search.engine import Found, Hit
from wren_tui.search.index import index_path
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens import results as results_module
from wren_tui.tui.screens.results import SearchResults
from wren_tui.tui.screens.session_list import SessionList

WORD = "parrot"


def _journals(folder: Path) -> None:
    """Six journals, the word in four; one damaged after its hits (a digit of line 5 changed: its CRC fails)."""
    for n in range(6):
        said = [user(f"the {WORD} number {n} spoke")] if n % 3 else [user(f"nothing here {n}")]
        write_journal(folder / f"s-2025030{n + 1}-100000-{n:04d}.jsonl", [*said, *finished_story()[:6], *said])
    damaged = folder / "s-20250303-100000-0002.jsonl"
    lines = damaged.read_bytes().splitlines(keepends=True)
    digit = lines[4][-4:-3]
    lines[4] = lines[4][:-4] + (b"1" if digit == b"0" else b"0") + lines[4][-3:]
    damaged.write_bytes(b"".join(lines))


def _append(path: Path, text: str) -> None:
    seq = len(path.read_bytes().splitlines()) + 1
    with path.open("ab") as out:
        out.write(encode([user(text)], first_seq=seq))


def _cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    done = run_wren(["search", WORD, "--json", "--agent", "wren", *args], cwd=cwd, env=env)
    assert done.returncode in (0, 1), done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _expected(rows: list[dict[str, object]]) -> list[str]:
    """The results list's lines as the CLI's rows say them: session and place, or the stop."""
    said = []
    for row in rows:
        if row["type"] == "hit":
            place = f"#{row['seq']}" if row["agent"] == "wren" else f"line {row['line']}"
            said.append(f"{row['session']} {place}")
        elif not row["torn"]:
            said.append(f"{row['session']}: reading stops at line {row['stoppedAtLine']}")
    return said


def _shown(results: SearchResults) -> list[str]:
    lines = []
    for option in results.query_one(OptionList).options:
        text = str(option.prompt)
        if ": reading stops" in text:
            lines.append(text.split(":")[0] + ": reading stops at line " + text.split("line ")[1].split(":")[0])
        else:
            session, place = text.split()[:2]
            lines.append(f"{session} {place}" if place.startswith("#") else f"{session} line {text.split()[2]}")
    return lines


async def _search(pilot: Pilot[object], app: WrenApp, rows: int) -> SearchResults:
    browser = app.screen
    assert isinstance(browser, SessionList)
    await wait_for(pilot, lambda: browser.table.rows.row_count == rows, f"{rows} sessions listed")
    return await search_every_session(pilot, app, WORD)


@pytest.mark.parametrize("read_on", [streamed.READ_ON, 0.0], ids=["cursor", "each-file-alone"])
@pytest.mark.parametrize("word", [WORD, f"the {WORD} number"], ids=["trigrams", "word-pairs"])
async def test_the_browser_lists_the_clis_hits_answered_from_the_index_as_its_rows_come(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_on: float, word: str
) -> None:
    """A word is asked of the trigram table; whole words two by two of the pair table (both as `wren search`)."""
    monkeypatch.setattr("tests.tui.test_search_all_index.WORD", word)
    folder = tmp_path / "journals"
    _journals(folder)
    _cli(["--dir", str(folder)], tmp_path)  # builds the index
    # Indexed again after one more line: its new items come last in the index, after every other file's.
    _append(folder / "s-20250305-100000-0004.jsonl", f"a {WORD} again, indexed")
    _cli(["--dir", str(folder)], tmp_path)
    # Grown since: the index answers up to where it read, the new line is read from the file.
    _append(folder / "s-20250302-100000-0001.jsonl", f"a {WORD} appended, not indexed")
    assert index_path(folder).is_file()
    truth = _cli(["--dir", str(folder), "--no-index"], tmp_path)
    expected = _expected(truth)
    hits = sum(row["type"] == "hit" for row in truth)
    assert hits == 9 and any("reading stops" in line for line in expected)

    monkeypatch.setattr(streamed, "READ_ON", read_on)
    app = folder_app(folder)
    async with app.run_test(size=(160, 40)) as pilot:
        results = await _search(pilot, app, 6)
        assert _shown(results) == expected
        await wait_for_text(pilot, f"{hits} matches in 6 sessions")
        await wait_for_text(pilot, "1 read only in part")


async def test_the_other_agents_browser_searches_its_sessions_from_the_index_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, journals = tmp_path / "claude", tmp_path / "journals"
    projects = config / "projects" / "-work-demo"
    for n, age in enumerate((7200, 3600, 60)):
        copy_session("claude", "multi-turn", projects, age_s=age, stem=f"0000000{n}-0000-4000-8000-000000000000")
    journals.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config), "WREN_DIR": str(journals)}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    word = "the"
    done = run_wren(["search", word, "--agent", "claude", "--json"], cwd=tmp_path, env=env)  # builds the index
    assert done.returncode == 0, done.stderr
    assert index_path(journals).is_file()
    truth = run_wren(["search", word, "--agent", "claude", "--json", "--no-index"], cwd=tmp_path, env=env)
    expected = _expected([json.loads(line) for line in truth.stdout.splitlines()])
    assert len(expected) == 3  # one in each session

    monkeypatch.setattr("tests.tui.test_search_all_index.WORD", word)
    app = agents_browser(argparse.Namespace(agent="claude", dir=None, poll=False))
    async with app.run_test(size=(200, 40)) as pilot:
        results = await _search(pilot, app, 3)
        assert _shown(results) == expected


async def test_the_first_hit_is_on_screen_while_the_other_sessions_are_still_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "journals"
    _journals(folder)
    _cli(["--dir", str(folder)], tmp_path)
    searching = results_module.search
    go_on = threading.Event()

    def held(*args: object, **kwargs: object) -> Iterator[Found]:
        """The search, stopped after its first hit until the test has seen it drawn."""
        for found in searching(*args, **kwargs):  # type: ignore[arg-type]
            yield found
            if isinstance(found, Hit):
                assert go_on.wait(10), "the test never saw the first hit"

    monkeypatch.setattr(results_module, "search", held)
    app = folder_app(folder)
    async with app.run_test(size=(160, 40)) as pilot:
        browser = app.screen
        assert isinstance(browser, SessionList)
        await wait_for(pilot, lambda: browser.table.rows.row_count == 6, "6 sessions listed")
        await pilot.press("/", *WORD, "enter")
        await wait_for(pilot, lambda: shown_results(app) is not None, "the results")
        results = browser.results
        await wait_for_text(pilot, f"the {WORD} number 5 spoke")
        assert not results.done and len(results.hits) == 1
        go_on.set()
        await wait_for(pilot, lambda: results.done, "the search to end")
        assert len(results.hits) == 7


@pytest.mark.parametrize("prepared", [streamed.PREPARED_SECONDS, 0.0], ids=["read-begun-at-slash", "too-old"])
async def test_the_index_written_between_slash_and_enter_still_gives_the_clis_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prepared: float
) -> None:
    """`/` begins the next search's read of the index; a journal grown, one new, and the index written again
    (by `wren search`) before Enter: the browser still lists what the CLI finds reading every file."""
    folder = tmp_path / "journals"
    _journals(folder)
    _cli(["--dir", str(folder)], tmp_path)
    monkeypatch.setattr(streamed, "PREPARED_SECONDS", prepared)
    app = folder_app(folder)
    async with app.run_test(size=(160, 40)) as pilot:
        browser = app.screen
        assert isinstance(browser, SessionList)
        await wait_for(pilot, lambda: browser.table.rows.row_count == 6, "6 sessions listed")
        await pilot.press("/")
        begun = threading.Event()
        assert browser._index is not None
        browser._index.run(begun.set)  # after the read `/` begins (one job after another)
        await wait_for(pilot, begun.is_set, "the read begun at /")

        _append(folder / "s-20250302-100000-0001.jsonl", f"a {WORD} appended after /")
        write_journal(folder / "s-20250307-100000-0006.jsonl", [user(f"a new {WORD} after /")])
        _cli(["--dir", str(folder)], tmp_path)  # the index written again, under the browser's read
        truth = _cli(["--dir", str(folder), "--no-index"], tmp_path)
        assert sum(row["type"] == "hit" for row in truth) == 9  # 7, the line appended and the new journal's
        await wait_for(pilot, lambda: browser.table.rows.row_count == 7, "7 sessions listed")

        await pilot.press(*WORD, "enter")
        await wait_for(pilot, lambda: shown_results(app) is not None, "the results")
        results = browser.results
        await wait_for(pilot, lambda: results.done, "the search to end")
        assert _shown(results) == _expected(truth)
