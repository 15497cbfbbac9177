"""Mistral Vibe's sessions (`~/.vibe/logs/session/unified/<uuid>/`: `meta.json`, `journal/<seq>.jsonl` segments,
compacted `generations/` and their `chunks/`) as a user meets them: `wren ls --agent vibe` from `$VIBE_HOME` or
`~/.vibe`, honest states (a run killed in its tool, after the text it said before the call, is stopped mid-call,
and live only while its journal changes), `wren log` reading the compacted first turn of a resumed session and
then the journal after it, never a turn twice, `wren search --agent vibe`, and a fork into a Wren journal that
`wren resume` continues; nothing of the session's folder is changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, age, fork_and_resume, wren_json
from wren_tui.foreign import FORMATS, detect
from wren_tui.foreign.listing import list_agent_sessions

VIBE = AGENTS / "mistral-vibe"
IDS = {
    "simple": "4267b4f3-7219-dc3b-2a3a-b41d845d58d0",
    "tool-error": "71243ad1-6e7b-d466-0b5e-b8ff27f59b56",
    "multi-turn": "d59bcb22-c5f9-dcfd-af83-c58eb8cbec38",
}
RECORDED_CWD = "/home/user/project/ws"
FIRST = "0000000000000001.jsonl"
# The simple run's journal up to the tool's effect appended `running` (record 9), after the text it said before
# the call (record 7): where a kill during the tool leaves it (growth-simple.log: 9 lines while the tool ran).
KILLED_AT = 9


def session(root: Path, scenario: str, *, folder: str | None = None, age_s: float = AN_HOUR) -> Path:
    """A recorded session where Vibe keeps it (`<uuid>/meta.json` beside `journal/`, `generations/`, `chunks/`), every
    file `age_s` old; its meta.json."""
    dest = root / (folder or IDS[scenario])
    shutil.copytree(VIBE / scenario / IDS[scenario], dest)
    for path in dest.rglob("*"):
        if path.is_file():
            age(path, age_s)
    return dest / "meta.json"


def killed(root: Path, *, folder: str = "0000-killed", age_s: float = AN_HOUR) -> Path:
    """What the simple run killed during its tool leaves: its first segment up to the running effect, and neither
    the generation nor the next segment that the run's end writes."""
    meta = session(root, "simple", folder=folder, age_s=age_s)
    journal = meta.parent / "journal" / FIRST
    journal.write_bytes(b"".join(journal.read_bytes().splitlines(keepends=True)[:KILLED_AT]))
    (meta.parent / "journal" / "0000000000000022.jsonl").unlink()
    shutil.rmtree(meta.parent / "generations" / "0000000000000021")
    age(journal, age_s)
    return meta


def _said(doc: object) -> list[tuple[str, str]]:
    assert isinstance(doc, dict)
    return [(e["message"]["role"], e["message"]["content"]) for e in doc["events"] if e["type"] == "message"]


