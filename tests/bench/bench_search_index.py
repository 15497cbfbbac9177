"""Search's index over a folder shaped like ~/.claude/projects: the figures of issue 24, ratios in one run.

The corpus: 2,000 Claude Code sessions in 50 projects (each the real recording's second turn
repeated, `agents.claude_session`, about WREN_BENCH_INDEX_KB kB each, 350 by default: about 700 MB),
a phrase in 3 of them (a user line added to each). Made in a temporary folder for the run (the
variable makes it smaller on a busy machine; the table says the size).

- a warm query: the whole `wren search PHRASE --agent claude` process against `wren search --help`
  (Python's start-up and the CLI's imports), target at most 1.3x;
- `--no-index` (every file read) against `rg -l`, target at most 2x; beside it its floors: the CLI's
  start-up (`--help`) plus, for Claude Code's files, checking every line is a JSON object (what says
  where a damaged file stops), and for Wren's journals, reading every byte in one Python process;
- building the index from nothing (the first `wren search`), and its peak RSS, target under 200 MB;
  beside it its floor: the texts the index holds inserted alone into a fresh FTS5 trigram table; and,
  where agentsview is installed, its sync of the same folder from nothing (once: it takes about ten times
  as long), target at most a quarter of it;
- one line appended to one session: bringing the index up to date as `wren search` does (in-process:
  every file stat'ed against the index, the grown one read from where it was left), target under 50 ms;
- `wren ls --agent claude --json` of the 2,000 sessions unchanged since the last listing (rows from
  the store), target at most 0.36 s, and beside `wren ls --help`;
- and that the three answers give the same sessions as rg;
- then the first three over 1,000 Wren journals of about 600 kB (copies of 25 generated ones), for a
  phrase of the generator's prose that is in none of them (every word and trigram of it common); beside
  the warm query, the index's own query alone: the pair table's it asks now, and the trigram table's
  it asked before (that search's floor), and the index's size;
- and the browser's `/` with the index warm: from Enter to the frame that draws the first hit, target
  50 ms, in `wren watch --agent claude` (the phrase above) and `wren watch --dir` over the Wren journals
  (a phrase in 80 of them), timed in-process through Textual's Pilot (`browser_first_hit.py`: the
  frame rendered to a terminal's escape codes, the hit's session id in them; Textual draws at most 60
  frames a second, so a frame can wait up to 17 ms for its turn), best of five apps, each one's first search;
  and the same over 3 journals, for what showing the results list costs whatever the corpus (the list is
  mounted with the browser and shown in place of its table with the first hit: the frame that draws it).
"""

from __future__ import annotations

import compileall
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import wren_tui
from tests.bench import BenchRow, absolute, compare
from tests.bench.agents import claude_session
from tests.bench.gen import generate_bytes
from tests.conftest import FIXTURES
from wren_tui.search.index import pair_query, phrase
from wren_tui.search.query import Query

SESSIONS = 2000
PROJECTS = 50
PHRASE = "heliotrope ledger"
# Wren's own journals: 1,000 of about 600 kB, copies of 25 generated ones, and a phrase of the
# generator's prose in none of them (every file must be looked at).
JOURNALS = 1000
SEEDS = 25
JOURNAL_BYTES = 600_000
WREN_PHRASE = "zero because the guard"
# For the browser's first hit over them: a phrase of the prose that is in 80 of the 1,000 (3 of the 25 made).
WREN_HIT_PHRASE = "guard checks the wrong"
BROWSER_TIMES = 5
PAIRED = 9  # runs of a command and of its baseline, in turn, the quickest of each kept
BUILDS = 5  # builds of the Claude Code sessions' index from nothing, the quickest kept
AGENTSVIEW_SYNC = 27.6  # seconds agentsview took to sync this folder (the figure)
FEW = 3  # journals in the folder that measures what showing the results costs
ROOT = Path(__file__).resolve().parents[2]


def _kb() -> int:
    return int(os.environ.get("WREN_BENCH_INDEX_KB", "350"))


