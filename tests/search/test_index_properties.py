"""The index gives exactly the scan's hits: for random corpora, random patterns, and files grown after indexing.

A corpus is Wren journals as the writer makes them with other lines among them (another writer's,
damaged ones, gaps, deltas with and without their reply), and other agents' recordings cut at a
random line or inside one (a torn tail), each in the folder `wren search --dir` reads. A pattern is
a piece of a text in the corpus (changed in case now and then), or random text, or a regex. Every
search is run on the files (no index) and through the index, and the two give the same hits and the
same sessions' stops, in the same order; then the files grow (the rest of each), and the index is
asked again: before it is brought up to date (it reads the grown tails itself) and after.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.journal.strategies import encode, mixed_journals
from tests.tui.journals import assistant, user
from wren_tui.journal.events import Delta, Error
from wren_tui.search.agents import sessions_of
from wren_tui.search.engine import FirstHit, Found, Hit, search
from wren_tui.search.index import IndexRead, index_path
from wren_tui.search.indexer import connect_write, refresh
from wren_tui.search.query import BadPattern, Query

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RECORDINGS = sorted((FIXTURES / "agents").glob("*/*.jsonl")) + sorted((FIXTURES / "external").glob("*/*.jsonl"))
WORDS = ["error", "the", "read_file", "Error", "pytest", "passed", "JOKE", "zero", "café", "tool", "ls -la", '"a"']
# Words a pattern of whole words (asked of the index's pair table) must find written otherwise: ſ an s, the
# Kelvin sign a k (ignoring case), a word run on with _ or punctuation.
WORDS += ["becau\u017fe", "\u212a9", "x_y", "e.g.", "fix(s)"]


def outcome(found: list[Found | FirstHit]) -> list[tuple[Any, ...]]:
    """What a person sees of a search: each hit (session, place, role, snippet, match) and each session's end."""
    seen: list[tuple[Any, ...]] = []
    for each in found:
        if isinstance(each, FirstHit):  # -l's session listed from the index's first candidate: the hit it stands for
            each = each.hit
        if isinstance(each, Hit):
            item = each.item
            seen.append(("hit", each.session, item.seq, item.offset, item.part, item.ts, item.role, item.kind))
            seen.append((each.snippet, each.start, each.end, each.in_name, item.name, item.project))
        else:
            seen.append(("end", each.session, each.hits, each.stop, each.warnings, each.unreadable))
    return seen


