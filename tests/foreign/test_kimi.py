"""Kimi CLI's `wire.jsonl` as a user meets it: `wren ls --agent kimi` from `$KIMI_SHARE_DIR/sessions` or
`~/.kimi/sessions` (its `context.jsonl` beside it is no session), honest states (a run killed in its tool is
stopped mid-call, a line being written is live), `wren log`, `wren search --agent kimi`, and a fork into a Wren
journal that `wren resume` continues; the file is never changed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, copy_session, fixture, fork_and_resume, lines_of, wren_json
from wren_tui.foreign import FORMATS, detect
from wren_tui.foreign.listing import list_agent_sessions

KIMI = AGENTS / "kimi-cli"
CALL_LINE = 4  # tool-error: the ToolCall line, written before the tool ran


def test_ls_lists_kimis_sessions_from_its_folder_with_honest_states_and_tokens(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / ".kimi" / "sessions"
    copy_session("kimi", "simple", sessions, nested=True, stem="0001-simple")
    copy_session("kimi", "multi-turn", sessions, nested=True, stem="0002-multi")
    stopped = copy_session("kimi", "tool-error", sessions, nested=True, stem="0003-stopped", lines=CALL_LINE)
    (stopped.parent / "context.jsonl").write_bytes(b'{"role": "_checkpoint", "id": 0}\n')  # no session of its own
    rows = wren_json(["ls", "--agent", "kimi"], tmp_path, env={"HOME": str(home)})
    assert isinstance(rows, list)
    by_id = {r["id"]: r for r in rows}
    assert {k: r["state"] for k, r in by_id.items()} == {
        "0001-simple": "done",
        "0002-multi": "done",
        "0003-stopped": "stopped mid-call",
    }
    assert all(r["agent"] == "kimi" for r in rows)
    multi = by_id["0002-multi"]
    assert multi["lines"] == len(lines_of("kimi", "multi-turn")) and multi["tokens"] == 4 * 930
    share = tmp_path / "share"
    copy_session("kimi", "simple", share / "sessions", nested=True)
    moved = wren_json(["ls", "--agent", "kimi"], tmp_path, env={"HOME": str(home), "KIMI_SHARE_DIR": str(share)})
    assert isinstance(moved, list) and [r["id"] for r in moved] == ["0000-simple"]


def test_a_wire_line_just_written_is_live_and_an_hour_old_one_is_not(tmp_path: Path) -> None:
    path = copy_session("kimi", "tool-error", tmp_path / "s", lines=CALL_LINE, age_s=AN_HOUR, nested=True)
    written = path.stat().st_mtime
    [row] = list_agent_sessions([(FORMATS["kimi"], tmp_path / "s")], now=written + 1)
    assert row.state == "live"
    [row] = list_agent_sessions([(FORMATS["kimi"], tmp_path / "s")], now=written + AN_HOUR)
    assert row.state == "stopped mid-call"


def test_log_shows_the_prompt_the_failed_call_its_time_and_the_answer(tmp_path: Path) -> None:
    path = fixture("kimi", "tool-error")
    assert detect(path) is FORMATS["kimi"]
    doc = wren_json(["log", str(path)], tmp_path)
    assert isinstance(doc, dict) and doc["agent"] == "kimi" and doc["skipped"]["unknown"] == {}
    events = doc["events"]
    said = [(e["message"]["role"], e["message"]["content"]) for e in events if e["type"] == "message"]
    assert said[0] == ("user", "Show me missing.txt please.")
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"]
    assert "No such file or directory" in said[2][1]
    assert said[3][1] == "missing.txt does not exist here: cat failed with exit status 1."
    call = next(e for e in events if e["type"] == "message" and e["message"].get("toolCalls"))
    assert json.loads(call["message"]["toolCalls"][0]["args"]) == {
        "command": "cat missing.txt",
        "description": "Run: cat missing.txt",
    }
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["ok"] is False and end["elapsedMs"] == 9  # ToolCall at .314, ToolResult at .323
    usage = [(e["inputTokens"], e["outputTokens"]) for e in events if e["type"] == "usage"]
    assert usage == [(900, 30), (900, 30)]


def test_kimis_context_log_and_other_json_lines_are_not_taken_for_its_wire(tmp_path: Path) -> None:
    context = tmp_path / "context.jsonl"
    context.write_bytes(
        b'{"role": "_checkpoint", "id": 0}\n{"role":"user","content":"hello"}\n{"role": "_usage", "token_count": 9}\n'
    )
    assert detect(context) is None
    refused = run_wren(["log", str(context)], cwd=tmp_path)
    assert refused.returncode == 4 and "Kimi CLI" in refused.stderr
    near = tmp_path / "near.jsonl"  # a wire-like line whose message kind is not Kimi's
    near.write_bytes(b'{"timestamp": 1.5, "message": {"type": "Clicked", "payload": {}}}\n')
    assert detect(near) is None


def test_search_agent_kimi_finds_a_word_of_its_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    copy_session("kimi", "multi-turn", home / ".kimi" / "sessions", nested=True)
    found = run_wren(["search", "to-do list", "--agent", "kimi", "--json"], cwd=tmp_path, env={"HOME": str(home)})
    assert found.returncode == 0, found.stderr
    assert "kimi" in found.stdout and "to-do list" in found.stdout


def test_fork_a_kimi_session_into_wren_then_resume(tmp_path: Path) -> None:
    session = copy_session("kimi", "multi-turn", tmp_path / "kimi")
    journals = tmp_path / "journals"
    listed = run_wren(["fork", str(session), "--dir", str(journals)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "8  assistant: notes.txt is a short to-do list with two items." in listed.stdout
    assert "Clean fork points of this Kimi CLI session" in listed.stdout
    _start, said, _resumed = fork_and_resume(session, 8, journals, tmp_path)
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"]
    assert said[0] == ("user", "What does notes.txt say?") and "buy milk" in said[2][1]
