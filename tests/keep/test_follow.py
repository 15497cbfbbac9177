"""`wren keep --follow` as its own process: a change is kept as the agent writes it, and a kill -9 at any moment,
many times over while the agents' files grow and are rewritten, never damages the store (`wren verify` exits 0
after each), and every kept copy is a prefix or an earlier version of what the agent wrote."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import run_wren
from tests.keep.agents import CLINE_ID, ROOTS, keep, keep_env
from tests.waiting import until
from wren_tui.keep import store


def _start_follow(home: Path, args: tuple[str, ...] = ("--follow",), *, read: bool = True) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | keep_env(home)
    return subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "keep", *args],
        cwd=home.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if read else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _kill(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait(30)
    if child.stdout is not None:
        child.stdout.close()


def test_a_line_an_agent_appends_is_kept_while_follow_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    log = home / ROOTS["claude"] / "p" / "live.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b'{"type":"user","n":0}\n')
    child = _start_follow(home)
    try:
        assert child.stdout is not None
        while b"following" not in child.stdout.readline():
            pass
        copy = tmp_path / "kept" / "claude" / "files" / "p" / "live.jsonl"
        for n in range(1, 6):
            with open(log, "ab") as f:
                f.write(b'{"type":"user","n":%d}\n' % n)
            until(lambda: copy.exists() and copy.read_bytes() == log.read_bytes(), f"line {n} kept")
        new = home / ROOTS["codex"] / "2026" / "rollout-x.jsonl"  # an agent's folder made after it started
        new.parent.mkdir(parents=True)
        new.write_bytes(b'{"type":"session_meta"}\n')
        kept_new = tmp_path / "kept" / "codex" / "files" / "2026" / "rollout-x.jsonl"
        until(lambda: kept_new.exists() and kept_new.read_bytes() == new.read_bytes(), "a new agent folder kept", 60)
        log.unlink()
        env = keep_env(home)
        until(lambda: store.kept_files("claude", env, home)[0].changed_at is not None, "the deletion recorded")
        (kept,) = store.kept_files("claude", env, home)
        assert kept.changed_at is not None and kept.copy.read_bytes().count(b"\n") == 6
    finally:
        _kill(child)


class Agents:
    """What the agents write meanwhile, and every content they gave each file (what a kept copy may be)."""

    def __init__(self, home: Path, logs: int = 6) -> None:
        self.logs = [home / ROOTS["claude"] / f"p{i}" / "log.jsonl" for i in range(logs)]
        self.doc = home / ROOTS["cline"] / CLINE_ID / f"{CLINE_ID}.messages.json"
        self.db = home / ROOTS["opencode"] / "opencode.db"
        for path in (*self.logs, self.doc, self.db):
            path.parent.mkdir(parents=True, exist_ok=True)
        # Each log's contents, one per rewrite (the last grows): what a kept copy of it may be a prefix of.
        self.generations: dict[Path, list[bytes]] = {log: [b""] for log in self.logs}
        self.documents: set[bytes] = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.rng = random.Random(36)
        with contextlib.closing(sqlite3.connect(self.db)) as conn:
            conn.execute("pragma journal_mode = wal")
            conn.execute("create table message (id integer primary key, data text)")
            conn.commit()
        for log in self.logs:
            log.write_bytes(b"")
        self._document()

    def _document(self) -> None:
        data = json.dumps([{"n": n, "text": "x" * self.rng.randrange(200)} for n in range(self.rng.randrange(40))])
        with self.lock:
            self.documents.add(data.encode())
        part = self.doc.with_name(self.doc.name + ".tmp")
        part.write_text(data)
        os.replace(part, self.doc)  # as Cline writes it: whole, then renamed

    def run(self) -> None:
        n = 0
        with contextlib.closing(sqlite3.connect(self.db)) as conn:
            while not self.stop.is_set():
                n += 1
                log = self.logs[n % len(self.logs)]
                generations = self.generations[log]
                line = b'{"type":"assistant","n":%d,"text":"%s"}\n' % (n, b"y" * self.rng.randrange(4000))
                if self.rng.random() < 1 / 100:  # rewritten: truncated in place, or replaced by a new file
                    kept = generations[-1][: self.rng.randrange(len(generations[-1]) + 1)]
                    with self.lock:
                        generations.append(kept)
                    if self.rng.random() < 0.5:
                        log.with_name("new").write_bytes(kept)
                        os.replace(log.with_name("new"), log)
                    else:
                        os.truncate(log, len(kept))
                with self.lock:
                    generations[-1] += line
                with open(log, "ab") as f:
                    f.write(line)
                if n % 10 == 0:
                    self._document()
                if n % 25 == 0:
                    conn.execute("insert into message (data) values (?)", ("z" * 500,))
                    conn.commit()
                time.sleep(0.001)

    def check(self, kept: Path) -> None:
        """Every kept copy and version is a prefix of a content its log had, a document written, or a database
        whose rows are the first ones inserted."""
        with self.lock:
            generations = {log: list(g) for log, g in self.generations.items()}
            documents = set(self.documents)
        for log, contents in generations.items():
            folder = log.parent.name
            copies = [
                *kept.glob(f"claude/files/{folder}/log.jsonl"),
                *kept.glob(f"claude/versions/*/{folder}/log.jsonl"),
            ]
            for copy in copies:
                data = copy.read_bytes()
                assert any(g.startswith(data) for g in contents), f"{copy}: not a prefix of anything the agent wrote"
        name = self.doc.name
        for copy in [*kept.glob(f"cline/files/*/{name}"), *kept.glob(f"cline/versions/*/*/{name}")]:
            assert copy.read_bytes() in documents, f"{copy}: no document the agent wrote"
        for copy in [*kept.glob("opencode/files/opencode.db"), *kept.glob("opencode/versions/*/opencode.db")]:
            with contextlib.closing(sqlite3.connect(f"file:{copy}?mode=ro", uri=True)) as conn:
                assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
                ids = [row[0] for row in conn.execute("select id from message order by id")]
            assert ids == list(range(1, len(ids) + 1)), f"{copy}: rows that are not the first ones inserted"


def _kill_loop(tmp_path: Path, args: tuple[str, ...], logs: int, kills: int, latest: float) -> None:
    """`wren keep ARGS` killed `kills` times, each at a random moment up to `latest` seconds after it started,
    while the agents write; after each kill the store verifies and holds only what the agents wrote."""
    home = tmp_path / "home"
    agents = Agents(home, logs)
    writer = threading.Thread(target=agents.run, daemon=True)
    writer.start()
    kept = tmp_path / "kept"
    rng = random.Random(3607)
    env = keep_env(home)
    try:
        for _kill_number in range(kills):
            child = _start_follow(home, args, read=False)
            time.sleep(rng.uniform(0.01, latest))  # a random moment: starting, copying, recording, following
            _kill(child)
            verified = run_wren(["verify"], cwd=tmp_path, env=env)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            agents.check(kept)
    finally:
        agents.stop.set()
        writer.join(30)
    assert sum(k.versions for k in store.kept_files("claude", env, home)) > logs  # rewrites kept as versions
    keep(home)  # once it runs to its end, the kept copies are the agents' files as they are now
    for log in agents.logs:
        assert (kept / "claude" / "files" / log.parent.name / "log.jsonl").read_bytes() == log.read_bytes()
    assert (kept / "cline" / "files" / CLINE_ID / agents.doc.name).read_bytes() == agents.doc.read_bytes()
    verified = run_wren(["verify"], cwd=tmp_path, env=env)
    assert verified.returncode == 0 and verified.stdout.strip().endswith("checked: whole"), verified.stdout
    agents.check(kept)


def test_follow_killed_at_random_moments_many_times_leaves_a_whole_store_of_what_the_agents_wrote(
    tmp_path: Path,
) -> None:
    _kill_loop(tmp_path, ("--follow",), logs=6, kills=25, latest=2.0)


def test_keep_of_many_files_killed_at_random_moments_leaves_a_whole_store_of_what_the_agents_wrote(
    tmp_path: Path,
) -> None:
    # Many files at once: every copy made durable by one sync, then renamed, then recorded (the batch path).
    _kill_loop(tmp_path, ("-q",), logs=30, kills=30, latest=0.6)


def test_a_record_vibe_appends_to_its_journal_segment_is_kept_while_follow_runs_and_nothing_is_called_deleted(
    tmp_path: Path,
) -> None:
    import shutil

    from tests.foreign.sessions import AGENTS

    home = tmp_path / "home"
    uuid = "4267b4f3-7219-dc3b-2a3a-b41d845d58d0"
    session = home / ".vibe" / "logs" / "session" / "unified" / uuid
    shutil.copytree(AGENTS / "mistral-vibe" / "simple" / uuid, session)
    segment = session / "journal" / "0000000000000022.jsonl"  # below the session's folder, where meta.json is
    child = _start_follow(home, ("--follow", "--agent", "vibe"))
    try:
        assert child.stdout is not None
        while b"following" not in child.stdout.readline():
            pass
        copy = tmp_path / "kept" / "vibe" / "files" / uuid / "journal" / segment.name
        with open(segment, "ab") as f:
            f.write(b'{"type":"note","sequence":99,"payload":null}\n')
        until(lambda: copy.exists() and copy.read_bytes() == segment.read_bytes(), "the appended record kept", 10)
        manifest = (tmp_path / "kept" / "vibe" / "manifest.jsonl").read_bytes().splitlines()
        gone = [r["rel"] for r in map(store.unframe, manifest) if r is not None and r["op"] == "gone"]
        assert gone == []  # every file of the session is still there
    finally:
        _kill(child)
