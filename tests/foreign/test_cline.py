"""Cline CLI's sessions (`~/.cline/data/sessions/<id>/<id>.messages.json` beside `<id>.json`, both rewritten whole
at each step) as a user meets them: `wren ls --agent cline` with the workspace from `<id>.json`, `wren log`,
`wren search --agent cline`, a fork into a Wren journal; a run killed in its tool (`status: "running"`, a tool_use
with no tool_result, nobody writing) is stopped mid-call, not live; the files are never changed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, age, fork_and_resume, wren_json
from wren_tui.foreign import FORMATS, detect
from wren_tui.foreign.listing import list_agent_sessions

CLINE = AGENTS / "cline"
RECORDED_CWD = "/home/user/project/ws"
IDS = {"simple": "1796616408353_q9pgb", "tool-error": "1796616425587_2w8ed", "multi-turn": "1796616439819_bidmt"}


def session(
    root: Path, scenario: str, *, messages: dict[str, object] | None = None, head: dict[str, object] | None = None
) -> Path:
    """A recorded session where Cline keeps it (`<id>/<id>.messages.json` and `<id>.json`), an hour old."""
    folder = root / IDS[scenario]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{IDS[scenario]}.messages.json"
    status = folder / f"{IDS[scenario]}.json"
    path.write_bytes(
        (CLINE / f"{scenario}.messages.json").read_bytes() if messages is None else json.dumps(messages).encode()
    )
    status.write_bytes((CLINE / f"{scenario}.json").read_bytes() if head is None else json.dumps(head).encode())
    age(path, AN_HOUR)
    age(status, AN_HOUR)
    return path


def killed(root: Path) -> Path:
    """What a run killed during its tool leaves: status running, the tool_use with no tool_result."""
    messages = json.loads((CLINE / "tool-error.messages.json").read_bytes())
    messages["messages"] = messages["messages"][:2]
    head = json.loads((CLINE / "tool-error.json").read_bytes())
    head.update(status="running", ended_at=None, exit_code=None)
    return session(root, "tool-error", messages=messages, head=head)


def test_ls_lists_clines_sessions_with_their_workspace_and_a_killed_run_stopped_mid_call(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / ".cline" / "data" / "sessions"
    session(sessions, "simple")
    session(sessions, "multi-turn")
    killed(sessions)
    rows = wren_json(["ls", "--agent", "cline"], tmp_path, env={"HOME": str(home)})
    assert isinstance(rows, list)
    assert {r["id"]: (r["state"], r["project"]) for r in rows} == {
        IDS["simple"]: ("done", RECORDED_CWD),
        IDS["multi-turn"]: ("done", RECORDED_CWD),
        IDS["tool-error"]: ("stopped mid-call", RECORDED_CWD),  # says running; nobody writes it
    }
    assert all(r["agent"] == "cline" for r in rows)
    assert {r["id"]: r["tokens"] for r in rows}[IDS["simple"]] == 2 * 930
    moved = tmp_path / "cline-dir"
    session(moved / "data" / "sessions", "simple")
    rows = wren_json(["ls", "--agent", "cline"], tmp_path, env={"HOME": str(home), "CLINE_DIR": str(moved)})
    assert isinstance(rows, list) and [r["id"] for r in rows] == [IDS["simple"]]


def test_a_killed_run_that_says_running_is_live_only_while_its_files_change(tmp_path: Path) -> None:
    path = killed(tmp_path)
    written = path.stat().st_mtime
    [row] = list_agent_sessions([(FORMATS["cline"], tmp_path)], now=written + 1)
    assert row.state == "live"
    [row] = list_agent_sessions([(FORMATS["cline"], tmp_path)], now=written + AN_HOUR)
    assert row.state == "stopped mid-call"


def test_log_shows_the_prompt_unwrapped_the_failed_call_its_time_and_the_answer(tmp_path: Path) -> None:
    path = session(tmp_path, "tool-error")
    assert detect(path) is FORMATS["cline"] and detect(path.with_name(f"{IDS['tool-error']}.json")) is None
    doc = wren_json(["log", str(path)], tmp_path)
    assert isinstance(doc, dict) and doc["agent"] == "cline" and doc["id"] == IDS["tool-error"]
    events = doc["events"]
    said = [(e["message"]["role"], e["message"]["content"]) for e in events if e["type"] == "message"]
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"]
    assert said[0] == ("user", "Show me missing.txt please.")  # as typed, without Cline's <user_input> wrapper
    assert "No such file or directory" in said[2][1]
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["ok"] is False and end["elapsedMs"] == 118
    assert [(u["inputTokens"], u["outputTokens"]) for u in events if u["type"] == "usage"] == [(900, 30), (900, 30)]


def test_search_agent_cline_finds_a_word_of_its_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session(home / ".cline" / "data" / "sessions", "multi-turn")
    found = run_wren(["search", "to-do list", "--agent", "cline", "--json"], cwd=tmp_path, env={"HOME": str(home)})
    assert found.returncode == 0, found.stderr
    assert "cline" in found.stdout and "to-do list" in found.stdout


def test_fork_a_cline_session_into_wren_then_resume(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    head = json.loads((CLINE / "multi-turn.json").read_bytes())
    head["cwd"] = str(workspace)
    path = session(tmp_path / "cline", "multi-turn", head=head)
    start, said, resumed = fork_and_resume(path, 5, tmp_path / "journals", tmp_path)
    assert start.cwd == str(workspace)
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"]
    assert said[3] == ("assistant", "notes.txt is a short to-do list with two items.")
    assert f"working in {workspace}" in resumed.stdout
