"""aider's chat history as a user meets it: found in the folders named, listed, logged (saying aider records no
tool calls), searched, forked into Wren and resumed; the history itself is only read."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, age
from wren_tui.foreign import FORMATS, detect
from wren_tui.foreign.listing import list_agent_sessions
from wren_tui.journal.events import Fork, Message, RunStart
from wren_tui.journal.reader import read_events

AIDER = AGENTS / "aider"


def history(folder: Path, scenario: str = "multi-turn", *, data: bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".aider.chat.history.md"
    path.write_bytes((AIDER / f"{scenario}.chat.history.md").read_bytes() if data is None else data)
    age(path, AN_HOUR)
    return path


def stamp(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_log_reads_each_runs_prompt_reply_tokens_and_time_and_says_no_tool_calls_are_recorded(tmp_path: Path) -> None:
    path = history(tmp_path / "project")
    before = stamp(path)
    text = run_wren(["log", str(path)], cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    # Said as the listing's heading on stdout, not as an error on stderr (the run succeeded).
    said = "Note: aider records no tool calls (it edits files from the text of its replies)."
    assert text.stdout.splitlines()[0] == said
    assert "no tool calls" not in text.stderr and not text.stderr.startswith("wren:")
    result = run_wren(["log", str(path), "--json"], cwd=tmp_path)
    doc = json.loads(result.stdout)
    assert doc["agent"] == "aider" and doc["id"] == "project"
    assert doc["unrecorded"] == "aider records no tool calls (it edits files from the text of its replies)"
    messages = [
        (e["ts"], e["message"]["role"], e["message"]["content"]) for e in doc["events"] if e["type"] == "message"
    ]
    assert [m[1:] for m in messages] == [
        ("user", "What does notes.txt say?"),
        ("assistant", "notes.txt is a short to-do list with two items."),
        ("user", "How many lines does hello.py have?"),
        ("assistant", "hello.py has 3 lines."),
    ]
    # The only times aider writes: each run's start (local time; here the machine's zone).
    assert messages[0][0].startswith("2026-12-01T14:14:45") and messages[2][0].startswith("2026-12-01T14:14:50")
    usage = [(e["inputTokens"], e["outputTokens"]) for e in doc["events"] if e["type"] == "usage"]
    assert usage == [(584, 12), (614, 7)]
    assert not any(e["type"] in ("tool_start", "tool_end") for e in doc["events"])
    assert stamp(path) == before


def test_a_history_is_recognised_by_its_first_line_not_its_name(tmp_path: Path) -> None:
    named = history(tmp_path / "a")
    other = tmp_path / "b" / "chat.md"
    other.parent.mkdir()
    other.write_bytes(named.read_bytes())
    assert detect(named) is FORMATS["aider"] and detect(other) is FORMATS["aider"]
    readme = tmp_path / "README.md"
    readme.write_text("# A project\n\n#### not aider\n")
    assert detect(readme) is None
    refused = run_wren(["log", str(readme)], cwd=tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr


def test_ls_searches_the_folder_named_and_the_current_folder_by_default(tmp_path: Path) -> None:
    history(tmp_path / "one", "simple")
    history(tmp_path / "two" / "deeper")
    (tmp_path / "notes.md").write_text("# notes\n")
    history(tmp_path / ".venv" / "lib")  # a hidden folder (.git, .venv) is not searched: aider writes beside a project
    named = run_wren(["ls", "--agent", "aider", "--dir", str(tmp_path), "--json"], cwd=Path("/"))
    assert named.returncode == 0, named.stderr
    rows = json.loads(named.stdout)
    assert sorted(r["id"] for r in rows) == ["deeper", "one"]
    assert {r["state"] for r in rows} == {"done"} and all(r["agent"] == "aider" for r in rows)
    here = run_wren(["ls", "--agent", "aider", "--json"], cwd=tmp_path)
    assert sorted(r["id"] for r in json.loads(here.stdout)) == ["deeper", "one"]
    every = run_wren(["ls", "--agent", "all", "--dir", str(tmp_path), "--json"], cwd=tmp_path)
    assert sorted(r["id"] for r in json.loads(every.stdout) if r["agent"] == "aider") == ["deeper", "one"]


def test_a_history_being_written_is_live_and_a_prompt_with_no_reply_is_not_done(tmp_path: Path) -> None:
    whole = (AIDER / "simple.chat.history.md").read_bytes()
    prompt_only = whole[: whole.index(b"\n\n", whole.index(b"#### ")) + 2]
    path = history(tmp_path / "p", data=prompt_only)
    rows = json.loads(run_wren(["ls", "--agent", "aider", "--dir", str(tmp_path), "--json"], cwd=tmp_path).stdout)
    assert [r["state"] for r in rows] == ["interrupted"]
    # aider wrote it a moment ago (judged at an injected time, never the wall clock's).
    written = path.stat().st_mtime
    rows_then = list_agent_sessions([(FORMATS["aider"], tmp_path)], now=written + 1)
    assert [r.state for r in rows_then] == ["live"]


def test_search_finds_a_reply_in_an_aider_history(tmp_path: Path) -> None:
    path = history(tmp_path / "project")
    result = run_wren(["search", "to-do list", "--agent", "aider", "--dir", str(tmp_path), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert str(path) in result.stdout and "aider" in result.stdout


def test_fork_into_wren_then_wren_resume_continues_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = history(workspace)
    before = stamp(path)
    journals = tmp_path / "journals"
    listed = run_wren(["fork", str(path), "--dir", str(journals)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "4  assistant: notes.txt is a short to-do list with two items." in listed.stdout
    made = run_wren(["fork", str(path), "4", "--dir", str(journals), "--json"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    forked = json.loads(made.stdout)
    result = read_events(Path(forked["path"]))
    assert result.ok
    start, *middle, last = result.events
    assert isinstance(start, RunStart) and start.cwd == str(workspace)  # the history lies beside the project
    assert isinstance(last, Fork) and last.at_seq == 4
    assert [e.message.role for e in middle if isinstance(e, Message)] == ["user", "assistant"]
    assert stamp(path) == before
    resumed = run_wren(
        ["resume", forked["id"], "what did you find in notes.txt?", "--dir", str(journals), "--model", "scripted"],
        cwd=tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"working in {workspace}" in resumed.stdout
    assert "notes.txt is a short to-do list with two items." in resumed.stdout


def test_a_history_listed_from_inside_its_project_is_named_after_the_project_never_with_an_empty_id(
    tmp_path: Path,
) -> None:
    project = tmp_path / "todo-app"
    history(project)
    listed = run_wren(["ls", "--agent", "aider", "--json"], cwd=project)  # the default place: the current folder
    assert listed.returncode == 0, listed.stderr
    assert [row["id"] for row in json.loads(listed.stdout)] == ["todo-app"]
    table = run_wren(["ls", "--agent", "aider"], cwd=project)
    assert "todo-app" in table.stdout
    found = run_wren(["search", "to-do list", "--agent", "aider"], cwd=project)
    assert found.returncode == 0, found.stderr
    header = found.stdout.splitlines()[0]
    assert header.startswith("todo-app") and header == header.lstrip()
