"""`wren search --regex` with patterns made to hurt: each ends in one sentence and exit 2, never a hang or a traceback.

Python's engine backtracks; once the search's matches have taken WREN_REGEX_SECONDS in all (on one text or
over many), the search stops.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.search.test_cli_search import folder_of_two
from tests.tui.journals import assistant, user, write_journal
from wren_tui.journal.events import RunStart

SESSION = "s-20250303-090000-aaaa"


def _folder_with_a_run_of_as(tmp_path: Path) -> Path:
    """The two sessions of the CLI tests, and a newer one whose reply is 40 a's and a b (with a hit before it)."""
    folder = folder_of_two(tmp_path)
    write_journal(
        folder / f"{SESSION}.jsonl",
        [
            RunStart(pid=7, cwd="/work/aaa", model="scripted", version="0.1.0"),
            user("print the a's"),
            assistant("a" * 40 + "b"),
        ],
        start=datetime(2025, 3, 3, 9, 0, 0, tzinfo=UTC),
    )
    return folder


def _one_sentence(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr[-2000:]
    assert result.stderr.startswith("wren: ")
    return result.stderr


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        pytest.param("a{99999999999}", "(a repeat count too large)", id="a huge repeat"),
        pytest.param("(" * 2000 + "a" + ")" * 2000, "(groups nested too deep)", id="2,000 nested groups"),
        pytest.param("(?:" * 30_000 + "a" + ")" * 30_000, "(groups nested too deep)", id="30,000 nested groups"),
        pytest.param("[" * 3000 + "a", "is not a valid regular expression", id="3,000 open brackets"),
    ],
)
def test_a_pattern_too_large_to_compile_is_one_sentence_and_exit_2(tmp_path: Path, pattern: str, says: str) -> None:
    folder = _folder_with_a_run_of_as(tmp_path)
    result = run_wren(["search", "--regex", pattern, "--dir", str(folder)], cwd=tmp_path, timeout=60)
    text = _one_sentence(result)
    assert says in text and result.stdout == ""
    assert len(text) < 400  # a 60,000-character pattern is quoted by its start


def test_a_catastrophic_pattern_stops_at_its_budget_with_one_sentence_and_exit_2(tmp_path: Path) -> None:
    folder = _folder_with_a_run_of_as(tmp_path)
    # On the newest session's 40 a's and a b it backtracks 2^40 ways.
    result = run_wren(
        ["search", "--regex", "(a+)+$|zerodivision", "--dir", str(folder), "--json"],
        cwd=tmp_path,
        env={"WREN_REGEX_SECONDS": "1"},
        timeout=60,
    )
    text = _one_sentence(result)
    assert "took more than 1 s" in text and "catastrophic backtracking" in text


def test_a_catastrophic_pattern_ends_even_with_the_default_budget(tmp_path: Path) -> None:
    folder = _folder_with_a_run_of_as(tmp_path)
    result = run_wren(["search", "--regex", "(a+)+$", "--dir", str(folder)], cwd=tmp_path, timeout=60)
    assert "took more than 5 s" in _one_sentence(result)


def test_a_regex_with_look_around_still_works_under_the_budget(tmp_path: Path) -> None:
    folder = _folder_with_a_run_of_as(tmp_path)
    result = run_wren(["search", "--regex", "(?<=a{3})b", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(h["session"], h["seq"]) for h in found] == [(SESSION, 3)]


def test_a_pattern_slow_on_each_of_many_texts_stops_at_the_whole_searchs_budget(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    # 40 texts of 28 a's and a b: (a|aa)+$ tries every way to split each run (a fifth of a second a text here),
    # under a budget of one second each but not in all.
    for n in range(4):
        texts = [assistant("a" * 28 + "b") for _ in range(10)]
        write_journal(folder / f"s-20250303-09000{n}-aaaa.jsonl", [user("print the a's"), *texts])
    result = run_wren(
        ["search", "--regex", "(a|aa)+$", "--dir", str(folder)], cwd=tmp_path, env={"WREN_REGEX_SECONDS": "1"}
    )
    text = _one_sentence(result)
    assert "took more than 1 s" in text and "catastrophic backtracking" in text and result.stdout == ""


def test_a_bad_budget_is_refused_only_for_a_regex(tmp_path: Path) -> None:
    folder = _folder_with_a_run_of_as(tmp_path)
    bad = {"WREN_REGEX_SECONDS": "soon"}
    result = run_wren(["search", "--regex", "a+b", "--dir", str(folder)], cwd=tmp_path, env=bad)
    assert "WREN_REGEX_SECONDS='soon' is not a number of seconds" in _one_sentence(result)
    assert run_wren(["search", "aab", "--dir", str(folder)], cwd=tmp_path, env=bad).returncode == 0


@pytest.mark.parametrize(
    ("budget", "says"),
    [
        ("nan", "is not a number of seconds"),
        ("0", "is not more than 0 seconds"),
        ("-1", "is not more than 0 seconds"),
        ("1e9", "is too many seconds (the most is 1,000,000, about 11 days)"),
        ("inf", "is too many seconds"),
    ],
)
def test_a_budget_out_of_range_says_which_way(tmp_path: Path, budget: str, says: str) -> None:
    folder = _folder_with_a_run_of_as(tmp_path)
    env = {"WREN_REGEX_SECONDS": budget}
    result = run_wren(["search", "--regex", "a+b", "--dir", str(folder)], cwd=tmp_path, env=env)
    assert f"WREN_REGEX_SECONDS={budget!r} {says}" in _one_sentence(result)


def test_the_help_says_which_engine_and_why() -> None:
    result = run_wren(["search", "--help"], cwd=Path.cwd())
    assert "backtracks" in result.stdout and "WREN_REGEX_SECONDS" in result.stdout


def test_a_budget_inside_another_puts_the_outer_one_back_when_it_ends() -> None:
    from wren_tui.search import query

    slow = query.Query.of("(a+)+$", regex=True)
    with pytest.raises(query.PatternTooSlow), query.regex_budget(0.5):
        with query.regex_budget(10):
            assert slow.find("ab") is None  # quick: within both
        assert query._limit[0] == 0.5  # the outer budget holds again, not none
        slow.find("a" * 40 + "b")  # catastrophic: stopped by the outer 0.5 s
    assert query._limit[0] is None