def both(folder: Path, query: Query, *, update: bool) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The hits read from the files, and through the index (brought up to date first, or as it is)."""
    sources = sessions_of("all", folder, folder)
    scanned = outcome(list(search(sources, query)))
    db = connect_write(index_path(folder))
    try:
        if update:
            refresh(db, sessions_of("all", folder, folder))
        snapshot = IndexRead(db, query)
        assert snapshot.begin()
        # As `wren search --dir` lists them: the journals the index read as Wren's and holds as they are not opened.
        listed = sessions_of("all", folder, folder, recall=snapshot.wren_as_read)
        loaded = snapshot.load()
        indexed = outcome(list(search(listed, query, index=snapshot if loaded else None)))
    finally:
        db.close()
    return scanned, indexed


phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
# A conversation whose replies stream: runs of deltas, each followed by its reply or not (a retry, a crash).
streams = st.lists(
    st.one_of(
        phrases.map(user),
        phrases.map(assistant),
        phrases.map(lambda text: Delta(text=text)),
        phrases.map(lambda text: Error(message=text)),
    ),
    min_size=1,
    max_size=14,
).map(encode)


@st.composite
def cut(draw: st.DrawFn, data: bytes) -> int:
    """Where a file's first part ends: at a line's end (as a writer leaves it) or anywhere (mid-write)."""
    ends = [0] + [at + 1 for at, byte in enumerate(data) if byte == 0x0A]
    return draw(st.sampled_from(ends) | st.integers(0, len(data)))


@st.composite
def corpora(draw: st.DrawFn) -> list[tuple[str, bytes, int]]:
    """Files: (name, bytes, where the first part ends: the rest is appended later)."""
    files = []
    for number in range(draw(st.integers(1, 3))):
        data = draw(mixed_journals() | streams)
        files.append((f"s-20260101-00000{number}-x.jsonl", data, draw(cut(data))))
    for recording in draw(st.lists(st.sampled_from(RECORDINGS), max_size=2, unique=True)):
        data = recording.read_bytes()
        files.append((f"{recording.parent.name}-{recording.name}", data, draw(cut(data))))
    return files


@st.composite
def patterns(draw: st.DrawFn, texts: list[str]) -> tuple[str, bool]:
    kind = draw(st.integers(0, 4))
    if kind == 0 or not texts:
        return draw(st.sampled_from(WORDS) | st.text(min_size=1, max_size=6)), False
    text = draw(st.sampled_from(texts))
    start = draw(st.integers(0, max(0, len(text) - 1)))
    piece = text[start : start + draw(st.integers(1, 12) | st.integers(12, 40))] or "x"  # long: several words
    if kind == 1:
        piece = piece.upper()
    if kind == 2:
        return re.escape(piece) + draw(st.sampled_from(["", ".*", "\\w*", "?"])), True
    return piece, False


def drawn_queries(data: st.DataObject, texts: list[str], count: int = 3) -> list[Query]:
    """Up to `count` queries drawn from `texts` (`patterns`), a pattern that is no query left out."""
    queries = []
    for _ in range(count):
        pattern, regex = data.draw(patterns(texts))
        try:
            queries.append(Query.of(pattern, regex=regex))
        except BadPattern:
            continue
    return queries


def texts_of(folder: Path) -> list[str]:
    everything = Query.of("(?s).", regex=True)
    found: list[str] = []
    for source in sessions_of("all", folder, folder):
        try:
            found.extend(item.text for item in source.items(everything) if item.text)
        except OSError:
            continue
    return found[:200]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(corpus=corpora(), data=st.data())
def test_indexed_hits_are_the_scans_hits_and_stay_so_as_files_grow(
    corpus: list[tuple[str, bytes, int]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, whole, cut in corpus:
            (folder / name).write_bytes(whole[:cut])
        texts = texts_of(folder)
        for name, whole, _cut in corpus:
            (folder / name).write_bytes(whole)
        texts += texts_of(folder)
        for name, whole, cut in corpus:
            (folder / name).write_bytes(whole[:cut])
        queries = drawn_queries(data, texts)
        for query in queries:
            scanned, indexed = both(folder, query, update=True)
            assert indexed == scanned, query.pattern
        for name, whole, cut in corpus:
            with (folder / name).open("ab") as out:
                out.write(whole[cut:])
        for query in queries:
            scanned, indexed = both(folder, query, update=False)  # the grown tails read through the index
            assert indexed == scanned, query.pattern
            scanned, indexed = both(folder, query, update=True)
            assert indexed == scanned, query.pattern


def test_a_reply_streaming_when_indexed_is_answered_as_finished_once_appended_not_as_a_stale_partial(
    tmp_path: Path,
) -> None:
    """A journal ends mid-stream (a reply's deltas, no reply yet), is indexed, then the reply is appended and the
    index asked as it is (the viewer's search, an index in a read-only folder): the grown file is answered from
    the index up to the still-streaming item and read from there, so the reply is found once, as finished, and
    the partial text the index held is never given beside it."""
    name = "s-20260101-000000-x.jsonl"
    streaming = encode([user("tell me of the macaw"), Delta(text="half a macaw"), Delta(text=" story")])
    (tmp_path / name).write_bytes(streaming)
    query = Query.of("macaw story")
    scanned, indexed = both(tmp_path, query, update=True)
    assert indexed == scanned and [row[-1] for row in scanned if row[0] == "hit"] == ["partial"]
    with (tmp_path / name).open("ab") as out:
        out.write(encode([Delta(text=" ends"), assistant("half a macaw story ends")], first_seq=4))
    scanned, indexed = both(tmp_path, query, update=False)  # the grown tail read through the index, not refreshed
    assert [row[-1] for row in scanned if row[0] == "hit"] == ["message"]
    assert indexed == scanned
