"""`wren ls --agent` reads each unchanged session's row from the store beside search's index, and says the same.

Every listing here is compared with one made with no store (a journals folder that does not exist,
so nothing is kept): rows kept from an earlier listing, rows of files changed since (grown, cut
short, rewritten), a session held open for writing since (live, said as of now), a file removed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import run_wren
from tests.foreign.sessions import AN_HOUR, copy_session, lines_of
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
