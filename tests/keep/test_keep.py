"""`wren keep` as a user runs it: every agent's sessions copied into the kept store, incrementally, the agents'
folders never written (byte- and mtime-identical, -wal and -shm included)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, age, copy_session
from tests.keep.agents import CLINE_ID, ROOTS, every_agent, keep, keep_env, what_is_there
from wren_tui.keep import store


def _manifest_ops(kept: Path, agent: str) -> list[tuple[str, str]]:
    manifest = (kept / agent / "manifest.jsonl").read_bytes().splitlines()
    records = [store.unframe(line) for line in manifest]
    return [(r["op"], r["rel"]) for r in records if r is not None]


def _rows(db: Path) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return sorted(conn.execute("select id from message").fetchall())


def test_every_agents_sessions_are_kept_and_their_folders_are_byte_and_mtime_identical(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = every_agent(home)
    before = what_is_there(home)
    said = keep(home)
    assert what_is_there(home) == before  # nothing written, not even an -shm; no time changed
    kept = tmp_path / "kept"
    for agent, rels in files.items():
        assert sorted(k.relative.as_posix() for k in store.kept_files(agent, keep_env(home), home)) == sorted(rels)
        for rel in rels:
            original, copy = home / ROOTS[agent] / rel, kept / agent / "files" / rel
            if agent in ("opencode", "kilo"):  # one file: its WAL's rows in it, no WAL of its own
                assert not Path(f"{copy}-wal").exists() and copy.read_bytes()[:16] == b"SQLite format 3\x00"
                assert len(_rows(copy)) > 0
            else:
                assert copy.read_bytes() == original.read_bytes(), (agent, rel)
    assert "Claude Code: 2 files; 2 new" in said and "Cline: 2 files; 2 new" in said
    assert "aider: not kept, since it keeps no folder of its own" in said
    assert not (kept / "continue" / "files" / "sessions.json").exists()  # its index is no session


def _changed_unseen(path: Path) -> None:
    """Its bytes changed in place, its size, time and inode as they were: only reading it would tell."""
    st = path.stat()
    data = path.read_bytes()
    with open(path, "r+b") as f:
        f.write(data.replace(b"user", b"USER", 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_an_unchanged_file_is_not_even_opened_and_a_grown_log_adds_only_its_new_bytes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / ROOTS["claude"]
    grows = copy_session("claude", "simple", root, nested=True, stem="grows")
    still = copy_session("claude", "multi-turn", root, nested=True, stem="still")
    keep(home)
    copy = tmp_path / "kept" / "claude" / "files" / grows.relative_to(root)
    inode = copy.stat().st_ino
    _changed_unseen(still)
    line = b'{"type":"user","message":{"role":"user","content":"more"}}\n'
    with open(grows, "ab") as f:
        f.write(line)
    age(grows, 3600 - 5)
    (tmp_path / "kept" / "scan.json").unlink()  # not the shortcut: the manifest's own record decides
    said = keep(home)
    assert f"1 grown; 1 unchanged; {len(line)} bytes kept" in said
    assert (tmp_path / "kept" / "claude" / "files" / still.relative_to(root)).read_bytes() != still.read_bytes()
    _changed_unseen(still)  # and with the shortcut
    assert "Claude Code: 2 files; nothing new" in keep(home)
    assert copy.read_bytes() == grows.read_bytes() and copy.stat().st_ino == inode  # appended in place
    assert _manifest_ops(tmp_path / "kept", "claude")[-1] == ("grow", grows.relative_to(root).as_posix())
    (kept,) = [k for k in store.kept_files("claude", keep_env(home), home) if k.relative.name == "grows.jsonl"]
    assert (kept.size, kept.versions, kept.state) == (grows.stat().st_size, 1, "kept")


def test_a_rewritten_log_and_a_truncated_one_are_new_versions_and_the_earlier_copy_is_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / ROOTS["codex"]
    rewritten = copy_session("codex", "simple", root, nested=True, stem="rewritten")
    truncated = copy_session("codex", "multi-turn", root, nested=True, stem="truncated")
    first_rewritten, first_truncated = rewritten.read_bytes(), truncated.read_bytes()
    keep(home)
    rewritten.write_bytes(first_rewritten.replace(b"notes", b"NOTES") + b"\n")  # longer, its kept bytes changed
    truncated.write_bytes(first_truncated[:500])
    said = keep(home)
    assert "1 rewritten, 1 truncated" in said
    env = keep_env(home)
    by_name = {k.relative.name.split("-")[-1]: k for k in store.kept_files("codex", env, home)}
    assert {name: (k.state, k.versions) for name, k in by_name.items()} == {
        "rewritten.jsonl": ("rewritten", 2),
        "truncated.jsonl": ("truncated", 2),
    }
    assert by_name["truncated.jsonl"].changed_at is not None
    for path, first in ((rewritten, first_rewritten), (truncated, first_truncated)):
        old, new = store.kept_versions("codex", path.relative_to(root).as_posix(), env, home)
        assert old.copy.read_bytes() == first and new.copy.read_bytes() == path.read_bytes()
        assert (old.number, new.number, new.why) == (1, 2, "truncated" if path is truncated else "rewritten")


def test_a_document_written_again_unchanged_adds_no_version_and_a_changed_one_does(tmp_path: Path) -> None:
    home = tmp_path / "home"
    every_agent(home)
    keep(home)
    messages = home / ROOTS["cline"] / CLINE_ID / f"{CLINE_ID}.messages.json"
    messages.write_bytes(messages.read_bytes())  # rewritten as Cline does at each step, the same content
    assert "1 seen" in keep(home, "--agent", "cline")
    messages.write_bytes(messages.read_bytes().replace(b"notes", b"NOTES"))
    assert "1 rewritten" in keep(home, "--agent", "cline")
    rel = f"{CLINE_ID}/{CLINE_ID}.messages.json"
    assert [v.why for v in store.kept_versions("cline", rel, keep_env(home), home)] == ["new", "rewritten"]


def test_a_database_gets_a_version_only_when_its_rows_changed_and_its_wal_is_never_touched(tmp_path: Path) -> None:
    home = tmp_path / "home"
    every_agent(home)
    keep(home)
    db = home / ROOTS["opencode"] / "opencode.db"
    os.utime(db)  # written, nothing in it changed
    before = what_is_there(home)
    assert "1 seen" in keep(home, "--agent", "opencode")
    assert what_is_there(home) == before
    with contextlib.closing(sqlite3.connect(db)) as conn:  # the agent writes a row (through its WAL)
        conn.execute("delete from message where id = (select min(id) from message)")
        conn.commit()
    before = what_is_there(home)
    assert "1 rewritten" in keep(home, "--agent", "opencode")
    assert what_is_there(home) == before
    old, new = store.kept_versions("opencode", "opencode.db", keep_env(home), home)
    assert len(_rows(old.copy)) == len(_rows(new.copy)) + 1
    with contextlib.closing(sqlite3.connect(f"file:{old.copy}?mode=ro", uri=True)) as conn:
        held = tuple(sorted(row[0] for row in conn.execute("select id from session")))
    assert old.sessions == new.sessions == held and len(held) > 0  # each version says which sessions it holds


def test_a_session_the_agent_deleted_stays_kept_and_is_marked_deleted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / ROOTS["pi"]
    gone = copy_session("pi", "simple", root, nested=True, stem="gone")
    keep(home)
    data = gone.read_bytes()
    gone.unlink()
    (kept,) = store.kept_files("pi", keep_env(home), home)
    assert (kept.state, kept.changed_at) == ("deleted", None)  # no keep since: when is not known
    assert "1 deleted" in keep(home)
    (kept,) = store.kept_files("pi", keep_env(home), home)
    assert kept.state == "deleted" and kept.changed_at is not None and kept.copy.read_bytes() == data


def test_aider_is_kept_only_from_a_folder_named_and_wrens_own_journals_never(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(AGENTS / "aider" / "simple.chat.history.md", project / ".aider.chat.history.md")
    said = keep(home, "--agent", "aider")
    assert said.startswith("aider: not kept, since it keeps no folder of its own")
    said = keep(home, "--agent", "aider", "--from", str(project))
    assert "aider: 1 file; 1 new" in said
    history = project / ".aider.chat.history.md"
    copy = tmp_path / "kept" / "aider" / "files" / history.relative_to(history.anchor)  # by its whole path
    assert copy.read_bytes() == history.read_bytes()
    (kept,) = store.kept_files("aider", keep_env(home), home)
    assert kept.original == history and kept.state == "kept"
    other = tmp_path / "other"
    other.mkdir()
    assert "no sessions found of aider" in keep(home, "--agent", "aider", "--from", str(other))
    assert store.kept_files("aider", keep_env(home), home)[0].state == "kept"  # not looked at: not deleted
    refused = run_wren(["keep", "--agent", "claude", "--from", str(other)], cwd=tmp_path, env=keep_env(home))
    assert refused.returncode == 1 and "--from is for an agent with no folder of its own (aider)" in refused.stderr
    # A Wren journal in an agent's folder (its line is Wren's) is not another agent's session.
    wren = home / ROOTS["claude"] / "p" / "s-20260101-000000-abcd.jsonl"
    wren.parent.mkdir(parents=True)
    wren.write_bytes(b'{"seq":1,"ts":"2026-01-01T00:00:00Z","type":"run_start","crc":"00000000"}\n')
    keep(home, "--agent", "claude")
    assert not (tmp_path / "kept" / "claude" / "files" / "p" / wren.name).exists()
    # --help's list of the agents kept by default is the same: every agent but aider.
    helped = " ".join(run_wren(["keep", "--help"], cwd=tmp_path, env=keep_env(home)).stdout.split())
    defaults = helped.split("default: every agent with a folder of its own: ")[1].split(")")[0].split(", ")
    assert "aider" not in defaults and "claude" in defaults and "vibe" in defaults, helped


def test_a_second_keep_while_one_holds_the_store_is_refused_in_one_sentence(tmp_path: Path) -> None:
    from wren_tui.keep.keeping import StoreLock

    home = tmp_path / "home"
    held = StoreLock(tmp_path / "kept")
    try:
        done = run_wren(["keep"], cwd=tmp_path, env=keep_env(home))
    finally:
        held.close()
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        == f"wren: {tmp_path / 'kept'}: another `wren keep` is writing this store (a --follow?); wait for it or stop it"
    )


def test_a_store_that_cannot_be_made_is_said_in_one_sentence_with_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "a-file").write_bytes(b"")
    done = run_wren(["keep"], cwd=tmp_path, env=keep_env(home) | {"WREN_KEEP_DIR": str(tmp_path / "a-file" / "kept")})
    assert done.returncode == 1
    said = "the kept store cannot be made there (set WREN_KEEP_DIR to a folder you can write)"
    assert done.stderr == f"wren: {tmp_path / 'a-file' / 'kept'}: not a directory; {said}\n"
    usage = run_wren(["keep", "--json"], cwd=tmp_path, env=keep_env(home))
    assert usage.returncode == 2 and "--json goes with --status" in usage.stderr


def test_keep_verify_and_status_work_on_a_simulated_windows_as_on_linux(tmp_path: Path) -> None:
    from tests.conftest import REPO

    home = tmp_path / "home"
    every_agent(home)
    before = what_is_there(home)
    windows = {"PYTHONPATH": os.pathsep.join([str(REPO / "tests" / "simulated_windows"), str(REPO)])}
    env = keep_env(home) | windows
    done = run_wren(["keep"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "Claude Code: 2 files; 2 new" in done.stdout and what_is_there(home) == before
    verified = run_wren(["verify"], cwd=tmp_path, env=env)
    assert verified.returncode == 0 and verified.stdout.strip().endswith("checked: whole"), verified.stdout
    status = run_wren(["keep", "--status"], cwd=tmp_path, env=env)
    assert status.returncode == 0 and "Claude Code: 2 files kept" in status.stdout
    for agent in ("claude", "cline", "opencode"):
        assert {k.state for k in store.kept_files(agent, keep_env(home), home)} == {"kept"}


def test_a_session_whose_name_is_not_utf8_is_said_in_one_sentence_and_the_others_are_still_kept(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    root = home / ROOTS["claude"]
    good = copy_session("claude", "simple", root, nested=True, stem="good")
    bad = os.fsdecode(os.path.join(os.fsencode(good.parent), b"bad\xff.jsonl"))
    shutil.copy(good, bad)
    folder = os.fsdecode(os.path.join(os.fsencode(root), b"proj\xfe"))
    os.makedirs(folder)
    shutil.copy(good, os.path.join(folder, "inside.jsonl"))
    age(good, 3600)
    done = run_wren(["keep", "--agent", "claude"], cwd=tmp_path, env=keep_env(home))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "bad\\xff.jsonl: its name is not UTF-8, so it cannot be kept (rename it)" in done.stderr
    assert "proj\\xfe: its name is not UTF-8" in done.stderr
    assert [k.relative.name for k in store.kept_files("claude", keep_env(home), home)] == ["good.jsonl"]
    again = run_wren(["keep", "--agent", "claude"], cwd=tmp_path, env=keep_env(home))
    assert "Traceback" not in again.stderr and "1 file; nothing new" in again.stdout
    vibe = home / ".vibe" / "logs" / "session" / "unified" / "one"
    (vibe / "journal").mkdir(parents=True)
    (vibe / "meta.json").write_bytes(b'{"session_id": "one"}')
    (vibe / "journal" / "0000000000000001.jsonl").write_bytes(b"{}\n")
    with open(os.path.join(os.fsencode(vibe / "journal"), b"0000000000000002\xff.jsonl"), "wb") as f:
        f.write(b"{}\n")  # kept with the session (`Folder.kept_with`), not found by the walk itself
    done = run_wren(["keep", "--agent", "vibe"], cwd=tmp_path, env=keep_env(home))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "0000000000000002\\xff.jsonl: its name is not UTF-8" in done.stderr
    assert sorted(k.relative.as_posix() for k in store.kept_files("vibe", keep_env(home), home)) == [
        "one/journal/0000000000000001.jsonl",
        "one/meta.json",
    ]


def _damage_line(manifest: Path, op: str, nth: int) -> None:
    """One byte of the manifest's `nth` `op` line changed (its CRC no longer matches: the disk's bit rot)."""
    lines = manifest.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if f'"op":"{op}"'.encode() in line][nth]
    sha = lines[at].index(b'"sha256":"') + len(b'"sha256":"')
    lines[at] = lines[at][:sha] + b"X" + lines[at][sha + 1 :]
    manifest.write_bytes(b"".join(lines))


def test_a_damaged_manifest_line_never_makes_keep_cut_or_replace_a_kept_copy_of_a_deleted_session(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    kept = tmp_path / "kept"
    log = copy_session("pi", "simple", home / ROOTS["pi"], nested=True, stem="log")
    keep(home)
    for n in (1, 2):  # two grow lines: the first damaged, the second no longer follows from what counts
        with open(log, "ab") as f:
            f.write(b'{"type":"message","id":"more%d","message":{"role":"user","content":"more"}}\n' % n)
        age(log, 3600 - 10 * n)
        keep(home)
    grown = log.read_bytes()
    continued = home / ROOTS["continue"] / f"{CLINE_ID}.json"
    continued.parent.mkdir(parents=True)
    continued.write_bytes(b'{"sessionId":"a","title":"first","history":[]}')
    age(continued, 3600)
    keep(home)
    continued.write_bytes(b'{"sessionId":"a","title":"second, rewritten","history":[]}')
    age(continued, 3590)
    keep(home)
    rewritten = continued.read_bytes()
    _damage_line(kept / "pi" / "manifest.jsonl", "grow", 0)
    _damage_line(kept / "continue" / "manifest.jsonl", "copy", -1)
    log.unlink()
    continued.unlink()
    done = run_wren(["keep"], cwd=tmp_path, env=keep_env(home))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{kept / 'pi' / 'manifest.jsonl'}: line 2 is damaged" in done.stderr
    assert (kept / "pi" / "files" / log.relative_to(home / ROOTS["pi"])).read_bytes() == grown
    assert (kept / "continue" / "files" / continued.name).read_bytes() == rewritten


def test_every_folder_a_keep_makes_is_a_durable_name_in_its_parent_before_the_manifest_counts_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wren_tui import portable
    from wren_tui.keep import keeping

    home = tmp_path / "home"
    root = home / ROOTS["claude"]
    copy_session("claude", "simple", root, nested=True, stem="first")
    kept = tmp_path / "kept"
    said: list[tuple[str, Path]] = []
    fsync_folder, append = portable.fsync_folder, keeping.Appender.append
    monkeypatch.setattr(portable, "fsync_folder", lambda f: (said.append(("fsync", Path(f))), fsync_folder(f))[1])
    monkeypatch.setattr(keeping.Appender, "append", lambda self, r: (said.append(("count", kept)), append(self, r))[1])
    monkeypatch.setattr(keeping, "_made", set())
    # One file: each folder fsynced, no sync(2).
    keeping.keep(keeping.Asked(["claude"], None, keep_env(home), home, kept))
    first_count = said.index(("count", kept))
    synced_before = {path for what, path in said[:first_count] if what == "fsync"}
    made = [Path(d) for d, _dirs, _files in os.walk(kept) if Path(d) != kept]
    assert made, "the keep made its folders"
    assert [d for d in made if d.parent not in synced_before] == []  # a power cut loses none of the names
    assert ("fsync", kept / "claude") in said[first_count:]  # the manifest's own new name


def test_a_variable_or_an_agents_folder_that_is_not_utf8_keeps_every_session_without_a_traceback(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    claude = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"claude\xff"))
    session = copy_session("claude", "simple", Path(claude) / "projects", nested=True, stem="one")
    env = keep_env(home) | {"BACKUP_DIR": os.fsdecode(b"/tmp/backup\xfe"), "CLAUDE_CONFIG_DIR": claude}
    for _ in range(2):  # the second: from what the first left (no cache of it)
        done = run_wren(["keep", "--agent", "claude"], cwd=tmp_path, env=env)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    (kept,) = store.kept_files("claude", env, home)
    assert kept.copy.read_bytes() == session.read_bytes()
