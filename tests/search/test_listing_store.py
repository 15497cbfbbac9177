"""`wren ls --agent` reads each unchanged session's row from the store beside search's index, and says the same.

Every listing here is compared with one made with no store (a journals folder that does not exist,
so nothing is kept): rows kept from an earlier listing, rows of files changed since (grown, cut
short, rewritten), a session held open for writing since (live, said as of now), a file removed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, copy_session, lines_of
from wren_tui.foreign.live import held_for_writing
from wren_tui.search.index import index_path

HOMES = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "pi": "PI_CODING_AGENT_DIR"}
ROOTS = {"claude": "projects", "codex": "sessions", "pi": "sessions"}


def listed(tmp_path: Path, journals: Path) -> list[dict[str, Any]]:
    env = {var: str(tmp_path / agent) for agent, var in HOMES.items()}
    result = run_wren(["ls", "--agent", "all", "--json"], cwd=tmp_path, env={**env, "WREN_DIR": str(journals)})
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def same(tmp_path: Path) -> list[dict[str, Any]]:
    """The listing through the store, which must be the listing with none."""
    kept = listed(tmp_path, tmp_path / "journals")
    assert kept == listed(tmp_path, tmp_path / "no-journals-here")
    return kept


def stored(tmp_path: Path) -> set[str]:
    db = sqlite3.connect(index_path(tmp_path / "journals"))
    try:
        return {row[0] for row in db.execute("SELECT path FROM listings")}
    finally:
        db.close()


def test_ls_agent_reads_unchanged_sessions_from_the_store_and_follows_every_change(tmp_path: Path) -> None:
    (tmp_path / "journals").mkdir()
    paths = {
        (agent, name): copy_session(agent, name, tmp_path / agent / ROOTS[agent], nested=True, stem=f"{agent}-{name}")
        for agent in HOMES
        for name in ("simple", "multi-turn", "killed")
    }
    first = same(tmp_path)
    assert len(first) == 9 and stored(tmp_path) == {str(p) for p in paths.values()}
    assert same(tmp_path) == first  # every row from the store now

    # Grown, cut short, rewritten with other bytes of the same size: each read again.
    grown = paths["claude", "simple"]
    with grown.open("ab") as out:
        out.write(lines_of("claude", "multi-turn")[-1])
    cut = paths["codex", "multi-turn"]
    os.truncate(cut, cut.stat().st_size - 30)
    rewritten = paths["pi", "simple"]
    data = rewritten.read_bytes()
    rewritten.write_bytes(data.replace(b'"type":"message"', b'"type":"massage"', 1))
    for path in (grown, cut, rewritten):
        os.utime(path, (time.time() - AN_HOUR, time.time() - AN_HOUR))
    second = same(tmp_path)
    assert second != first
    assert {r["state"] for r in second if r["path"] == str(cut)} == {"torn tail"}

    # Held open for writing by another program, unchanged: its kept row, said live as of now.
    held = paths["codex", "simple"]
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'ab'); sys.stdin.read()", str(held)],
        stdin=subprocess.PIPE,
    )
    try:
        key = (held.stat().st_dev, held.stat().st_ino)
        deadline = time.monotonic() + 10
        while not held_for_writing([key]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert {r["state"] for r in same(tmp_path) if r["path"] == str(held)} == {"live"}
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    assert {r["state"] for r in same(tmp_path) if r["path"] == str(held)} == {"done"}

    # Removed: gone from the listing and from the store.
    removed = paths["pi", "killed"]
    removed.unlink()
    assert str(removed) not in {r["path"] for r in same(tmp_path)}
    assert str(removed) not in stored(tmp_path)


# `wren ARGS` with every open of a file under OPENS_UNDER written to OPENS_TO at exit (Python's audit hook
# sees each os.open and open, whoever calls it).
COUNTING = """
import atexit, os, sys
root, opened = os.environ["OPENS_UNDER"], []
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if path.startswith(root):
            opened.append(path)
