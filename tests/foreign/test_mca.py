"""The design's own journals ("mca": JSON lines of seq, ts and type with that type's fields, no crc) as a user meets
them: `wren log` reads one as another agent's session, `wren ls --agent all --dir` lists it, `wren search --dir`
finds its words, `wren fork` makes a Wren journal of it that `wren resume` continues, and `wren resume` never
continues it in place. A Wren journal one of whose lines lost its crc is still a damaged Wren journal, read up to
that line and no further: by its name, by another line's crc, or by a crc further on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_wren
from tests.foreign.sessions import AN_HOUR, age, fork_and_resume, wren_json
from tests.journal.helpers import framed
from wren_tui.foreign import WREN, detect_head, kind_of
from wren_tui.foreign.mca import WREN_LINE

EXCERPT = FIXTURES / "seed" / "mca_excerpt.jsonl"
LINES = EXCERPT.read_bytes().splitlines(keepends=True)


def _design(folder: Path, name: str = "design-run.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(EXCERPT.read_bytes())
    age(path, AN_HOUR)
    return path


def _said(doc: object) -> list[tuple[str, str]]:
    assert isinstance(doc, dict)
    return [(e["message"]["role"], e["message"]["content"]) for e in doc["events"] if e["type"] == "message"]


def test_log_reads_the_designs_journal_as_another_agents_session_with_its_failed_call(tmp_path: Path) -> None:
    path = _design(tmp_path)
    doc = wren_json(["log", str(path)], tmp_path)
    assert isinstance(doc, dict) and doc["agent"] == "mca" and doc["reason"] is None
    assert _said(doc) == [
        ("user", "run the tests and see which case fails"),
        ("assistant", "Let me run the tests first."),
        ("tool", "exit code 1..."),
    ]
    [end] = [e for e in doc["events"] if e["type"] == "tool_end"]
    assert end["id"] == "call_test_1" and end["ok"] is False and end["elapsedMs"] == 700


def test_ls_and_search_of_a_folder_find_the_designs_journal_beside_wren_s(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    _design(folder)
    wren = folder / "s-20260907-100000-abcd.jsonl"
    wren.write_bytes(framed(EXCERPT.read_bytes()))
    rows = wren_json(["ls", "--agent", "all", "--dir", str(folder)], tmp_path)
    assert isinstance(rows, list) and [(r["agent"], r["id"], r["lines"]) for r in rows] == [("mca", "design-run", 3)]
    found = run_wren(["search", "which case", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    hits = [json.loads(line) for line in found.stdout.splitlines()]
    assert sorted({hit["agent"] for hit in hits if "agent" in hit}) == ["mca", "wren"]


def test_fork_makes_a_wren_journal_that_resume_continues_and_the_designs_is_never_resumed_in_place(
    tmp_path: Path,
) -> None:
    path = _design(tmp_path / "design")
    start, said, resumed = fork_and_resume(path, 1, tmp_path / "journals", tmp_path)
    assert said == [("user", "run the tests and see which case fails")]
    assert start.model and "continue" not in resumed.stderr
    before = path.read_bytes(), path.stat().st_mtime_ns
    refused = run_wren(["resume", str(path), "go on", "--dir", str(tmp_path / "journals")], cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith(
        f"wren: {path}: is a design journal (mca) session, not a Wren journal, and wren resume continues Wren "
        f"journals only; fork it into one first (`wren fork --dir {tmp_path / 'journals'} {path}` lists its points)"
    ), refused.stderr
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def _without_crc(line: bytes) -> bytes:
    body, _crc, _rest = line.rpartition(b',"crc":')
    return body + b"}\n"


@pytest.mark.parametrize(
    ("name", "stripped", "stop"),
    [
        ("copy.jsonl", [1], 2),  # line 2 lost its crc; line 1 has one: a Wren journal, damaged at line 2
        ("copy.jsonl", [0], 1),  # line 1 lost it; line 2 has one
        ("s-20260907-100000-abcd.jsonl", [0, 1, 2], 1),  # every line lost it, under a Wren session's name
    ],
)
def test_a_wren_journal_whose_line_lost_its_crc_is_still_damage_read_up_to_that_line(
    tmp_path: Path, name: str, stripped: list[int], stop: int
) -> None:
    lines = framed(EXCERPT.read_bytes()).splitlines(keepends=True)
    path = tmp_path / name
    path.write_bytes(b"".join(_without_crc(line) if i in stripped else line for i, line in enumerate(lines)))
    assert kind_of(path) == WREN
    proc = run_wren(["log", "--json", str(path)], cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["stoppedAtLine"] == stop and "it has no crc member" in doc["reason"]
    assert len(doc["events"]) == stop - 1


def test_a_crc_past_the_lines_looked_at_stops_the_reading_as_a_damaged_wren_journals(tmp_path: Path) -> None:
    # Ten lines without a crc (what recognising looks at: the design's), then one of Wren's with its crc.
    plain = [b'{"seq":%d,"ts":"2026-09-07T10:00:%02d.000Z","type":"delta","text":"x"}\n' % (n, n) for n in range(1, 11)]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join(plain) + framed(LINES[0].replace(b'"seq":1', b'"seq":11')))
    proc = run_wren(["log", "--json", str(path)], cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["agent"] == "mca" and doc["stoppedAtLine"] == 11 and WREN_LINE in doc["reason"]


def test_recognising_needs_every_whole_line_without_a_crc_and_a_name_not_wren_s() -> None:
    head = EXCERPT.read_bytes()
    assert getattr(detect_head(head, "run.jsonl"), "name", None) == "mca"
    assert detect_head(head, "s-20260907-100000-abcd.jsonl") == WREN
    assert detect_head(framed(head), "run.jsonl") == WREN
    assert detect_head(head.split(b"\n")[0], "run.jsonl") == WREN  # no whole line yet: a journal being written
    other = b'{"seq": 1, "type": "message", "at": "2026"}\n'  # no ts: not the design's line
    assert detect_head(other, "run.jsonl") == WREN


def test_a_line_of_an_unknown_type_with_a_field_named_what_is_shown_as_a_note_not_a_traceback(tmp_path: Path) -> None:
    path = _design(tmp_path)
    with open(path, "ab") as f:
        f.write(b'{"seq":9,"ts":"2026-09-07T10:00:03.000Z","type":"custom_step","what":"a field of its own"}\n')
    doc = wren_json(["log", str(path)], tmp_path)
    assert isinstance(doc, dict) and doc["reason"] is None
    [note] = [e for e in doc["events"] if e["type"] == "custom_step"]
    assert note["what"] == "a field of its own"
    found = run_wren(["search", "which case", "--dir", str(tmp_path)], cwd=tmp_path)
    assert found.returncode == 0 and "Traceback" not in found.stderr, found.stderr
    assert "design-run  mca" in found.stdout