def corpus(root: Path) -> Path:
    """CLAUDE_CONFIG_DIR for 2,000 sessions: one made, copied under fresh names, the phrase added to 3."""
    model = claude_session(root / "model.jsonl", _kb() << 10)
    projects = root / "claude" / "projects"
    rng = random.Random(24)
    lucky = set(rng.sample(range(SESSIONS), 3))
    user = json.loads((FIXTURES / "agents" / "claude-code" / "multi-turn.jsonl").read_bytes().splitlines()[2])
    for n in range(SESSIONS):
        path = projects / f"-var-tmp-project-{n % PROJECTS}" / f"{uuid.UUID(int=rng.getrandbits(128))}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(model, path)
        if n in lucky:
            line = dict(user, uuid=str(uuid.uuid4()), parentUuid=None, message={"role": "user", "content": PHRASE})
            with path.open("ab") as out:
                out.write(json.dumps(line).encode() + b"\n")
        then = 1_700_000_000 + n
        os.utime(path, (then, then))
    model.unlink()
    return root / "claude"


def journals_corpus(root: Path) -> Path:
    """A journals folder of 1,000 Wren journals (about 600 MB)."""
    folder = root / "wren"
    folder.mkdir()
    models = [generate_bytes(root / f"model-{seed}.jsonl", JOURNAL_BYTES, seed=seed) for seed in range(1, SEEDS + 1)]
    for n in range(JOURNALS):
        shutil.copyfile(models[n % SEEDS], folder / f"s-20250101-{n // 60 % 60 * 100 + n % 60:06d}-{n:04d}.jsonl")
    for model in models:
        model.unlink()
    return folder


def _wren_rows(wren: str, root: Path, env: dict[str, str]) -> list[BenchRow]:
    """The same figures over Wren's own journals (the raw pass in C reads them without the index)."""
    folder = journals_corpus(root)
    os.sync()
    size_mb = sum(p.stat().st_size for p in folder.glob("*.jsonl")) / 1e6
    what = f"{JOURNALS:,} Wren journals ({size_mb:.0f} MB)"
    search = [wren, "search", WREN_PHRASE, "--agent", "wren", "--dir", str(folder), "--json"]
    rg = ["rg", "-l", "-F", WREN_PHRASE, str(folder)]
    _run(rg, env)
    built, built_rss, first = _run(search, env)
    (warm, _, answered), (helped, _, _) = _paired(search, [wren, "search", "--help"], env)
    scanned, _, read = _best([*search, "--no-index"], env, times=3)
    grep, _, listed = _best(rg, env)
    found = {Path(line.decode()).stem for line in listed.splitlines()}
    same = _sessions(first) == _sessions(answered) == _sessions(read) == found
    agree = f"same sessions as rg ({len(found)})" if same else "DIFFERENT sessions from rg"
    phrase = _phrase_floor(folder, WREN_PHRASE)
    pairs = _alone(folder, "pairs", pair_query(Query.of(WREN_PHRASE)) or "")
    index_mb = sum(p.stat().st_size for p in (folder / ".index").iterdir()) / 1e6
    fts_floor, both_floor = _fts_floor(folder), _fts_floor(folder, ("fts", "pairs"))
    browser = _first_hit(["--dir", str(folder), WREN_HIT_PHRASE, str(JOURNALS)], env)
    few = _few_journals(root, folder, WREN_HIT_PHRASE)
    _run([wren, "search", WREN_HIT_PHRASE, "--agent", "wren", "--dir", str(few)], env)  # its index
    screen = _first_hit(["--dir", str(few), WREN_HIT_PHRASE, str(FEW)], env)
    return [
        compare(f"wren search, index warm, vs wren search --help: {what}; {agree}", warm, helped, at_most=1.3),
        compare(
            "--help plus the pair table's query alone (in one process; what the index asks), vs --help",
            helped + pairs,
            helped,
        ),
        compare(
            "floor before the pair table: --help plus the trigram table's query alone (its trigrams ANDed), vs --help",
            helped + phrase,
            helped,
        ),
        absolute(f"the index on disk: {what}", index_mb, unit="MB"),
        compare(f"index size / journals size: {what}", index_mb, size_mb, unit="MB", at_most=1.0),
        compare(f"wren search --no-index vs rg -l: {what}", scanned, grep, at_most=2.0),
        compare(
            "floor: wren search --help (start-up) plus reading every file's bytes in one Python process, vs rg -l",
            helped + _read_floor(folder),
            grep,
        ),
        absolute(f"building the index from nothing (the first wren search): {what}", built),
        absolute(f"floor: the index's texts alone into a fresh FTS5 trigram table ({what})", fts_floor),
        absolute("the same into both of the index's tables (trigrams and word pairs)", both_floor),
        compare("building the index vs that floor", built, both_floor),
        absolute(f"building the index: peak RSS ({what})", built_rss, unit="MB", at_most=200),
        _browser_row(f"wren watch --dir, / {WREN_HIT_PHRASE!r} (in 80): {what}", browser),
        _browser_row(f"the same over {FEW} of those journals (all 3 hold it): what showing the results costs", screen),
    ]