sys.addaudithook(hook)
atexit.register(lambda: open(os.environ["OPENS_TO"], "w").write("".join(p + "\\n" for p in opened)))
sys.argv[0] = "wren"
from wren_tui.cli import main
sys.exit(main())
"""


def opened_by_ls(tmp_path: Path, agent: str, journals: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """`wren ls --agent AGENT --json` as a process: its rows, and the files under the agents' folders it opened."""
    report = tmp_path / "opened.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    env |= {var: str(tmp_path / f"agents-{name}") for name, var in HOMES.items()}  # one prefix: "agents-"
    env |= {"WREN_DIR": str(journals), "OPENS_UNDER": str(tmp_path / "agents-"), "OPENS_TO": str(report)}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    result = subprocess.run(
        [sys.executable, "-c", COUNTING, "ls", "--agent", agent, "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), report.read_text().splitlines()


@pytest.mark.parametrize("agent", ["claude", "codex", "pi", "all"])
def test_after_a_search_built_the_index_ls_agent_reads_no_session_file(tmp_path: Path, agent: str) -> None:
    paths = [
        copy_session(each, name, tmp_path / f"agents-{each}" / ROOTS[each], nested=True, stem=f"{each}-{name}")
        for each in HOMES
        for name in ("simple", "multi-turn", "killed")
    ]
    journals, elsewhere = tmp_path / "journals", tmp_path / "no-index-yet"
    journals.mkdir()
    elsewhere.mkdir()
    # Without the index's rows, the listing opens every file it lists (the count sees them).
    fresh, opened = opened_by_ls(tmp_path, agent, elsewhere)
    assert fresh and {row["path"] for row in fresh} <= {str(p) for p in paths}
    assert set(opened) >= {row["path"] for row in fresh}
    env = {var: str(tmp_path / f"agents-{name}") for name, var in HOMES.items()} | {"WREN_DIR": str(journals)}
    built = run_wren(["search", "--agent", agent, "zzz-no-such-words"], cwd=tmp_path, env=env)
    assert built.returncode == 1, built.stderr
    after, opened = opened_by_ls(tmp_path, agent, journals)
    assert opened == []  # every row from the index's build: no second walk through the files
    assert after == fresh


def test_ls_limit_lists_the_newest_n_sessions_of_the_whole_listing(tmp_path: Path) -> None:
    from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart
    from wren_tui.journal.writer import JournalWriter

    journals = tmp_path / "journals"
    journals.mkdir()
    for n in range(4):  # Wren's own journals, one a minute
        with JournalWriter.create(journals / f"s-20260101-00{n:02d}00-abc{n}.jsonl", fsync="none") as writer:
            writer.append(RunStart(pid=1, cwd="/work", model="scripted", version="test"))
            writer.append(Message(message=ChatMessage(role="user", content=f"hello {n}")))
            writer.append(RunEnd(reason="done"))
    for agent in HOMES:
        for name in ("simple", "multi-turn", "killed"):
            copy_session(agent, name, tmp_path / agent / ROOTS[agent], nested=True, stem=f"{agent}-{name}")
    env = {var: str(tmp_path / agent) for agent, var in HOMES.items()} | {"WREN_DIR": str(journals)}
    for agent in ([], ["--agent", "claude"], ["--agent", "all"]):
        whole = run_wren(["ls", *agent, "--json"], cwd=tmp_path, env=env)
        assert whole.returncode == 0, whole.stderr
        rows = json.loads(whole.stdout)
        assert len(rows) >= 3, rows
        for limit in (1, 2, len(rows), len(rows) + 5):
            page = run_wren(["ls", *agent, "--json", "--limit", str(limit)], cwd=tmp_path, env=env)
            assert page.returncode == 0, page.stderr
            assert json.loads(page.stdout) == rows[:limit]
        text = run_wren(["ls", *agent, "--limit", "2"], cwd=tmp_path, env=env)
        assert len(text.stdout.splitlines()) == 3, text.stdout  # the heading and two sessions
    refused = run_wren(["ls", "--limit", "0"], cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "'0' is not a number of sessions" in refused.stderr


def test_a_page_through_the_store_is_the_whole_listings_first_n_across_ties_changes_and_a_database(
    tmp_path: Path,
) -> None:
    # Three copies of one recording (equal starts: listed in the order the files are found), a file with no start,
    # other agents' files, and OpenCode's database (its sessions listed among them, all in one order).
    claude = tmp_path / "claude" / ROOTS["claude"]
    copies = [copy_session("claude", "simple", claude, nested=True, stem=f"tie-{n}") for n in range(3)]
    for name in ("multi-turn", "killed", "tool-error"):
        copy_session("claude", name, claude, nested=True, stem=f"claude-{name}")
    empty = claude / "-var-tmp-ws" / "no-start.jsonl"
    empty.write_bytes(b"")
    os.utime(empty, (time.time() - AN_HOUR, time.time() - AN_HOUR))
    for agent in ("codex", "pi"):
        for name in ("simple", "multi-turn"):
            copy_session(agent, name, tmp_path / agent / ROOTS[agent], nested=True, stem=f"{agent}-{name}")
    (tmp_path / "data" / "opencode").mkdir(parents=True)
    shutil.copyfile(AGENTS / "opencode" / "multi-turn.opencode.db", tmp_path / "data" / "opencode" / "opencode.db")
    (tmp_path / "journals").mkdir()
    env = {var: str(tmp_path / agent) for agent, var in HOMES.items()}
    env |= {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}

    def ls(agent: str, journals: Path, *more: str) -> str:
        result = run_wren(["ls", "--agent", agent, *more], cwd=tmp_path, env={**env, "WREN_DIR": str(journals)})
        assert result.returncode == 0, result.stderr
        return result.stdout

    def pages_are_the_whole_listings_first_n() -> None:
        for agent in ("claude", "all"):
            whole: list[dict[str, Any]] = json.loads(ls(agent, tmp_path / "no-store", "--json"))
            text = ls(agent, tmp_path / "no-store").splitlines()
            assert len(whole) >= 7 and len(text) == len(whole) + 1
            for limit in range(1, len(whole) + 2):
                assert json.loads(ls(agent, tmp_path / "journals", "--json", "--limit", str(limit))) == whole[:limit]
            for limit in (1, 4, len(whole)):  # the heading, then the page's rows (all: as wide as its agents' names)
                page = ls(agent, tmp_path / "journals", "--limit", str(limit))
                assert page == ls(agent, tmp_path / "no-store", "--limit", str(limit))
                assert agent == "all" or page.splitlines() == text[: limit + 1]
        # A page reads every file's start but builds only its rows: the store keeps every file's row still.
        ls("claude", tmp_path / "journals", "--json", "--limit", "1")
        assert stored(tmp_path) >= {str(path) for path in claude.rglob("*.jsonl") if path != empty}

    pages_are_the_whole_listings_first_n()  # the store made by the first listing, then read
    # Changed since the store kept them: one copy now starts a year later (first), one is gone, one is new.
    later = copies[1].read_bytes().replace(b'"timestamp":"2026', b'"timestamp":"2027')
    copies[1].write_bytes(later)
    copies[2].unlink()
    copy_session("claude", "multi-turn", claude, nested=True, stem="new-since")
    for path in (copies[1], claude / "-var-tmp-ws" / "new-since.jsonl"):
        os.utime(path, (time.time() - AN_HOUR, time.time() - AN_HOUR))
    pages_are_the_whole_listings_first_n()
    first = json.loads(ls("claude", tmp_path / "journals", "--json", "--limit", "1"))
    assert [row["path"] for row in first] == [str(copies[1])] and first[0]["started"].startswith("2027")
    assert str(copies[2]) not in stored(tmp_path)
