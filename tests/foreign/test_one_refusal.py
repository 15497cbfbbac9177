"""One refusal: a file no format claims (another program's .json, .db, .yaml, .md or .jsonl) is refused by every
command that opens a session, in one sentence naming the agents whose files Wren reads, exit 4, never "not an ATIF
trajectory" nor "neither a session id ..."; a folder of files Wren does not read says so instead of listing
nothing. A property test: random JSON, JSON lines, SQLite, YAML and Markdown files are refused so, never misread."""

from __future__ import annotations

import json
import shutil
import sqlite3
import string
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS
from wren_tui.cli import main
from wren_tui.foreign import what_wren_opens

OPENS = f"not {what_wren_opens()}"
# Commands that open one session, each as a person types it (PATH: the file).
COMMANDS = {
    "log": ["log", "PATH"],
    "watch": ["watch", "PATH"],
    "export md": ["export", "PATH", "--format", "md"],
    "export html": ["export", "PATH", "--format", "html"],
    "export json": ["export", "PATH", "--format", "json"],
    "export atif": ["export", "PATH", "--format", "atif"],
    "otel": ["otel", "PATH", "--endpoint", "http://127.0.0.1:9"],
    "fork": ["fork", "PATH"],
    "search --dir": ["search", "hello", "--dir", "PATH"],
}


def _sqlite(path: Path, tables: dict[str, list[int]]) -> None:
    with closing(sqlite3.connect(path)) as conn:
        for name, rows in tables.items():
            conn.execute(f'create table "{name}" (value)')
            conn.executemany(f'insert into "{name}" values (?)', [(v,) for v in rows])
        conn.commit()


def _files(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    made = {
        "settings.json": '{"theme": "dark", "fontSize": 14}\n',
        "config.yaml": "name: demo\nitems:\n  - one\n  - two\n",
        "notes.md": "# Notes\n\nSome words about the project.\n",
        "events.jsonl": '{"event": "click", "at": 1}\n{"event": "scroll", "at": 2}\n',
    }
    paths = {name: folder / name for name in made}
    for name, text in made.items():
        paths[name].write_text(text)
    paths["app.db"] = folder / "app.db"
    _sqlite(paths["app.db"], {"users": [1, 2], "orders": [3]})
    return paths


def _refused(stderr: str, path: Path) -> bool:
    return stderr.startswith(f"wren: {path}: {OPENS} (") and stderr.endswith(", so Wren does not read it\n")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_no_format_claims_is_refused_by_every_command_in_one_sentence_with_exit_4(
    command: str, tmp_path: Path
) -> None:
    for path in _files(tmp_path / "files").values():
        args = [str(path) if a == "PATH" else a for a in COMMANDS[command]]
        done = run_wren(args, cwd=tmp_path, input="")
        assert done.returncode == 4, (path.name, done.stderr)
        assert _refused(done.stderr, path), (path.name, done.stderr)
        assert "not an ATIF trajectory" not in done.stderr and "neither a session id" not in done.stderr
        assert done.stdout == ""


def test_a_folder_of_sessions_wren_cannot_read_says_so_instead_of_listing_nothing(tmp_path: Path) -> None:
    # Another program's files where sessions are looked for: settings, a database, notes (a .jsonl file of no
    # agent's would be listed, as unknown).
    sessions = tmp_path / "sessions"
    _files(sessions / "4267b4f3-7219-dc3b-2a3a-b41d845d58d0")["events.jsonl"].unlink()
    listed = run_wren(["ls", "--agent", "all", "--dir", str(sessions)], cwd=tmp_path)
    assert listed.returncode == 4 and listed.stdout == ""
    assert listed.stderr == (
        f"wren: {sessions}: 4 files, none of them {what_wren_opens()}, so Wren lists no session in it\n"
    )
    searched = run_wren(["search", "hello", "--dir", str(sessions)], cwd=tmp_path)
    assert searched.returncode == 4 and f"{sessions}: 4 files, none of them" in searched.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run_wren(["ls", "--agent", "all", "--dir", str(empty)], cwd=tmp_path)
    assert nothing.returncode == 0 and nothing.stdout == f"no sessions in {empty}\n"  # said once, not per agent


def test_a_folder_of_mistral_vibe_sessions_is_listed_not_refused(tmp_path: Path) -> None:
    # Mistral Vibe's session folder as Vibe keeps it (refused before Wren read it): <uuid>/meta.json, journal/, ...
    sessions = tmp_path / "unified"
    shutil.copytree(AGENTS / "mistral-vibe" / "simple", sessions)
    listed = run_wren(["ls", "--agent", "all", "--dir", str(sessions), "--json"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [(row["agent"], row["id"]) for row in json.loads(listed.stdout)] == [
        ("vibe", "4267b4f3-7219-dc3b-2a3a-b41d845d58d0")
    ]
    searched = run_wren(["search", "tiny script", "--dir", str(sessions)], cwd=tmp_path)
    assert searched.returncode == 0 and "tiny script" in searched.stdout


# --- the property: any file not made by a known agent ------------------------------------------------------------

# Member names the formats look for: a random object never gets one, so it is never an agent's by chance.
_THEIRS = {
    "seq", "crc", "type", "message", "timestamp", "payload", "role", "sessionId", "uuid", "parts", "data", "id",
    "parentId", "kind", "protocol_version", "startTime", "schema_version", "event", "record_type",
}  # fmt: skip
_keys = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=12).filter(lambda k: k not in _THEIRS)
_tables = _keys.map(str.lower).filter(lambda name: not name.startswith("sqlite"))  # SQLite's own names are refused
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4))
_objects = st.dictionaries(_keys, _json, min_size=1, max_size=5)
_words = st.text(string.ascii_letters + " .,:-#*", min_size=1, max_size=60).filter(lambda t: t.strip() != "")


