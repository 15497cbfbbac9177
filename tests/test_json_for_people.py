"""Every JSON Wren writes for a person or a script escapes what a terminal would obey, not only what JSON must.

JSON writers escape U+0000-U+001F; a text can also hold the one-character CSI (U+009B, which xterm
acts on in UTF-8), a right-to-left override (U+202E), a zero-width space (U+200B). `wren log` shows
them as placeholders; `--json` output (log, search, ls, fork), `export --format json` and ATIF write
them as `\\uXXXX`: the same JSON value, never the raw character.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_wren
from tests.tui.journals import assistant, user, write_journal
from wren_tui.journal.events import RunStart
from wren_tui.journal.visible import _is_hidden, escaped_json, hidden_above_ascii

SESSION = "s-20250301-093000-aaaa"
HOSTILE = "clear \u009b2J then \u202edesrever\u202c and zero\u200bwidth, a tag \U000e0041, caf\u00e9 \u00a0ok"
RAW = ("\u009b", "\u202e", "\u202c", "\u200b", "\U000e0041")
CLAUDE = Path(__file__).resolve().parent / "fixtures" / "external" / "claude-code" / "agentlogs_crud.jsonl"


def journals(tmp_path: Path) -> Path:
    folder = tmp_path / "journals"
    write_journal(
        folder / f"{SESSION}.jsonl",
        [
            RunStart(pid=7, cwd="/work/demo", model="scripted", version="0.1.0"),
            user(HOSTILE),
            assistant(f"yes: {HOSTILE}"),
        ],
    )
    return folder


def escaped(data: bytes) -> None:
    """No raw character a terminal obeys; each as \\uXXXX (one of them, at least, where the text was)."""
    text = data.decode()
    for char in RAW:
        assert char not in text, (char, text[:400])
    assert "\\u009b" in text and "\\u202e" in text and "\\u200b" in text and "\\udb40\\udc41" in text
    assert "café" in text and "\u00a0ok" in text  # what a terminal only shows stays as it is


def texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in texts(v)]
    return []


def test_log_json_escapes_c1_bidi_and_zero_width_characters(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    result = run_wren(["log", SESSION, "--json", "--dir", str(folder)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    escaped(result.stdout.encode())
    assert HOSTILE in texts(json.loads(result.stdout))  # the same value, read back


def test_export_json_and_atif_escape_them(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    for fmt in ("json", "atif"):
        target = tmp_path / f"out.{fmt}.json"
        result = run_wren(["export", SESSION, "--format", fmt, "-o", str(target), "--dir", str(folder)], cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        escaped(target.read_bytes())
        assert any(HOSTILE in t for t in texts(json.loads(target.read_bytes()))), fmt


def test_search_json_escapes_them_in_snippets(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    for extra in ([], ["--no-index"]):
        result = run_wren(["search", "desrever", "--json", "--dir", str(folder), *extra], cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        assert [r["seq"] for r in rows] == [2, 3]
        for line in result.stdout.splitlines():
            assert not any(char in line for char in RAW) and "\\u202e" in line


def test_ls_and_fork_json_escape_them(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    project = tmp_path / "work\u202eexe.txt"  # a run's project is shown by ls --json
    project.mkdir()
    write_journal(
        folder / "s-20250302-093000-bbbb.jsonl",
        [RunStart(pid=7, cwd=str(project), model="scripted", version="0.1.0"), user(HOSTILE)],
    )
    listed = run_wren(["ls", "--json", "--dir", str(folder)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "\u202e" not in listed.stdout and "work\\u202eexe.txt" in listed.stdout
    assert str(project) in [row["project"] for row in json.loads(listed.stdout)]
    points = run_wren(["fork", SESSION, "--json", "--dir", str(folder)], cwd=tmp_path)
    assert points.returncode == 0, points.stderr
    assert not any(char in points.stdout for char in RAW), points.stdout
    assert "\\u202e" in points.stdout


def test_another_agents_session_as_json_escapes_them(tmp_path: Path) -> None:
    line = json.loads(CLAUDE.read_text().splitlines()[0])
    path = tmp_path / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl"
    shutil.copy(CLAUDE, path)
    with path.open("a") as out:
        entry = {**line, "uuid": "f00d", "parentUuid": line.get("uuid"), "type": "user"}
        entry["message"] = {"role": "user", "content": HOSTILE}
        out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    result = run_wren(["log", str(path), "--json"], cwd=tmp_path)
    assert not any(char in result.stdout for char in RAW), result.stdout[-2000:]
    assert "\\u202e" in result.stdout, (result.returncode, result.stderr)


@pytest.mark.parametrize("char", ["\u0085", "\u009b", "\u00ad", "\u061c", "\u200e", "\u2028", "\u2066", "\ufeff"])
def test_escaped_json_is_the_same_value(char: str) -> None:
    data = json.dumps({"k": f"a{char}b", char: [char]}, ensure_ascii=False).encode()
    out = escaped_json(data)
    assert char.encode() not in out and out.isascii()
    assert json.loads(out) == json.loads(data)


def test_escaped_json_leaves_ascii_and_bytes_that_are_not_utf8_alone() -> None:
    assert escaped_json(b'{"a":"b"}') == b'{"a":"b"}'
    assert escaped_json(b'"\xff\xc2\x9b"') == b'"\xff\\u009b"'


def test_printable_json_above_ascii_is_written_as_it_is_without_compiling_the_hidden_characters_pattern() -> None:
    code = (
        "from wren_tui.journal.visible import escaped_json, hidden_above_ascii\n"
        'line = \'{"snippet":"caf\u00e9 \u2014 \u201cquoted\u201d \U0001f600"}\'.encode()\n'
        "print(escaped_json(line) == line, hidden_above_ascii.cache_info().currsize)\n"
        'print(escaped_json(\'{"s":"caf\u00e9\u202e"}\'.encode()), hidden_above_ascii.cache_info().currsize)'
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.splitlines() == ["True 0", 'b\'{"s":"caf\\xc3\\xa9\\\\u202e"}\' 1']


def test_the_characters_escaped_are_those_the_viewer_hides() -> None:
    # Unicode 15 (Python 3.12) made U+13439-U+1343F format characters: escaped whichever Unicode this Python knows.
    newer = set(range(0x13439, 0x13440))
    for code in range(0x80, 0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        listed = hidden_above_ascii().match(char) is not None
        assert listed == _is_hidden(char) or (listed and code in newer), (hex(code), unicodedata.category(char))
        assert not (listed and char.isprintable()), hex(code)  # `escaped_json` leaves printable text alone