def test_ls_lists_vibes_sessions_from_its_folder_with_honest_states_and_tokens(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / ".vibe" / "logs" / "session" / "unified"
    session(sessions, "simple")
    session(sessions, "multi-turn")
    killed(sessions)
    rows = wren_json(["ls", "--agent", "vibe"], tmp_path, env={"HOME": str(home)})
    assert isinstance(rows, list)
    by_id = {r["id"]: r for r in rows}
    assert {k: (r["state"], r["project"]) for k, r in by_id.items()} == {
        IDS["simple"]: ("done", RECORDED_CWD),
        IDS["multi-turn"]: ("done", RECORDED_CWD),
        "0000-killed": ("stopped mid-call", RECORDED_CWD),
    }
    assert all(r["agent"] == "vibe" for r in rows)
    # Each model call's tokens; the compacted first turn's as the generation totals them (1800 in, 60 out).
    assert by_id[IDS["simple"]]["tokens"] == 2 * 930 and by_id[IDS["multi-turn"]]["tokens"] == 4 * 930
    moved = tmp_path / "vibe-home"
    session(moved / "logs" / "session" / "unified", "tool-error")
    rows = wren_json(["ls", "--agent", "vibe"], tmp_path, env={"HOME": str(home), "VIBE_HOME": str(moved)})
    assert isinstance(rows, list) and [r["id"] for r in rows] == [IDS["tool-error"]]


def test_a_killed_run_is_live_only_while_its_journal_changes_though_its_meta_json_is_old(tmp_path: Path) -> None:
    meta = killed(tmp_path)
    journal = meta.parent / "journal" / FIRST
    age(journal, 2.0)  # the journal just written; meta.json an hour old
    written = journal.stat().st_mtime
    [row] = list_agent_sessions([(FORMATS["vibe"], tmp_path)], now=written + 1)
    assert row.state == "live"
    [row] = list_agent_sessions([(FORMATS["vibe"], tmp_path)], now=written + AN_HOUR)
    assert row.state == "stopped mid-call"


def test_a_killed_run_shows_the_text_said_before_its_call_then_the_call_with_no_result(tmp_path: Path) -> None:
    meta = killed(tmp_path)
    doc = wren_json(["log", str(meta)], tmp_path)
    assert _said(doc) == [
        ("user", "List the files in this folder and tell me what they are."),
        ("assistant", "I'll list the folder first."),
        ("assistant", ""),
    ]
    assert isinstance(doc, dict)
    [call] = [e for e in doc["events"] if e["type"] == "message" and e["message"].get("toolCalls")]
    assert call["message"]["toolCalls"][0]["name"] == "file_system.bash"
    assert not [e for e in doc["events"] if e["type"] == "tool_end"]


def test_log_reads_the_compacted_first_turn_then_the_journal_after_it_never_a_turn_twice(tmp_path: Path) -> None:
    meta = session(tmp_path, "multi-turn")
    assert not (meta.parent / "journal" / FIRST).exists()  # the first run's segment: gone after the compaction
    doc = wren_json(["log", str(meta)], tmp_path)
    assert isinstance(doc, dict) and doc["agent"] == "vibe" and doc["id"] == IDS["multi-turn"]
    assert _said(doc) == [
        ("user", "What does notes.txt say?"),
        ("assistant", ""),
        ("tool", "TODO\n- buy milk\n- fix the flaky test\n"),
        ("assistant", "notes.txt is a short to-do list with two items."),
        ("user", "How many lines does hello.py have?"),
        ("assistant", ""),
        ("tool", "3 hello.py\n"),
        ("assistant", "hello.py has 3 lines."),
    ]
    assert doc["skipped"] == {"known": {}, "unknown": {}, "malformed": {}}
    points = wren_json(["fork", str(meta)], tmp_path)
    assert isinstance(points, list)  # each turn's prompt and its last answer, by line of the reading
    assert [(p["seq"], p["role"]) for p in points] == [(2, "user"), (5, "assistant"), (7, "user"), (12, "assistant")]


def test_a_turn_is_shown_once_whether_its_segment_is_still_there_or_only_its_compacted_generation(
    tmp_path: Path,
) -> None:
    whole = session(tmp_path / "a", "simple")
    compacted = session(tmp_path / "b", "simple")
    (compacted.parent / "journal" / FIRST).unlink()  # what Vibe's compaction does to the segment it covers
    both, only = _said(wren_json(["log", str(whole)], tmp_path)), _said(wren_json(["log", str(compacted)], tmp_path))
    assert both == only
    assert [text for role, text in both if role == "user"] == [
        "List the files in this folder and tell me what they are."
    ]
    assert [text for role, text in both if role == "assistant" and text] == [
        "I'll list the folder first.",
        "The folder holds two files: hello.py (a tiny script) and notes.txt.",
    ]


def test_log_shows_the_failed_call_its_time_and_each_model_calls_tokens(tmp_path: Path) -> None:
    meta = session(tmp_path, "tool-error")
    assert detect(meta) is FORMATS["vibe"]
    doc = wren_json(["log", str(meta)], tmp_path)
    assert isinstance(doc, dict)
    said = _said(doc)
    assert said[0] == ("user", "Show me missing.txt please.")
    assert said[2] == ("tool", "cat: missing.txt: No such file or directory\n")
    [end] = [e for e in doc["events"] if e["type"] == "tool_end"]
    assert end["ok"] is False and end["elapsedMs"] == 73  # exit status 1; effect created 19.216 s, settled 19.289 s
    assert [(u["inputTokens"], u["outputTokens"]) for u in doc["events"] if u["type"] == "usage"] == [(900, 30)] * 2


def test_a_journal_segment_named_reads_its_whole_session_and_a_folder_lists_each_session_once(tmp_path: Path) -> None:
    meta = session(tmp_path / "unified", "simple")
    segment = meta.parent / "journal" / FIRST
    assert _said(wren_json(["log", str(segment)], tmp_path)) == _said(wren_json(["log", str(meta)], tmp_path))
    session(tmp_path / "unified", "multi-turn")
    rows = wren_json(["ls", "--agent", "all", "--dir", str(tmp_path / "unified")], tmp_path)
    assert isinstance(rows, list)
    assert sorted((r["agent"], r["id"]) for r in rows) == sorted([("vibe", IDS["multi-turn"]), ("vibe", IDS["simple"])])


def test_search_agent_vibe_finds_a_word_of_the_compacted_turn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session(home / ".vibe" / "logs" / "session" / "unified", "multi-turn")
    found = run_wren(["search", "to-do list", "--agent", "vibe", "--json"], cwd=tmp_path, env={"HOME": str(home)})
    assert found.returncode == 0, found.stderr
    assert IDS["multi-turn"] in found.stdout and "to-do list" in found.stdout


def test_fork_a_vibe_session_into_wren_then_resume_leaves_its_folder_unchanged(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    meta = session(tmp_path / "vibe", "multi-turn")
    doc = json.loads(meta.read_text())
    doc["environment"]["working_directory"] = str(workspace)
    meta.write_text(json.dumps(doc))
    age(meta, AN_HOUR)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in meta.parent.rglob("*") if p.is_file()}
    start, said, resumed = fork_and_resume(meta, 5, tmp_path / "journals", tmp_path)
    assert start.cwd == str(workspace)
    assert said == [
        ("user", "What does notes.txt say?"),
        ("assistant", ""),
        ("tool", "TODO\n- buy milk\n- fix the flaky test\n"),
        ("assistant", "notes.txt is a short to-do list with two items."),
    ]
    assert f"working in {workspace}" in resumed.stdout
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in meta.parent.rglob("*") if p.is_file()}
    assert after == before and sorted(os.listdir(meta.parent)) == ["chunks", "generations", "journal", "meta.json"]