def _write(kind: str, value: Any, path: Path) -> Path:
    if kind == "json":
        path.write_text(json.dumps(value))
    elif kind == "jsonl":
        path.write_text("".join(json.dumps(line) + "\n" for line in value))
    elif kind == "sqlite":
        _sqlite(path, value)
    elif kind == "yaml":
        path.write_text("".join(f"{key}: {json.dumps(item)}\n" for key, item in value.items()))
    else:
        path.write_text("\n".join(value) + "\n")
    return path


_FILES = st.one_of(
    st.tuples(st.just("json"), _json, st.just(".json")),
    st.tuples(st.just("jsonl"), st.lists(_objects, min_size=1, max_size=5), st.just(".jsonl")),
    st.tuples(
        st.just("sqlite"),
        st.dictionaries(
            _keys.map(str.lower), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3), min_size=1, max_size=3
        ),
        st.sampled_from([".db", ".sqlite", ".bin"]),
    ),
    st.tuples(st.just("yaml"), _objects, st.sampled_from([".yaml", ".yml"])),
    st.tuples(
        st.just("md"),
        st.lists(_words, min_size=1, max_size=6).filter(lambda lines: not lines[0].startswith("# aider")),
        st.sampled_from([".md", ".txt"]),
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(made=_FILES)
def test_any_file_not_made_by_a_known_agent_is_refused_with_exit_4_by_every_command_never_misread(
    made: tuple[str, Any, str], tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    kind, value, suffix = made
    folder = tmp_path_factory.mktemp("random")
    path = _write(kind, value, folder / f"made{suffix}")
    for name, command in COMMANDS.items():
        if name == "watch":
            continue  # in this process it would open the viewer were it not refused: the subprocess test covers it
        status = main([str(path) if a == "PATH" else a for a in command])
        out, err = capsys.readouterr()
        assert status == 4, (name, kind, err)
        assert _refused(err, path) and out == "", (name, kind, err)
