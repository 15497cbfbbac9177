"""`wren keep` over the bench's 2,000 Claude Code sessions (issue 36), ratios in one run.

The corpus is search's (`bench_search_index.corpus`: 2,000 sessions in 50 projects, about WREN_BENCH_INDEX_KB kB
each, 350 by default: about 700 MB), in a temporary folder.

- `wren keep` from nothing (a fresh store) against `cp -a` of the same folder, target at most 1.5x; beside it
  `cp -a` then `sync`, since every kept copy is durable before it counts and cp's are not;
- after one line appended to one session, the next `wren keep` against `wren keep --help` (start-up), target at
  most 1.3x;
- `wren keep --follow`: from an append to one session to the kept copy holding it, the slowest of 20, target at
  most 1 s;
- space: after 20 rounds of a line appended to 10 sessions, each kept, the store's bytes against the agent's files'
  bytes (appended logs kept once: no copy per version), target at most 1.01.
"""

from __future__ import annotations

import compileall
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wren_tui
from tests.bench import BenchRow, absolute, compare
from tests.bench.bench_search_index import SESSIONS, corpus

PAIRED = 7
APPENDS = 20
LINE = b'{"type":"user","message":{"role":"user","content":"one more line"},"uuid":"%d"}\n'


def _wren() -> list[str]:
    return [sys.executable, "-m", "wren_tui"]


def _timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _store_size(root: Path) -> int:
    seen: set[int] = set()
    total = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            st = os.stat(os.path.join(dirpath, name))
            if st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_size
    return total


def run() -> list[BenchRow]:
    compileall.compile_dir(Path(wren_tui.__file__).parent, quiet=1)  # as an install leaves it: no module compiled
    with tempfile.TemporaryDirectory(prefix="wren-bench-keep-") as tmp:
        root = Path(tmp)
        claude = corpus(root)
        projects = claude / "projects"
        files = sorted(projects.rglob("*.jsonl"))
        size_mb = sum(p.stat().st_size for p in files) / 1e6
        kept = root / "kept"
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(claude), "WREN_KEEP_DIR": str(kept), "HOME": str(root)}
        keep = [*_wren(), "keep", "--agent", "claude", "-q"]
        os.sync()
        fresh, copied, synced = [], [], []
        for _ in range(3):  # from nothing, in turn with cp -a and cp -a + sync, each into a fresh folder
            shutil.rmtree(kept, ignore_errors=True)
            os.sync()
            fresh.append(_timed(keep, env))
            target = root / "copy"
            shutil.rmtree(target, ignore_errors=True)
            os.sync()
            copied.append(_timed(["cp", "-a", str(projects), str(target)], env))
            shutil.rmtree(target, ignore_errors=True)
            os.sync()
            start = time.perf_counter()
            subprocess.run(["cp", "-a", str(projects), str(target)], check=True)
            os.sync()
            synced.append(time.perf_counter() - start)
            shutil.rmtree(target, ignore_errors=True)
        floor = []
        for _ in range(3):  # what any sha256 of every byte costs: read, hash and write each file, in one process
            shutil.rmtree(root / "floor", ignore_errors=True)
            os.sync()
            floor.append(_hash_and_copy(files, projects, root / "floor"))
        shutil.rmtree(root / "floor", ignore_errors=True)
        rng = random.Random(36)
        again, helped = [], []
        for n in range(PAIRED):  # one line appended to one session, then keep; in turn with keep --help
            with open(rng.choice(files), "ab") as f:
                f.write(LINE % n)
            again.append(_timed(keep, env))
            helped.append(_timed([*_wren(), "keep", "--help"], env))
        delay = _follow_delay(env, files, rng)
        for round_ in range(APPENDS):  # the space of appended logs, kept after each round
            for path in rng.sample(files, 10):
                with open(path, "ab") as f:
                    f.write(LINE % (1000 + round_))
            _timed(keep, env)
        whole = sum(p.stat().st_size for p in files)
        space = _store_size(kept / "claude" / "files") + _store_size(kept / "claude" / "versions")
        what = f"{SESSIONS:,} Claude Code sessions ({size_mb:.0f} MB)"
        return [
            compare(f"wren keep from nothing vs cp -a: {what}", min(fresh), min(copied), at_most=1.5),
            compare("wren keep from nothing (durable) vs cp -a then sync", min(fresh), min(synced)),
            compare(
                "its floor: read, sha256 and write each file in one Python process (no start-up, no sync) vs cp -a",
                min(floor),
                min(copied),
            ),
            compare(
                "wren keep after one line appended to one session vs wren keep --help",
                min(again),
                min(helped),
                at_most=1.3,
            ),
            absolute("wren keep --follow: an append to the kept copy, slowest of 20", delay, at_most=1.0),
            compare(
                f"space: kept bytes vs the files' bytes after {APPENDS} rounds of appends to 10 sessions",
                space,
                whole,
                unit="B",
                at_most=1.01,
            ),
        ]


def _follow_delay(env: dict[str, str], files: list[Path], rng: random.Random) -> float:
    child = subprocess.Popen(
        [*_wren(), "keep", "--agent", "claude", "--follow"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    kept = Path(env["WREN_KEEP_DIR"]) / "claude" / "files"
    projects = Path(env["CLAUDE_CONFIG_DIR"]) / "projects"
    slowest = 0.0
    try:
        assert child.stdout is not None
        while b"following" not in child.stdout.readline():
            pass
        for n in range(20):
            path = rng.choice(files)
            copy = kept / path.relative_to(projects)
            with open(path, "ab") as f:
                f.write(LINE % (500 + n))
            start = time.perf_counter()
            size = path.stat().st_size
            while copy.stat().st_size < size:
                time.sleep(0.001)
                assert time.perf_counter() - start < 30, "the append was not kept in 30 s"
            slowest = max(slowest, time.perf_counter() - start)
    finally:
        child.kill()
        child.wait(30)
    return slowest


def _hash_and_copy(files: list[Path], projects: Path, target: Path) -> float:
    start = time.perf_counter()
    for path in files:
        place = target / path.relative_to(projects)
        place.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        with open(path, "rb") as src, open(place, "wb") as out:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    return time.perf_counter() - start
