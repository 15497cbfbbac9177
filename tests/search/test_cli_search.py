"""`wren search` as a person runs it: a separate process over a journals folder built in tmp_path.

Wren journals here; other agents' recorded sessions are searched in test_cli_search_agents.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import run_wren
from tests.search.helpers import resealed
from tests.tui.journals import assistant, encode, finished_story, story, tool_result, user, write_journal
from wren_tui.journal.events import ChatMessage, Message, Reasoning, RunStart, ToolCall

OLD = "s-20250301-093000-demo"
NEW = "s-20250302-100000-next"


def hits(result: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def folder_of_two(tmp_path: Path) -> Path:
    """Two sessions: yesterday's story, and today's, in another project, that says ZeroDivisionError again."""
    folder = tmp_path / "journals"
    write_journal(folder / f"{OLD}.jsonl", finished_story())
    write_journal(
        folder / f"{NEW}.jsonl",
        [
            RunStart(pid=7, cwd="/work/other", model="scripted", version="0.1.0"),
            user("why did ZeroDivisionError come back?"),
            assistant("Let me look.", ToolCall("c1", "grep", '{"pattern": "ZeroDivisionError"}')),
            tool_result("c1", "stats/core.py:12: raise ZeroDivisionError"),
        ],
        start=datetime(2025, 3, 2, 10, 0, 0, tzinfo=UTC),
    )
    return folder


def test_search_lists_every_match_newest_session_first_with_its_place(tmp_path: Path) -> None:
    folder = folder_of_two(tmp_path)
    result = run_wren(["search", "zerodivisionerror", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = [(h["session"], h["seq"], h["role"], h["kind"], h["tool"], h["project"]) for h in hits(result)]
    assert found == [
        (NEW, 2, "user", "message", None, "/work/other"),
        (NEW, 3, "tool", "call", "grep", "/work/other"),
        (NEW, 4, "tool", "result", None, "/work/other"),
        (OLD, 8, "tool", "result", None, "/work/demo"),
        (OLD, 10, "assistant", "message", None, "/work/demo"),
    ]
    first = hits(result)[0]
    assert first["snippet"][first["matchStart"] : first["matchEnd"]] == "ZeroDivisionError"
    assert first["agent"] == "wren" and first["path"] == str(folder / f"{NEW}.jsonl")
    assert first["ts"] == "2025-03-02T10:00:01.250Z"


def test_search_prints_a_header_per_session_and_marks_the_match(tmp_path: Path) -> None:
    folder = folder_of_two(tmp_path)
    result = run_wren(["search", "pytest", "--dir", str(folder)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{OLD}  wren  /work/demo"
    assert lines[1].split() == [
        "seq",
        "5",
        "2025-03-01T09:30:05.000Z",
        "tool:shell",
        '{"command":',
        '"python',
        "-m",
        "«pytest»",
        '-q"}',
    ]
    assert len(lines) == 4  # the call, its output, the second call


def test_search_with_no_match_prints_nothing_and_exits_1(tmp_path: Path) -> None:
    folder = folder_of_two(tmp_path)
    result = run_wren(["search", "nowhere to be found", "--dir", str(folder)], cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")


def test_role_project_and_since_narrow_the_hits(tmp_path: Path) -> None:
    folder = folder_of_two(tmp_path)
    base = ["search", "ZeroDivisionError", "--dir", str(folder), "--json"]
    by_role = run_wren([*base, "--role", "user", "--role", "assistant"], cwd=tmp_path)
    assert [(h["session"], h["seq"]) for h in hits(by_role)] == [(NEW, 2), (OLD, 10)]
    by_project = run_wren([*base, "--project", "/work/demo"], cwd=tmp_path)
    assert [(h["session"], h["seq"]) for h in hits(by_project)] == [(OLD, 8), (OLD, 10)]
    # The files were written today, so a date filters on the events' own times.
    by_since = run_wren([*base, "--since", "2025-03-02"], cwd=tmp_path)
    assert [(h["session"], h["seq"]) for h in hits(by_since)] == [(NEW, 2), (NEW, 3), (NEW, 4)]
    none = run_wren([*base, "--since", "1d"], cwd=tmp_path)
    assert none.returncode == 1 and none.stdout == ""


def test_a_damaged_journal_is_searched_up_to_where_reading_stops_and_the_list_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    events = finished_story()
    lines = encode(events).splitlines(keepends=True)
    # Line 12 (a tool_end) gets a wrong CRC: the hits after it (seq 20's pytest call) are not searched.
    digit = lines[11][-4:-3]
    lines[11] = lines[11][:-4] + (b"1" if digit == b"0" else b"0") + lines[11][-3:]
    folder.mkdir()
    (folder / f"{OLD}.jsonl").write_bytes(b"".join(lines))
    result = run_wren(["search", "pytest", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = hits(result)
    assert [(r["type"], r.get("seq")) for r in rows] == [("hit", 5), ("hit", 8), ("stopped", None)]
    assert rows[-1]["stoppedAtLine"] == 12 and rows[-1]["torn"] is False and rows[-1]["hits"] == 2
    assert rows[-1]["stoppedAtOffset"] == len(b"".join(lines[:11]))
    text = run_wren(["search", "pytest", "--dir", str(folder)], cwd=tmp_path)
    assert text.stdout.splitlines()[-1].startswith(f"  reading stops at line 12 (byte {rows[-1]['stoppedAtOffset']})")
    assert "nothing after it was searched" in text.stdout


def test_a_torn_tail_is_searched_to_its_last_whole_line(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    data = encode(story())
    write_journal(folder / f"{OLD}.jsonl", [])
    (folder / f"{OLD}.jsonl").write_bytes(data[:-7])  # the last line cut short, as a crash leaves it
    result = run_wren(["search", "edit_file", "--dir", str(folder), "--json"], cwd=tmp_path)
    rows = hits(result)
    assert [r["type"] for r in rows] == ["hit", "stopped"]
    assert rows[0]["seq"] == 16 and rows[0]["inToolName"] is True
    assert rows[1]["torn"] is True and rows[1]["stoppedAtLine"] == 17


def test_a_pattern_with_a_quote_or_a_newline_is_found_as_typed(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    write_journal(
        folder / f"{OLD}.jsonl",
        [user('print("hello")\nthen exit'), assistant("C:\\temp\\new is the folder")],
    )
    quoted = run_wren(["search", 'print("hello")', "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [h["seq"] for h in hits(quoted)] == [1]
    across = run_wren(["search", '")\nthen', "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [h["seq"] for h in hits(across)] == [1]
    slashes = run_wren(["search", "C:\\temp\\new", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [h["seq"] for h in hits(slashes)] == [2]
    # What the line's bytes hold is not what was said: the escapes themselves are no match.
    raw = run_wren(["search", "\\n", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [h["seq"] for h in hits(raw)] == [2]  # only the backslash-n of C:\temp\new


def test_text_another_writer_escaped_differently_is_found(tmp_path: Path) -> None:
    """A valid line may write A as \\u0041, é as \\u00e9 and / as \\/: the raw pass must let it through."""
    folder = tmp_path / "journals"
    folder.mkdir()
    lines = encode([user("Apple café at src/main.py")]).splitlines(keepends=True)
    line = resealed(lines[0], b"Apple", b"\\u0041pple")
    line = resealed(line, "é".encode(), b"\\u00e9")
    line = resealed(line, b"src/main", b"src\\/main")
    (folder / f"{OLD}.jsonl").write_bytes(line)
    for pattern in ("Apple", "apple", "café", "Apple café", "src/main.py"):
        result = run_wren(["search", pattern, "--dir", str(folder), "--json"], cwd=tmp_path)
        assert [h["seq"] for h in hits(result)] == [1], pattern


def test_an_invalid_regex_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    folder = folder_of_two(tmp_path)
    result = run_wren(["search", "mean(xs", "--regex", "--dir", str(folder)], cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("wren: 'mean(xs' is not a valid regular expression")
    # Without --regex the same text is searched as typed.
    literal = run_wren(["search", "mean(xs", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [(h["session"], h["seq"]) for h in hits(literal)] == [(OLD, 13)]


def test_a_regex_matches_on_the_decoded_text(tmp_path: Path) -> None:
    folder = folder_of_two(tmp_path)
    result = run_wren(["search", r"\d+ passed", "--regex", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [(h["seq"], h["snippet"][h["matchStart"] : h["matchEnd"]]) for h in hits(result)] == [
        (8, "7 passed"),
        (23, "8 passed"),
    ]


def test_a_bad_since_or_a_missing_folder_is_said(tmp_path: Path) -> None:
    folder = folder_of_two(tmp_path)
    since = run_wren(["search", "x", "--since", "yesterday", "--dir", str(folder)], cwd=tmp_path)
    assert since.returncode == 2 and "--since 'yesterday' is not a date" in since.stderr
    missing = run_wren(["search", "x", "--dir", str(tmp_path / "nope")], cwd=tmp_path)
    assert missing.returncode == 1 and f"{tmp_path / 'nope'}: no such folder" in missing.stderr


def test_a_models_reasoning_is_searched_as_thinking(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    reply = Message(
        message=ChatMessage(
            role="assistant",
            content="",
            tool_calls=[ToolCall("c1", "read_file", '{"path": "stats/core.py"}')],
            reasoning=[Reasoning(text="I should weigh the empty case first", kind="reasoning_content")],
        )
    )
    write_journal(folder / f"{OLD}.jsonl", [user("why does the mean weigh nothing?"), reply])
    thinking = run_wren(["search", "weigh", "--role", "thinking", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [(h["seq"], h["role"], h["kind"]) for h in hits(thinking)] == [(2, "thinking", "reasoning")]
    every = run_wren(["search", "weigh", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert [(h["seq"], h["role"]) for h in hits(every)] == [(1, "user"), (2, "thinking")]
