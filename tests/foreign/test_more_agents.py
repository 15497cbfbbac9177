"""Gemini CLI, Qwen Code and Copilot CLI sessions through the command line, as a person runs it: `wren ls
--agent`, `wren log`, `wren search --agent`, `wren fork` into a journal `wren resume` continues; and a file
Wren does not know is never guessed at (refused in one sentence, exit 4; listed as unknown)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session, fixture, lines_of
from wren_tui.foreign import FORMATS, live, what_wren_opens
from wren_tui.foreign.listing import list_agent_sessions
from wren_tui.journal.events import Fork, Message, RunStart
from wren_tui.journal.reader import read_events

NEW = ["gemini", "qwen", "copilot"]
HOMES = {"gemini": "GEMINI_CLI_HOME", "qwen": "QWEN_HOME", "copilot": "COPILOT_HOME"}
# Where each keeps its sessions under the folder its variable names.
SESSIONS = {"gemini": ".gemini/tmp", "qwen": "projects", "copilot": "session-state"}
# The line each tool-error recording's call is on (Gemini CLI: the reply that asked it; the call comes only
# with its result): what a run stopped during its tool leaves.
CALL_LINE = {"gemini": 6, "qwen": 5, "copilot": 7}
STOPPED = {"gemini": "last: reply", "qwen": "stopped mid-call", "copilot": "stopped mid-call"}
# The end of a finished run: Gemini CLI cannot tell a reply that ended the run from one whose tool was stopped.
FINISHED = {"gemini": "last: reply", "qwen": "done", "copilot": "done"}
RECORDED_CWD = "/home/user/project/ws"
FIRST_ANSWER = {"gemini": 10, "qwen": 8, "copilot": 12}
LABEL = {"gemini": "Gemini CLI", "qwen": "Qwen Code", "copilot": "Copilot CLI"}
# Every format registered is named, the last ones added included.
OPENS = f"not {what_wren_opens()}"


def _ls(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    result = run_wren(["ls", *args, "--json"], cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


def _fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.mark.parametrize("agent", NEW)
def test_ls_lists_an_agents_folder_with_honest_states_project_and_tokens(agent: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / SESSIONS[agent]
    copy_session(agent, "simple", root, nested=True, stem="0001-simple")
    copy_session(agent, "multi-turn", root, nested=True, stem="0002-multi")
    copy_session(agent, "tool-error", root, nested=True, stem="0003-stopped", lines=CALL_LINE[agent])
    rows = _ls(["--agent", agent], cwd=tmp_path, env={HOMES[agent]: str(home), "HOME": str(tmp_path)})
    states = {Path(str(r["path"])).parent.name if agent == "copilot" else Path(str(r["path"])).stem: r for r in rows}
    by_name = {next(n for n in ("simple", "multi", "stopped") if n in key): row for key, row in states.items()}
    assert {name: row["state"] for name, row in by_name.items()} == {
        "simple": FINISHED[agent],
        "multi": FINISHED[agent],
        "stopped": STOPPED[agent],
    }
    assert all(r["agent"] == agent and r["project"] == RECORDED_CWD for r in rows)
    multi = by_name["multi"]
    assert multi["lines"] == len(lines_of(agent, "multi-turn")) and multi["exact"]
    assert multi["tokens"] == {"gemini": 4 * 1135, "qwen": 4 * 930, "copilot": 4 * 930}[agent]
    assert [r["started"] for r in rows] == sorted((r["started"] for r in rows), reverse=True)


def test_ls_all_reads_each_new_agents_folder_from_its_own_variable(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    for agent, variable in HOMES.items():
        home = tmp_path / f"{agent}-home"
        copy_session(agent, "simple", home / SESSIONS[agent], nested=True)
        env[variable] = str(home)
    rows = _ls(["--agent", "all"], cwd=tmp_path, env=env)
    assert sorted(str(r["agent"]) for r in rows) == ["copilot", "gemini", "qwen"]


@pytest.mark.parametrize("agent", NEW)
def test_log_prints_the_file_as_wren_events_by_line_number(agent: str, tmp_path: Path) -> None:
    path = fixture(agent, "tool-error")
    text = run_wren(["log", str(path)], cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "user: 'Show me missing.txt please.'" in text.stdout
    assert "tool_end" in text.stdout and "failed" in text.stdout
    assert "missing.txt does not exist here" in text.stdout and "not shown:" in text.stderr
    doc = json.loads(run_wren(["log", str(path), "--json"], cwd=tmp_path).stdout)
    assert doc["agent"] == agent and doc["reason"] is None and doc["skipped"]["unknown"] == {}
    said = [e["message"]["content"] for e in doc["events"] if e["type"] == "message" and e["message"]["role"] == "user"]
    assert said == ["Show me missing.txt please."]  # the prompt, once; a client's context is a note


def test_a_qwen_session_is_never_taken_for_claude_codes(tmp_path: Path) -> None:
    path = copy_session("qwen", "tool-error", tmp_path, lines=CALL_LINE["qwen"])
    doc = json.loads(run_wren(["log", str(path), "--json"], cwd=tmp_path).stdout)
    assert doc["agent"] == "qwen"
    roles = [e["message"]["role"] for e in doc["events"] if e["type"] == "message"]
    assert roles == ["user", "assistant"]  # the prompt is kept; the call is open
    listed = _ls(["--agent", "all", "--dir", str(tmp_path)], cwd=tmp_path)
    assert [(r["agent"], r["state"]) for r in listed] == [("qwen", "stopped mid-call")]
    points = json.loads(run_wren(["fork", str(path), "--dir", str(tmp_path / "j"), "--json"], cwd=tmp_path).stdout)
    assert [p["seq"] for p in points] == [1]


@pytest.mark.parametrize("agent", NEW)
def test_fork_into_wren_then_resume(agent: str, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("TODO\n- buy milk\n- fix the flaky test\n")
    session = tmp_path / "agent" / fixture(agent, "multi-turn").name
    session.parent.mkdir()
    session.write_bytes(
        fixture(agent, "multi-turn").read_bytes().replace(RECORDED_CWD.encode(), str(workspace).encode())
    )
    before = _fingerprint(session)
    journals = tmp_path / "journals"
    listed = run_wren(["fork", str(session), "--dir", str(journals)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert f"{FIRST_ANSWER[agent]}  assistant: notes.txt is a short to-do list with two items." in listed.stdout
    assert f"Clean fork points of this {LABEL[agent]} session" in listed.stdout
    made = run_wren(["fork", str(session), str(FIRST_ANSWER[agent]), "--dir", str(journals), "--json"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    forked = json.loads(made.stdout)
    result = read_events(Path(forked["path"]))
    assert result.ok
    start, *middle, last = result.events
    assert isinstance(start, RunStart) and start.cwd == str(workspace)
    assert isinstance(last, Fork) and last.at_seq == FIRST_ANSWER[agent]
    said = [(e.message.role, e.message.content) for e in middle if isinstance(e, Message)]
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"]
    assert said[0] == ("user", "What does notes.txt say?") and "buy milk" in said[2][1]
    resumed = run_wren(
        ["resume", forked["id"], "what did you find in notes.txt?", "--dir", str(journals), "--model", "scripted"],
        cwd=tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"working in {workspace}" in resumed.stdout
    assert _fingerprint(session) == before


@pytest.mark.parametrize("agent", NEW)
def test_search_finds_a_word_in_an_agents_sessions(agent: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    copy_session(agent, "multi-turn", home / SESSIONS[agent], nested=True)
    env = {HOMES[agent]: str(home), "HOME": str(tmp_path)}
    found = run_wren(["search", "to-do list", "--agent", agent, "--json"], cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert agent in found.stdout and "to-do list" in found.stdout


@pytest.mark.parametrize("agent", NEW)
def test_a_bad_line_is_reported_with_its_number_and_a_partial_last_line_is_held_back(
    agent: str, tmp_path: Path
) -> None:
    lines = lines_of(agent, "simple")
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_bytes(b"".join(lines[:3]) + b"not json\n" + b"".join(lines[3:]))
    logged = run_wren(["log", str(corrupt)], cwd=tmp_path)
    assert logged.returncode == 4 and f"{corrupt}: line 4" in logged.stderr and "Traceback" not in logged.stderr
    torn = tmp_path / "torn.jsonl"
    answer = next(i for i, line in enumerate(lines) if b"The folder holds two files" in line)
    torn.write_bytes(b"".join(lines[:answer]) + lines[answer][:60])  # the answer's line, cut as a write could be
    logged = run_wren(["log", str(torn)], cwd=tmp_path)
    assert logged.returncode == 4 and "its writer may still be writing that line" in logged.stderr
    assert "The folder holds two files" not in logged.stdout


def test_a_file_wren_does_not_know_is_refused_by_every_command_and_listed_as_unknown(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    other = folder / "other.jsonl"
    other.write_text('{"event": "click", "at": 1}\n{"event": "scroll", "at": 2}\n')
    text = folder / "notes.jsonl"
    text.write_text("just some words\n")
    copy_session("gemini", "simple", folder / "session-2026-12-01T14-08-aaaa.jsonl")
    journals = tmp_path / "journals"
    for path in (other, text):
        for command in (["log", str(path)], ["fork", str(path), "--dir", str(journals)], ["watch", str(path)]):
            refused = run_wren(command, cwd=tmp_path)
            assert refused.returncode == 4, (command, refused.stdout, refused.stderr)
            assert (
                refused.stderr.strip() == f"wren: {path}: {OPENS} (none of its first lines is of their kinds), "
                "so Wren does not read it"
            )
            assert refused.stdout == ""
    assert not journals.exists()
    rows = {Path(str(r["path"])).name: r for r in _ls(["--agent", "all", "--dir", str(folder)], cwd=tmp_path)}
    assert rows["other.jsonl"]["state"] == rows["notes.jsonl"]["state"] == "unknown"
    assert rows["other.jsonl"]["agent"] == "unknown" and OPENS in str(rows["other.jsonl"]["reason"])
    assert rows["session-2026-12-01T14-08-aaaa.jsonl"]["agent"] == "gemini"
    table = run_wren(["ls", "--agent", "all", "--dir", str(folder)], cwd=tmp_path)
    assert table.returncode == 0 and "not a session Wren reads" in table.stdout
    assert table.stderr.count("it is listed as unknown") == 2


def test_a_wren_journals_own_damage_is_still_reported_as_a_journals(tmp_path: Path) -> None:
    # A journal named as Wren names them, damaged from its first line: Wren's own sentence, as before.
    journal = tmp_path / "s-20261201-100000-abcd.jsonl"
    journal.write_text("not json\n")
    logged = run_wren(["log", str(journal)], cwd=tmp_path)
    assert logged.returncode == 4 and "line 1" in logged.stderr and OPENS not in logged.stderr


def test_a_session_changed_in_the_last_few_seconds_is_live_and_an_hour_old_one_is_done(tmp_path: Path) -> None:
    root = tmp_path / "session-state"
    path = copy_session("copilot", "simple", root, nested=True)
    written = path.stat().st_mtime
    place = [(FORMATS["copilot"], root)]
    # Judged at an injected time, never the wall clock's (a slow start of `wren ls` must not decide it).
    assert list_agent_sessions(place, now=written + live.RECENT_S - 0.5)[0].state == "live"
    assert list_agent_sessions(place, now=written + live.RECENT_S)[0].state == "done"
    # As a user lists it: an hour old, done.
    assert _ls(["--agent", "copilot", "--dir", str(root)], cwd=tmp_path)[0]["state"] == "done"


def test_plain_ls_lists_another_agents_session_or_an_unknown_file_in_a_journals_folder_as_unknown(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "journals"
    gemini = copy_session("gemini", "simple", folder / "session-2026-12-01T14-08-de47bbe5.jsonl")
    copy_session("copilot", "simple", folder / "events.jsonl")
    (folder / "notes.jsonl").write_text('{"a": 1}\n')
    damaged = folder / "s-20261201-100000-abcd.jsonl"
    damaged.write_text("not json\n")
    rows = {Path(str(r["path"])).name: r for r in _ls(["--dir", str(folder)], cwd=tmp_path)}
    assert rows[gemini.name]["state"] == rows["events.jsonl"]["state"] == rows["notes.jsonl"]["state"] == "unknown"
    assert "a Gemini CLI session, not a Wren journal" in str(rows[gemini.name]["reason"])
    assert "a Copilot CLI session" in str(rows["events.jsonl"]["reason"])
    assert OPENS in str(rows["notes.jsonl"]["reason"])
    assert rows[damaged.name]["state"] == "corrupt"  # a journal's own damage, as before


@pytest.mark.parametrize("agent", NEW)
def test_a_resumed_session_shows_each_message_once(agent: str, tmp_path: Path) -> None:
    # Gemini CLI writes a reply again with its calls, their results twice, and the whole history on a resume.
    doc = json.loads(run_wren(["log", str(fixture(agent, "multi-turn")), "--json"], cwd=tmp_path).stdout)
    said = [(e["message"]["role"], e["message"]["content"]) for e in doc["events"] if e["type"] == "message"]
    assert [text for role, text in said if role == "user"] == [
        "What does notes.txt say?",
        "How many lines does hello.py have?",
    ]
    assert [text for role, text in said if role == "assistant" and text] == [
        "notes.txt is a short to-do list with two items.",
        "hello.py has 3 lines.",
    ]
    assert len([role for role, _ in said if role == "tool"]) == 2
    calls = [c["name"] for e in doc["events"] if e["type"] == "message" for c in e["message"].get("toolCalls") or ()]
    assert len(calls) == 2
    used = sum(e["inputTokens"] + e["outputTokens"] for e in doc["events"] if e["type"] == "usage")
    assert used == {"gemini": 4 * 1135, "qwen": 4 * 930, "copilot": 4 * 930}[agent]


def _copilot_first_line() -> dict[str, object]:
    first: dict[str, object] = json.loads(fixture("copilot", "simple").read_text().splitlines()[0])
    return first


def _without(line: dict[str, object], member: str) -> dict[str, object]:
    return {k: v for k, v in line.items() if k != member}


# A Copilot CLI envelope short of one member, or with one of the wrong kind: another program's log, not a session.
NEAR_COPILOT = {
    "an audit log's user.login": [
        {"type": "user.login", "data": {"user": "ann", "ok": True}},
        {"type": "user.logout", "data": {"user": "ann"}},
    ],
    "no parentId": [_without(_copilot_first_line(), "parentId")],
    "no id": [_without(_copilot_first_line(), "id")],
    "no timestamp": [_without(_copilot_first_line(), "timestamp")],
    "no data": [_without(_copilot_first_line(), "data")],
    "data not an object": [{**_copilot_first_line(), "data": "session started"}],
    "a parentId that is a number": [{**_copilot_first_line(), "parentId": 7}],
    "a type of no kind of Copilot's": [{**_copilot_first_line(), "type": "billing.charged"}],
}


@pytest.mark.parametrize("case", sorted(NEAR_COPILOT))
def test_a_log_with_copilots_envelope_short_of_one_member_is_refused_never_read_as_a_copilot_session(
    case: str, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in NEAR_COPILOT[case]))
    refused = run_wren(["log", str(path)], cwd=tmp_path)
    assert refused.returncode == 4, (case, refused.stdout)
    assert refused.stderr.strip() == (
        f"wren: {path}: {OPENS} (none of its first lines is of their kinds), so Wren does not read it"
    )
    # The whole envelope is a Copilot CLI session (the near misses above are near).
    whole = tmp_path / "events.jsonl"
    whole.write_text(json.dumps(_copilot_first_line()) + "\n")
    assert run_wren(["log", str(whole)], cwd=tmp_path).returncode == 0


def _first_line(agent: str) -> dict[str, object]:
    first: dict[str, object] = json.loads(fixture(agent, "simple").read_text().splitlines()[0])
    return first


# Gemini CLI's and Qwen Code's envelopes with one thing off: no agent's lines.
NEAR_OTHERS = {
    "a Qwen Code envelope whose message has no parts": {
        **_first_line("qwen"),
        "message": {"role": "user", "text": "List the files."},
    },
    "a Qwen Code envelope with no sessionId": _without(_first_line("qwen"), "sessionId"),
    "a $set of a settings file": {"$set": {"theme": "dark", "fontSize": 12}},
    "a Gemini CLI $set beside another member": {"$set": {"messages": []}, "by": "sync"},
    "a Gemini CLI header with no startTime": _without(_first_line("gemini"), "startTime"),
}


@pytest.mark.parametrize("case", sorted(NEAR_OTHERS))
def test_a_line_one_member_short_of_gemini_or_qwen_is_refused_never_read_as_their_session(
    case: str, tmp_path: Path
) -> None:
    path = tmp_path / "near.jsonl"
    path.write_text(json.dumps(NEAR_OTHERS[case]) + "\n")
    refused = run_wren(["log", str(path)], cwd=tmp_path)
    assert refused.returncode == 4, (case, refused.stdout)
    assert f"{OPENS} (none of its first lines is of their kinds)" in refused.stderr


def test_gemini_parts_of_the_wrong_shape_keep_what_they_still_say_and_lose_nothing_else(tmp_path: Path) -> None:
    """Gemini CLI's content parts are read leniently (its reader never refuses a record for one part): a bare string
    is text, an object keeps the members of the right type, a truthy `thought` is thinking, anything else is no
    part; an empty bare string is text in a prompt and none in a reply, an object's empty text is text in both."""
    header = {"sessionId": "abc12345-0000", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"}
    asked = [
        "",
        "bare reply",
        {"text": ""},
        {"text": "t1", "thought": "yes"},
        {"text": "t2", "thought": 0},
        {"text": "both", "functionCall": {"id": "c1", "name": "ls", "args": {"a": 1}}},
        {"functionCall": "not an object"},
        {"text": 7},
        3,
        None,
    ]
    told = [{"text": "hello"}, "bare", "", 5, {"text": "thinky", "thought": True}, {"functionResponse": "no"}, ["x"]]
    answered = {"functionResponse": {"id": "c1", "response": {"output": "out"}}}
    records = [
        header,
        {"id": "u1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [*told, answered]},
        {"id": "g1", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": asked},
        {"id": "g2", "timestamp": "2026-01-01T00:00:03Z", "type": "gemini", "content": {"text": "one part"}},
        {"id": "g3", "timestamp": "2026-01-01T00:00:04Z", "type": "gemini", "content": [""]},
    ]
    path = tmp_path / "session-2026-01-01T00-00-abc12345.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run_wren(["log", str(path), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    events = [{k: v for k, v in e.items() if k != "ts"} for e in doc["events"] if e["type"] != "session"]
    assert events == [
        {"seq": 2, "type": "message", "message": {"role": "user", "content": "hello\nbare\n\nthinky"}},
        {"seq": 2, "type": "tool_end", "id": "c1", "ok": True, "chars": 3},
        {"seq": 2, "type": "message", "message": {"role": "tool", "content": "out", "toolCallId": "c1"}},
        {"seq": 3, "type": "thinking", "text": "t1"},
        {
            "seq": 3,
            "type": "message",
            "message": {
                "role": "assistant",
                "content": "bare reply\n\nt2\nboth",
                "toolCalls": [{"id": "c1", "name": "ls", "args": '{"a":1}'}],
            },
        },
        {"seq": 4, "type": "message", "message": {"role": "assistant", "content": "one part"}},
    ]


def test_a_gemini_reply_whose_thoughts_calls_or_result_is_a_number_is_read_without_them_never_a_crash(
    tmp_path: Path,
) -> None:
    header = {"sessionId": "abc12345-0000", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z", "kind": "main"}
    call = {"id": "c1", "name": "ls", "args": {}, "status": "success", "result": 5, "resultDisplay": "shown"}
    records = [
        header,
        {"id": "g1", "timestamp": "2026-01-01T00:00:01Z", "type": "gemini", "content": "a", "toolCalls": [call]},
        {"id": "g2", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "b", "thoughts": 7},
        {"id": "g3", "timestamp": "2026-01-01T00:00:03Z", "type": "gemini", "content": "c", "toolCalls": 3},
    ]
    path = tmp_path / "session-2026-01-01T00-00-abc12345.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run_wren(["log", str(path), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    events = [e for e in json.loads(result.stdout)["events"] if e["type"] != "session"]
    assert [(e["seq"], e["type"]) for e in events] == [
        (2, "message"),
        (2, "tool_end"),
        (2, "message"),
        (3, "message"),
        (4, "message"),
    ]
    assert events[0]["message"]["toolCalls"] == [{"id": "c1", "name": "ls", "args": "{}"}]
    assert events[2]["message"] == {"role": "tool", "content": "shown", "toolCallId": "c1"}
    assert [e["message"]["content"] for e in events[3:]] == ["b", "c"]