def _few_journals(root: Path, folder: Path, phrase: str) -> Path:
    """A journals folder of FEW copies of one journal of `folder` that holds `phrase`."""
    holding = next(path for path in sorted(folder.glob("*.jsonl")) if phrase.encode() in path.read_bytes())
    few = root / "few"
    few.mkdir()
    for n in range(FEW):
        shutil.copyfile(holding, few / f"s-2025010{n + 1}-000000-{n:04d}.jsonl")
    return few


def _first_hit(args: list[str], env: dict[str, str]) -> list[float]:
    """Seconds from Enter in the browser's search box to the first hit drawn, one app each time (Pilot)."""
    argv = [sys.executable, "-m", "tests.bench.browser_first_hit", *args, "--times", str(BROWSER_TIMES)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, check=True, timeout=900)
    return [float(line) for line in done.stdout.split()]


def _browser_row(what: str, times: list[float]) -> BenchRow:
    median = sorted(times)[len(times) // 2]
    said = f"browser, index warm: Enter to the first hit drawn (Pilot; median {median * 1000:.0f} ms), {what}"
    return absolute(said, min(times), at_most=0.05)


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall time, peak RSS (MB) and stdout of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, out


def _built(argv: list[str], env: dict[str, str], index: Path, times: int = BUILDS) -> tuple[float, float, bytes]:
    """The quickest of `times` builds of the index from nothing (the first search of each, the index deleted
    before it): the build that the machine's other work disturbed least."""
    runs = []
    for _ in range(times):
        shutil.rmtree(index, ignore_errors=True)
        runs.append(_run(argv, env))
    return min(runs, key=lambda r: r[0])


def _paired(
    argv: list[str], baseline: list[str], env: dict[str, str], times: int = PAIRED
) -> tuple[tuple[float, float, bytes], tuple[float, float, bytes]]:
    """The quickest run of `argv` and of `baseline`, run in turn: a slow spell of the machine (shared with
    others) falls on both, not on one block of runs."""
    ours, theirs = [], []
    for _ in range(times):
        ours.append(_run(argv, env))
        theirs.append(_run(baseline, env))
    return min(ours, key=lambda r: r[0]), min(theirs, key=lambda r: r[0])


def _best(argv: list[str], env: dict[str, str], times: int = 5) -> tuple[float, float, bytes]:
    return min((_run(argv, env) for _ in range(times)), key=lambda r: r[0])


def _sessions(out: bytes) -> set[str]:
    return {row["session"] for row in map(json.loads, out.splitlines()) if row["type"] == "hit"}


def _json_floor(folder: Path) -> float:
    """Seconds to read every session file and check its lines are JSON objects (msgspec, in C, nothing built):
    what `--no-index` cannot leave out for another agent's file it does not translate (where reading stops)."""
    code = f"""
import time
from pathlib import Path
import msgspec
class Any(msgspec.Struct): pass
objects = msgspec.json.Decoder(Any).decode_lines
start = time.perf_counter()
for path in Path({str(folder)!r}).rglob("*.jsonl"):
    with open(path, "rb") as f:
        while data := f.read(4 << 20):
            objects(data[: data.rfind(b"\\n") + 1])
print(time.perf_counter() - start)
"""
    return min(_seconds(code) for _ in range(3))


def _phrase_floor(folder: Path, needle: str) -> float:
    """Seconds of the trigram table's query alone (SQLite's FTS5, the needle's trigrams ANDed, as the index asks
    since its trigrams keep no positions: a phrase is an error there), in one process."""
    return _alone(folder, "fts", phrase(needle))


def _alone(folder: Path, table: str, match: str) -> float:
    """Seconds of one full-text query of the index alone (opening it, the rows' ids), in a process of its own."""
    assert match, "no query to ask"
    code = f"""
import sqlite3, time
start = time.perf_counter()
db = sqlite3.connect("file:" + {str(folder / ".index" / "search.sqlite")!r} + "?mode=ro", uri=True)
db.execute("SELECT rowid FROM {table} WHERE {table} MATCH ?", ({match!r},)).fetchall()
print(time.perf_counter() - start)
"""
    return min(_seconds(code) for _ in range(5))


def _read_floor(folder: Path) -> float:
    """Seconds for one Python process to read every session file's bytes into one buffer, nothing else
    (timed inside it, its start-up left out): what any search that looks at every byte pays in Python."""
    code = f"""
import os, time
from pathlib import Path
view = memoryview(bytearray(4 << 20))
start = time.perf_counter()
for path in Path({str(folder)!r}).rglob("*.jsonl"):
    fd = os.open(path, os.O_RDONLY)
    while os.readv(fd, [view]) > 0:
        pass
    os.close(fd)
print(time.perf_counter() - start)
"""
    return min(_seconds(code) for _ in range(3))


def _fts_floor(folder: Path, tables: tuple[str, ...] = ("fts",)) -> float:
    """Seconds to insert exactly the texts the built index holds (its items' texts and tool names, as the
    full-text table holds them) into a fresh FTS5 table made by the same statement, in one transaction in
    one process, nothing else: the texts read out first, untimed. With ("fts",): what any build on FTS5's
    trigram tokenizer pays, however it reads the sessions; with ("fts", "pairs"): this index's two tables."""
    code = f"""
import os, sqlite3, tempfile, time
from wren_tui.search.index import fts_text, pairs_of
from wren_tui.search.indexer import stored_items
tables = {tables!r}
source = sqlite3.connect("file:" + {str(folder / ".index" / "search.sqlite")!r} + "?mode=ro", uri=True)
made = [source.execute("SELECT sql FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0] for t in tables]
rows = []
for ident, item in stored_items(source):
    rows.append((ident, fts_text(item.text), None if item.name is None else fts_text(item.name)))
source.close()
texts = {{"fts": rows, "pairs": [(i, pairs_of(t), None if n is None else pairs_of(n)) for i, t, n in rows]}}
with tempfile.TemporaryDirectory(dir={str(folder.parent)!r}) as tmp:
    db = sqlite3.connect(os.path.join(tmp, "floor.sqlite"))
    db.isolation_level = None
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    for statement in made:
        db.execute(statement)
    start = time.perf_counter()
    db.execute("BEGIN")
    for table in tables:
        db.executemany(f"INSERT INTO {{table}}(rowid, text, name) VALUES (?, ?, ?)", texts[table])
    db.execute("COMMIT")
    print(time.perf_counter() - start)
    db.close()
"""
    return min(_seconds(code) for _ in range(2))


def _seconds(code: str) -> float:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(result.stdout.strip())


def _agentsview() -> str | None:
    """agentsview's command, when it is installed (`pip install agentsview`: a wheel of its Go binary)."""
    beside = Path(sys.executable).parent / "agentsview"
    return str(beside) if beside.exists() else shutil.which("agentsview")


def _agentsview_sync(command: str, config: Path, root: Path) -> tuple[float, str]:
    """Seconds agentsview takes to sync the corpus from nothing, once (about ten times a build of our index), in a
    home of its own (its database, its settings), with no daemon left behind; and its version."""
    home = root / "agentsview-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "AGENTSVIEW_"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(config), AGENTSVIEW_NO_DAEMON="1")
    version = subprocess.run([command, "--version"], capture_output=True, text=True, env=env).stdout.split("(")[0]
    start = time.perf_counter()
    subprocess.run([command, "sync"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.perf_counter() - start
    shutil.rmtree(home, ignore_errors=True)
    return took, version.strip() or "agentsview"


def _agentsview_row(built: float, synced: tuple[float, str] | None) -> BenchRow:
    what = "building the index vs agentsview's sync of the same folder from nothing"
    if synced is None:
        return BenchRow(f"{what}: agentsview is not installed (pip install agentsview)", "-", "-", None, "-", "-")
    return compare(f"{what} ({synced[1]}, this run)", built, synced[0], at_most=0.25)


def _appended_update(config: Path, journals: Path) -> float:
    """Seconds to bring the index up to date after one line was appended to one session, as `wren search` does:
    what the index knows of every file read, each file stat'ed, the one that grew read from where it was left
    (listing the sessions is left out: a search lists them with or without an index)."""
    code = f"""
import os, time
os.environ["CLAUDE_CONFIG_DIR"] = {str(config)!r}
from pathlib import Path
from wren_tui.search.agents import sessions_of
from wren_tui.search.index import IndexRead, index_path
from wren_tui.search.indexer import connect_write, refresh
from wren_tui.search.query import Query
folder = Path({str(journals)!r})
db = connect_write(index_path(folder))
sources = sessions_of("claude", folder)
refresh(db, sources)
target = sources[-1].path
line = open(target, "rb").read().splitlines()[2]
best = 1e9
for round in range(5):
    with open(target, "ab") as out:
        out.write(line + b"\\n")
    start = time.perf_counter()
    snapshot = IndexRead(db, Query.of("anything"))
    snapshot.begin()
    stale = set(snapshot.stale((source.path, None) for source in sources))
    db.execute("COMMIT")
    read = refresh(db, [source for source in sources if source.path in stale], forget=[])
    best = min(best, time.perf_counter() - start)
    assert read == 1, read
print(best)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(result.stdout.strip())


def run() -> list[BenchRow]:
    wren = str(Path(sys.executable).parent / "wren")
    # Every process measured starts from compiled bytecode, as an installed wren does (pip compiles it): an
    # editable checkout run with PYTHONDONTWRITEBYTECODE compiles each module it imports at every start, which
    # moves `--help` by about 90 ms and the ratios with it, by which modules happened to be cached before.
    compileall.compile_dir(Path(wren_tui.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory(prefix="wren-bench-index-") as tmp:
        root = Path(tmp)
        config = corpus(root)
        journals = root / "journals"
        journals.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
        env.update(CLAUDE_CONFIG_DIR=str(config), WREN_DIR=str(journals))
        size_mb = sum(p.stat().st_size for p in (config / "projects").rglob("*.jsonl")) / 1e6
        what = f"{SESSIONS:,} Claude Code sessions ({size_mb:.0f} MB)"
        search = [wren, "search", PHRASE, "--agent", "claude", "--json"]
        rg = ["rg", "-l", "-F", PHRASE, str(config / "projects")]
        os.sync()  # the corpus just written is on disk before anything is timed
        _run(rg, env)  # the page cache warm for everyone
        built, built_rss, first = _built(search, env, journals / ".index")
        (warm, _, answered), (helped, _, _) = _paired(search, [wren, "search", "--help"], env)
        scanned, scan_rss, read = _best([*search, "--no-index"], env, times=3)
        grep, _, listed = _best(rg, env)
        found = {Path(line.decode()).stem for line in listed.splitlines()}
        same = _sessions(first) == _sessions(answered) == _sessions(read) == found
        agree = f"same sessions as rg ({len(found)})" if same else "DIFFERENT sessions from rg"
        fts_floor, both_floor = _fts_floor(journals), _fts_floor(journals, ("fts", "pairs"))
        update = _appended_update(config, journals)
        floor = _json_floor(config / "projects")
        ls = [wren, "ls", "--agent", "claude", "--json"]
        _run(ls, env)  # the store learns every session
        (listed_warm, _, _), (ls_help, _, _) = _paired(ls, [wren, "ls", "--help"], env)
        browser = _first_hit(["--agent", "claude", PHRASE, str(SESSIONS)], env)
        agentsview = _agentsview()
        synced = None if agentsview is None else _agentsview_sync(agentsview, config, root)
        shutil.rmtree(config)
        wren_rows = _wren_rows(wren, root, env)
        return [
            compare(f"wren search, index warm, vs wren search --help: {what}; {agree}", warm, helped, at_most=1.3),
            compare(f"wren search --no-index vs rg -l: {what}", scanned, grep, at_most=2.0),
            compare("floor: reading every file, checking its lines are JSON objects (msgspec), vs rg -l", floor, grep),
            compare("floor: wren search --help (start-up) plus that check, vs rg -l", helped + floor, grep),
            absolute(
                f"building the index from nothing (the first wren search): {what}; 4x faster than agentsview's "
                f"sync of the same folder as the issue measured it (27.6 s)",
                built,
                at_most=AGENTSVIEW_SYNC / 4,
            ),
            _agentsview_row(built, synced),
            absolute("floor: the index's texts alone into a fresh FTS5 trigram table (one transaction)", fts_floor),
            absolute("the same into both of the index's tables (trigrams and word pairs)", both_floor),
            compare("building the index vs that floor", built, both_floor),
            absolute("building the index: peak RSS", built_rss, unit="MB", at_most=200),
            absolute("wren search --no-index: peak RSS", scan_rss, unit="MB"),
            absolute(f"one line appended to one session: the index up to date again ({what})", update, at_most=0.05),
            absolute(f"wren ls --agent claude --json, sessions unchanged: {what}", listed_warm, at_most=0.36),
            compare("wren ls --agent claude --json, unchanged, vs wren ls --help (start-up)", listed_warm, ls_help),
            _browser_row(f"wren watch --agent claude, / {PHRASE!r} (in 3): {what}", browser),
            *wren_rows,
        ]
