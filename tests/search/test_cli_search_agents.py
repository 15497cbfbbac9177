"""`wren search` over other agents' sessions (Claude Code, Codex, pi): the recordings in tests/fixtures/external.

As a person runs it: a separate process, the recordings copied into tmp_path, either into one folder
named with --dir (each file the agent's whose lines it holds) or into each agent's own folder named
by its variable (with Wren's journals in WREN_DIR), never the home folder's.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import run_wren
from tests.tui.journals import finished_story, user, write_journal

EXTERNAL = Path(__file__).resolve().parent.parent / "fixtures" / "external"
CLAUDE = EXTERNAL / "claude-code" / "agentlogs_crud.jsonl"
CODEX = EXTERNAL / "codex" / "agentlogs_crud_rollout.jsonl"
CODEX_TORN = EXTERNAL / "codex" / "claude-code-log_rollout_malformed_tail.jsonl"
PI = EXTERNAL / "pi" / "2026-02-03T22-02-10-000Z_crud.jsonl"  # its name in pi's folder: <time>_<session id>
WREN = "s-20250301-093000-demo"


def rows(result: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def sessions(result: Any) -> list[tuple[str, str]]:
    """(agent, session) of each hit, in order, each once."""
    return list(dict.fromkeys((r["agent"], r["session"]) for r in rows(result) if r["type"] == "hit"))


def one_folder(tmp_path: Path) -> Path:
    """A Wren journal and the three agents' recordings in one folder, oldest to newest: Wren, Claude Code, Codex, pi."""
    folder = tmp_path / "mixed"
    write_journal(folder / f"{WREN}.jsonl", [*finished_story(), user("tell me a joke about zero")])
    shutil.copy(CLAUDE, folder / "8122657c-claude.jsonl")
    shutil.copy(CODEX, folder / "rollout-crud.jsonl")
    shutil.copy(CODEX_TORN, folder / "rollout-torn.jsonl")
    shutil.copy(EXTERNAL / "pi" / "agentlogs_crud.jsonl", folder / PI.name)
    names = [f"{WREN}.jsonl", "8122657c-claude.jsonl", "rollout-torn.jsonl", "rollout-crud.jsonl", PI.name]
    for age, name in enumerate(reversed(names)):
        os.utime(folder / name, (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    return folder


def test_search_all_in_a_folder_finds_every_agents_sessions_newest_first(tmp_path: Path) -> None:
    folder = one_folder(tmp_path)
    result = run_wren(["search", "joke", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sessions(result) == [
        ("pi", "crud"),
        ("codex", "rollout-crud"),
        ("claude", "8122657c-claude"),
        ("wren", WREN),
    ]
    claude = [r for r in rows(result) if r.get("agent") == "claude"]
    # Claude Code's lines by number: the request, replies, the calls that name JOKE.md and their results.
    assert [(r["line"], r["role"], r["tool"]) for r in claude[:6]] == [
        (2, "user", None),
        (3, "assistant", None),
        (4, "tool", "TodoWrite"),
        (6, "assistant", None),
        (7, "tool", "Write"),
        (9, "tool", None),
    ]
    first = claude[0]
    assert first["snippet"][first["matchStart"] : first["matchEnd"]] == "JOKE"
    assert first["ts"] == "2025-10-12T21:35:53.825Z" and first["part"] == 0
    assert first["project"] == "/Users/philipp/dev/vibeinsights/fixtures/claudecode"
    assert first["path"] == str(folder / "8122657c-claude.jsonl") and "seq" not in first
    # A Wren journal is still a Wren journal (by seq), beside the others.
    assert [(r["seq"], r["role"]) for r in rows(result) if r.get("agent") == "wren"] == [
        (len(finished_story()) + 1, "user")
    ]


def test_a_damaged_recording_is_searched_up_to_where_reading_stops_and_the_list_says_so(tmp_path: Path) -> None:
    folder = one_folder(tmp_path)
    result = run_wren(["search", "joke", "--agent", "codex", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sessions(result) == [("codex", "rollout-crud")]
    stopped = [r for r in rows(result) if r["type"] == "stopped"]
    assert [(r["session"], r["stoppedAtLine"], r["reason"], r["torn"]) for r in stopped] == [
        ("rollout-torn", 3, "it is not JSON", False)
    ]
    text = run_wren(["search", "joke", "--agent", "codex", "--dir", str(folder)], cwd=tmp_path)
    assert "rollout-torn  codex\n  reading stops at line 3 (byte 323): it is not JSON" in text.stdout
    assert "      line 5  2026-01-25T10:32:00.708Z  user" in text.stdout


def test_a_thinking_block_is_searched_as_thinking_and_role_narrows_to_it(tmp_path: Path) -> None:
    folder = one_folder(tmp_path)
    result = run_wren(
        ["search", "joke", "--agent", "pi", "--role", "thinking", "--dir", str(folder), "--json"], cwd=tmp_path
    )
    found = [(r["line"], r["part"], r["kind"]) for r in rows(result) if r["type"] == "hit"]
    assert found == [(5, 0, "reasoning"), (9, 0, "reasoning"), (13, 0, "reasoning")]


def test_without_dir_each_agent_is_searched_in_its_own_folder(tmp_path: Path) -> None:
    journals = tmp_path / "wren"
    write_journal(journals / f"{WREN}.jsonl", [user("a joke, please")])
    claude = tmp_path / "claude" / "projects" / "-Users-philipp-dev"
    codex = tmp_path / "codex" / "sessions" / "2026" / "01" / "25"
    pi = tmp_path / "pi" / "sessions" / "--Users-philipp-dev--"
    for folder in (claude, codex, pi):
        folder.mkdir(parents=True)
    shutil.copy(CLAUDE, claude / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl")
    shutil.copy(CODEX, codex / "rollout-2026-01-25T10-31-58-crud.jsonl")
    shutil.copy(EXTERNAL / "pi" / "agentlogs_crud.jsonl", pi / PI.name)
    env = {
        "WREN_DIR": str(journals),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
    }
    result = run_wren(["search", "joke", "--json"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert {agent for agent, _session in sessions(result)} == {"wren", "claude", "codex", "pi"}
    only = run_wren(["search", "joke", "--agent", "claude", "--json"], cwd=tmp_path, env=env)
    assert sessions(only) == [("claude", "8122657c-fe54-4dc9-89a3-20049e8a84f7")]
    none = run_wren(["search", "Kestrel", "--agent", "codex"], cwd=tmp_path, env=env)
    assert (none.returncode, none.stdout, none.stderr) == (1, "", "")


def test_dir_naming_another_agents_folder_keeps_the_index_in_wrens_state_folder_not_there(tmp_path: Path) -> None:
    claude_home = tmp_path / "claude"
    project = claude_home / "projects" / "-Users-philipp-dev"
    project.mkdir(parents=True)
    shutil.copy(CLAUDE, project / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl")
    before = sorted(p.relative_to(claude_home) for p in claude_home.rglob("*"))
    state = tmp_path / "state"
    env = {"CLAUDE_CONFIG_DIR": str(claude_home), "XDG_STATE_HOME": str(state)}
    for folder in (claude_home / "projects", project):  # the agent's folder, and one inside it
        first = run_wren(["search", "joke", "--dir", str(folder), "--json"], cwd=tmp_path, env=env)
        again = run_wren(["search", "joke", "--dir", str(folder), "--json"], cwd=tmp_path, env=env)
        assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
        assert sessions(first) == sessions(again) == [("claude", "8122657c-fe54-4dc9-89a3-20049e8a84f7")]
    # Claude Code's folder holds exactly what it held: no .index, no -wal, no listing store.
    assert sorted(p.relative_to(claude_home) for p in claude_home.rglob("*")) == before
    kept = sorted((state / "wren" / "indexes").glob("*/search.sqlite"))
    assert len(kept) == 2, kept  # one index a folder named, in Wren's own state folder
    # A folder that is no agent's keeps its index in itself, as before.
    mixed = one_folder(tmp_path)
    assert run_wren(["search", "joke", "--dir", str(mixed)], cwd=tmp_path, env=env).returncode == 0
    assert (mixed / ".index" / "search.sqlite").is_file()


def test_a_session_file_whose_name_is_not_utf8_is_searched_and_listed_every_time_not_a_traceback(
    tmp_path: Path,
) -> None:
    # A name the file system holds as bytes that are not UTF-8 (Python: a lone surrogate): the index and the listing
    # store keep paths as SQLite text, which cannot hold it. Such a file is read as it is, each time, not kept.
    journals = tmp_path / "journals"
    journals.mkdir()
    claude = tmp_path / "claude" / "projects" / "-work-demo"
    claude.mkdir(parents=True)
    odd = Path(os.fsdecode(os.fsencode(claude) + b"/8122657c-\xff.jsonl"))
    shutil.copy(CLAUDE, odd)
    shutil.copy(CLAUDE, claude / "8122657c-plain.jsonl")
    env = {"WREN_DIR": str(journals), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    for _cold_then_warm in range(2):
        found = run_wren(["search", "joke", "--agent", "claude", "-l"], cwd=tmp_path, env=env)
        assert found.returncode == 0, found.stderr
        assert "Traceback" not in found.stderr
        assert "8122657c-<U+DCFF>" in found.stdout and "8122657c-plain" in found.stdout
        listed = run_wren(["ls", "--agent", "claude"], cwd=tmp_path, env=env)
        assert listed.returncode == 0, listed.stderr
        assert "8122657c-<U+DCFF>" in listed.stdout and "8122657c-plain" in listed.stdout
    as_json = run_wren(["search", "joke", "--agent", "claude", "--json"], cwd=tmp_path, env=env)
    assert as_json.returncode == 0, as_json.stderr
    assert str(odd) in {r["path"] for r in rows(as_json)}  # its escape read back: the name's very bytes
    listed_json = run_wren(["ls", "--agent", "claude", "--json"], cwd=tmp_path, env=env)
    assert listed_json.returncode == 0, listed_json.stderr
    assert str(odd) in {r["path"] for r in json.loads(listed_json.stdout)}
    # A page that ends before it: the next page's cursor names its path, and the next page starts there.
    os.utime(odd, (1_700_000_000, 1_700_000_000))  # the older: listed second
    first = run_wren(["search", "joke", "--agent", "claude", "-l", "--limit", "1"], cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    assert "8122657c-plain" in first.stdout and "8122657c-<U+DCFF>" not in first.stdout
    after = first.stderr.split("next page: --after ")[1].split()[0]
    rest = run_wren(["search", "joke", "--agent", "claude", "-l", "--after", after], cwd=tmp_path, env=env)
    assert rest.returncode == 0, rest.stderr
    assert "8122657c-<U+DCFF>" in rest.stdout and "8122657c-plain" not in rest.stdout
    assert odd.read_bytes() == CLAUDE.read_bytes()  # only read


def test_an_agents_folder_that_cannot_be_listed_is_said_not_taken_for_one_not_there(tmp_path: Path) -> None:
    journals = tmp_path / "journals"
    journals.mkdir()
    typo = tmp_path / "claude-config"  # CLAUDE_CONFIG_DIR naming a file: its projects folder is not a folder
    typo.write_text("not a folder\n")
    env = {"WREN_DIR": str(journals), "CLAUDE_CONFIG_DIR": str(typo)}
    result = run_wren(["search", "joke", "--agent", "claude"], cwd=tmp_path, env=env)
    assert result.returncode == 1, result.stderr
    assert f"{typo / 'projects'}: not a directory, so its sessions cannot be read; they were not searched" in (
        result.stderr
    )
    every = run_wren(["search", "joke"], cwd=tmp_path, env=env)  # every agent: the same sentence for Claude Code's
    assert f"{typo / 'projects'}: not a directory" in every.stderr