def test_otel_sends_a_vibe_session_from_its_export_with_its_calls_not_its_meta_json_as_lines(tmp_path: Path) -> None:
    from tests.otel.collector import running_collector

    meta = session(tmp_path, "multi-turn")
    with running_collector() as collector:
        done = run_wren(["otel", str(meta), "--endpoint", collector.url], cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        [root] = collector.named("invoke_agent ")
        tools = collector.named("execute_tool ")
    assert root.name == "invoke_agent vibe"
    names = sorted(tool.name for tool in tools)
    assert names == ["execute_tool file_system.bash", "execute_tool file_system.read_file"]
    assert all(tool.parent_span_id == root.span_id for tool in tools)


def test_a_segment_compaction_deletes_while_the_session_is_read_is_read_from_its_generation_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wren_tui.foreign import vibe

    meta = session(tmp_path / "live", "simple")
    compacted = session(tmp_path / "compacted", "simple")
    (compacted.parent / "journal" / FIRST).unlink()
    read = vibe._read

    def compacting(path: Path) -> bytes:
        if path.name == FIRST and path.exists():
            path.unlink()  # Vibe's compaction, between the listing of the segments and their reading
        return read(path)

    monkeypatch.setattr(vibe, "_read", compacting)
    assert vibe.export(meta) == vibe.export(compacted)
