"""Continue CLI's session documents (`~/.continue/sessions/<uuid>.json`, written whole when a run ends) as a user
meets them: `wren ls --agent continue` (its index `sessions.json` is no session), `wren log`, `wren search --agent
continue`, a fork into a Wren journal that `wren resume` continues, a call whose state holds no result stopped
mid-call; the document is never changed, and a JSON document of another program's is not taken for Continue's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, age, fixture, fork_and_resume, wren_json
from wren_tui.foreign import FORMATS, detect

CONTINUE = AGENTS / "continue-cli"
RECORDED_CWD = "/home/user/project/ws"
IDS = {
    "simple": "424d6214-83c8-47a2-9df8-2f362e3f1331",
    "tool-error": "9610d4b2-2e83-4946-908b-b9ee327f0256",
    "multi-turn": "ffb846b9-f158-4aaf-9585-9c66682eef77",
}


def document(folder: Path, scenario: str, data: bytes | None = None) -> Path:
    """A recorded session named as Continue names it, last written an hour ago."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{IDS[scenario]}.json"
    path.write_bytes(fixture("continue", scenario).read_bytes() if data is None else data)
    age(path, AN_HOUR)
    return path


def test_ls_lists_continues_sessions_from_its_folder_not_its_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / ".continue" / "sessions"
    for scenario in IDS:
        document(sessions, scenario)
    (sessions / "sessions.json").write_bytes((CONTINUE / "simple.sessions-index.json").read_bytes())
    rows = wren_json(["ls", "--agent", "continue"], tmp_path, env={"HOME": str(home)})
    assert isinstance(rows, list)
    assert {r["id"]: (r["state"], r["tokens"], r["project"]) for r in rows} == {
        IDS["simple"]: ("done", 2 * 930, RECORDED_CWD),
        IDS["tool-error"]: ("done", 2 * 930, RECORDED_CWD),
        IDS["multi-turn"]: ("done", 4 * 930, RECORDED_CWD),
    }
    assert all(r["agent"] == "continue" for r in rows)
    moved = tmp_path / "global"
    document(moved / "sessions", "simple")
    rows = wren_json(
        ["ls", "--agent", "continue"], tmp_path, env={"HOME": str(home), "CONTINUE_GLOBAL_DIR": str(moved)}
    )
    assert isinstance(rows, list) and [r["id"] for r in rows] == [IDS["simple"]]


def test_log_shows_the_prompt_the_failed_call_and_the_answer(tmp_path: Path) -> None:
    path = document(tmp_path, "tool-error")
    assert detect(path) is FORMATS["continue"]
    doc = wren_json(["log", str(path)], tmp_path)
    assert isinstance(doc, dict) and doc["agent"] == "continue" and doc["id"] == IDS["tool-error"]
    events = doc["events"]
    said = [(e["message"]["role"], e["message"]["content"]) for e in events if e["type"] == "message"]
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"]
    assert said[0] == ("user", "Show me missing.txt please.") and "No such file or directory" in said[2][1]
    assert said[3][1] == "missing.txt does not exist here: cat failed with exit status 1."
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["ok"] is False  # its state: errored
    assert [(u["inputTokens"], u["outputTokens"]) for u in events if u["type"] == "usage"] == [(900, 30), (900, 30)]


def test_a_call_whose_state_holds_no_result_is_stopped_mid_call_never_done(tmp_path: Path) -> None:
    whole = json.loads(fixture("continue", "tool-error").read_bytes())
    whole["history"] = whole["history"][:2]  # the call asked, no answer after it
    whole["history"][1]["toolCallStates"][0]["status"] = "calling"
    path = document(tmp_path / "s", "tool-error", json.dumps(whole, indent=2).encode())
    rows = wren_json(["ls", "--agent", "continue", "--dir", str(path.parent)], tmp_path)
    assert isinstance(rows, list) and [r["state"] for r in rows] == ["stopped mid-call"]


def test_a_json_document_of_another_program_is_not_taken_for_continues(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"sessionId": "x", "history": [], "workspace": "/tmp"}\n')  # no workspaceDirectory
    assert detect(other) is None
    assert run_wren(["log", str(other)], cwd=tmp_path).returncode == 4
    index = tmp_path / "sessions.json"
    index.write_bytes((CONTINUE / "simple.sessions-index.json").read_bytes())
    assert detect(index) is None


def test_search_agent_continue_finds_a_word_of_its_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    document(home / ".continue" / "sessions", "multi-turn")
    found = run_wren(["search", "to-do list", "--agent", "continue", "--json"], cwd=tmp_path, env={"HOME": str(home)})
    assert found.returncode == 0, found.stderr
    assert "continue" in found.stdout and "to-do list" in found.stdout


def test_fork_a_continue_session_into_wren_then_resume(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    data = fixture("continue", "multi-turn").read_bytes().replace(RECORDED_CWD.encode(), str(workspace).encode())
    session = document(tmp_path / "continue", "multi-turn", data)
    journals = tmp_path / "journals"
    listed = run_wren(["fork", str(session), "--dir", str(journals)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "5  assistant: notes.txt is a short to-do list with two items." in listed.stdout
    assert "Clean fork points of this Continue session" in listed.stdout
    start, said, resumed = fork_and_resume(session, 5, journals, tmp_path)
    assert start.cwd == str(workspace)
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"]
    assert said[0] == ("user", "What does notes.txt say?") and "buy milk" in said[2][1]
    assert f"working in {workspace}" in resumed.stdout
