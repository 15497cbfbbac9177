"""An agent's sessions listed from its folder alone (`foreign.folders`): no reader, no decoder, one stat a file.

`wren search --agent claude` answered by its index lists 2,000 files and reads none: the listing must not load
the agent's translator (msgspec, its line Structs) nor stat each file more than once (the sort by time and the
index's freshness check take the stat the walk made).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings, strategies

from tests.foreign.sessions import copy_session, fixture
from wren_tui.cli import main
from wren_tui.foreign import FORMATS, Registry
from wren_tui.foreign.folders import (
    HOMES,
    ID_ON_TEXT,
    Folder,
    Home,
    _claude_session,
    _session_through_link,
    file_stem,
    found_files,
    listed,
    session_files,
    walk_texts,
)
from wren_tui.keep.found import Kept
from wren_tui.search.agents import _newest, _newest_first, sessions_of
from wren_tui.search.foreign import ForeignSession
from wren_tui.search.query import Query
from wren_tui.search.sources import FileSession


def _env(tmp_path: Path) -> dict[str, str]:
    """Every agent's variable naming a folder below `tmp_path`, and a kept store of its own (empty)."""
    env = {FORMATS[name].folder.env: str(tmp_path / name) for name in HOMES}
    env["QWEN_RUNTIME_DIR"] = ""
    env["AIDER_CHAT_HISTORY_FILE"] = str(tmp_path / "aider" / ".aider.chat.history.md")  # its folder: where it is
    return {**env, "HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state")}


def _root(name: str, env: dict[str, str]) -> Path:
    return HOMES[name].folder.root(env, Path(env["HOME"]))


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_agents_home_is_its_formats_folder_and_session_id(name: str) -> None:
    fmt = FORMATS[name]
    assert fmt.folder is HOMES[name].folder
    assert fmt.session_id is HOMES[name].session_id
    assert fmt.name == HOMES[name].name


def test_each_home_is_an_agent_whose_every_file_is_one_session() -> None:
    whole = {name for name in FORMATS if FORMATS[name].export_all is None}
    assert set(HOMES) <= whole
    assert whole - set(HOMES) == {"continue", "cline", "vibe"}  # listed by their format: not here yet


def test_listing_every_agents_sessions_loads_no_reader_no_decoder_and_no_msgspec(tmp_path: Path) -> None:
    env = _env(tmp_path)
    for name in set(HOMES) - {"aider"}:
        copy_session(name, "simple", _root(name, env), nested=True)
    aider = _root("aider", env) / ".aider.chat.history.md"
    aider.parent.mkdir(parents=True)
    aider.write_bytes(fixture("aider", "simple").read_bytes())
    code = (
        "import json, os, sys\nbefore = set(sys.modules)\n"
        "from wren_tui.foreign import FORMATS\nfrom wren_tui.keep.found import Kept\n"
        "kept = Kept()\n"
        "found = {name: [(os.path.basename(p), st is not None) for p, st in kept.own_listed(FORMATS.home(name), [])]"
        " for name in FORMATS if name in " + repr(sorted(HOMES)) + "}\n"
        "print(json.dumps([found, sorted(set(sys.modules) - before)]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**os.environ, **env}
    )
    assert result.returncode == 0, result.stderr
    found, loaded = json.loads(result.stdout)
    assert {name: len(files) for name, files in found.items()} == dict.fromkeys(HOMES, 1)
    assert all(stated for files in found.values() for _name, stated in files)
    readers = {f"wren_tui.foreign.{module}" for module, _label, _env in FORMATS._homes.values()}
    assert not readers & set(loaded)
    assert not {"msgspec", "wren_tui.foreign.base", "wren_tui.foreign.listing", "wren_tui.journal"} & set(loaded)


def test_the_kept_store_is_found_empty_without_msgspec(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom pathlib import Path\nfrom wren_tui.keep.store import kept_agents, kept_files\n"
        "assert kept_agents({'XDG_STATE_HOME': sys.argv[1]}, Path(sys.argv[1])) == []\n"
        "assert kept_files('claude', {'XDG_STATE_HOME': sys.argv[1]}, Path(sys.argv[1])) == []\n"
        "print('msgspec' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def test_each_listed_file_carries_how_it_was_when_found(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    first = copy_session("claude", "simple", root / "-a", stem="one")
    second = copy_session("claude", "multi-turn", root / "-b", stem="two")
    (root / "-b" / "two" / "subagents").mkdir(parents=True)
    copy_session("claude", "simple", root / "-b" / "two" / "subagents", stem="agent-x")  # a subagent's: no session
    found = dict(listed(HOMES["claude"], root))
    assert set(found) == {str(first), str(second)}  # each path's text: no Path made for each file
    for path, st in found.items():
        assert st is not None
        now = os.stat(path, follow_symlinks=False)
        assert (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (
            now.st_dev,
            now.st_ino,
            now.st_size,
            now.st_mtime_ns,
        )
    assert sorted(str(path) for path in session_files(HOMES["claude"], root)) == sorted(found)


def test_a_warm_search_stats_each_session_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = _env(tmp_path)
    for stem in ("one", "two", "three"):
        copy_session("claude", "simple", _root("claude", env) / "-work", stem=stem)
    (tmp_path / "wren").mkdir()
    for key, value in {**env, "WREN_DIR": str(tmp_path / "wren")}.items():
        monkeypatch.setenv(key, value)
    words = ["search", "the", "--agent", "claude", "--json"]
    assert main(words) == 0  # builds the index
    built = capsys.readouterr().out
    stats: Counter[str] = Counter()
    real, real_lstat = os.stat, os.lstat

    def counted(path: str | Path, *args: Any, **kwargs: Any) -> os.stat_result:
        stats[os.fspath(path)] += 1
        return real(path, *args, **kwargs)

    def counted_lstat(path: str | Path) -> os.stat_result:
        stats[os.fspath(path)] += 1
        return real_lstat(path)

    monkeypatch.setattr(os, "stat", counted)
    monkeypatch.setattr(os, "lstat", counted_lstat)  # a stat too (its link not followed)
    assert main(words) == 0  # answered from it: the walk's stat is the sort's and the freshness check's
    monkeypatch.setattr(os, "stat", real)
    monkeypatch.setattr(os, "lstat", real_lstat)
    assert capsys.readouterr().out == built
    sessions = sorted(str(path) for path in (_root("claude", env) / "-work").iterdir())
    assert len(sessions) == 3
    assert {path: stats[path] for path in sessions} == dict.fromkeys(sessions, 1)


def test_the_sessions_listed_are_newest_first_each_with_how_it_was_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    for stem, age_s in (("old", 300.0), ("new", 100.0), ("mid", 200.0)):
        copy_session("claude", "simple", _root("claude", env) / "-work", stem=stem, age_s=age_s)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    sources = sessions_of("claude", tmp_path / "wren")
    assert [source.session for source in sources] == ["new", "mid", "old"]
    for source in sources:
        assert isinstance(source, ForeignSession) and source.looked is not None
        assert _identity(source.looked) == _identity(os.stat(source.path, follow_symlinks=False))


def test_a_session_listed_from_its_home_reads_as_one_listed_from_its_format(tmp_path: Path) -> None:
    path = copy_session("claude", "multi-turn", tmp_path / "projects" / "-work", stem="8122657c")
    home, whole = ForeignSession(path, HOMES["claude"]), ForeignSession(path, FORMATS["claude"])
    assert (home.session, home.agent) == (whole.session, whole.agent) == ("8122657c", "claude")
    query = Query.of("the")
    assert list(home.items(query)) == list(whole.items(query))
    assert list(ForeignSession(path, Home("claude", HOMES["claude"].folder)).items(query))


def test_the_registry_gives_an_agents_home_until_its_format_is_loaded_or_set() -> None:
    registry = Registry(
        {
            "claude": ("claude", "Claude Code", "CLAUDE_CONFIG_DIR"),
            "opencode": ("opencode", "OpenCode", "XDG_DATA_HOME"),
        },
        {
            "claude": (("CLAUDE_CONFIG_DIR",), ".claude", "projects"),
            "opencode": (("XDG_DATA_HOME",), ".local/share", "opencode"),
        },
    )
    assert registry.home("claude") is HOMES["claude"]
    assert registry.home("opencode") is registry["opencode"]  # a database of sessions: listed by its format
    assert registry.home("claude") is HOMES["claude"]  # still: its reader not asked for
    assert registry["claude"] is FORMATS["claude"]
    assert registry.home("claude") is FORMATS["claude"]  # loaded: the whole format
    mine = FORMATS["claude"].replace(label="mine")
    registry["claude"] = mine
    assert registry.home("claude") is mine  # a test's format, as it set it


def test_kept_own_files_are_the_listed_paths(tmp_path: Path) -> None:
    env = _env(tmp_path)
    copy_session("claude", "simple", _root("claude", env) / "-work", stem="one")
    kept = Kept(env)
    # own_listed gives each path's text (no Path made for each file): the text of the Path own_files gives.
    assert [str(path) for path in kept.own_files(FORMATS["claude"])] == [
        text for text, _st in kept.own_listed(HOMES["claude"])
    ]
    assert all(type(text) is str for text, _st in kept.own_listed(HOMES["claude"]))


def test_naming_a_format_or_importing_what_recognises_files_loads_no_reader_until_a_file_is_looked_at(
    tmp_path: Path,
) -> None:
    path = copy_session("claude", "simple", tmp_path / "-work", stem="one")
    code = (
        "import json, sys\nfrom pathlib import Path\nbefore = set(sys.modules)\n"
        "from wren_tui.foreign import FORMATS, Format, detect, identify, kind_of\n"
        "imported = sorted(set(sys.modules) - before)\n"
        "kind = kind_of(Path(sys.argv[1]))\n"
        "from wren_tui.foreign import DOCUMENTS\n"
        "print(json.dumps([imported, isinstance(kind, Format) and kind.name, sorted(DOCUMENTS)]))"
    )
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    imported, kind, documents = json.loads(result.stdout)
    readers = {f"wren_tui.foreign.{module}" for module, _label, _env in FORMATS._homes.values()}
    assert not (readers | {"wren_tui.foreign.base", "wren_tui.foreign.atif", "wren_tui.foreign.mca"}) & set(imported)
    assert {"wren_tui.foreign.kinds", "wren_tui.foreign.contract"} <= set(imported)
    assert kind == "claude"
    assert documents == ["atif", "mca"]


@pytest.mark.parametrize(
    ("relative", "session"),
    [
        ("-work/one.jsonl", True),
        ("-work/one/subagents/agent-a1.jsonl", False),
        ("-work/one/subagents/other.jsonl", False),  # whatever its name, a subagents folder's file is a thread
        ("-work/agent-x.jsonl", False),
        ("-work/notsubagents/one.jsonl", True),
        ("one.jsonl", True),
        ("subagents/one.jsonl", False),
    ],
)
def test_a_claude_code_session_file_is_not_a_subagents_thread(tmp_path: Path, relative: str, session: bool) -> None:
    is_session = HOMES["claude"].folder.is_session_file
    assert is_session(tmp_path / relative) is session
    assert is_session(Path(relative)) is session


def test_a_warm_search_of_every_agent_loads_no_reader_of_an_agent_whose_folder_is_not_there(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "WREN_DIR": str(tmp_path / "wren"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    (tmp_path / "wren").mkdir()
    copy_session("claude", "simple", tmp_path / "claude" / "projects" / "-work", stem="one")
    code = (
        "import json, sys\nbefore = set(sys.modules)\nfrom wren_tui.cli import main\n"
        "status = main(['search', 'the', '--json'])\n"
        "print(json.dumps([status, sorted(set(sys.modules) - before)]), file=sys.stderr)"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WREN_") and not k.endswith(("_HOME", "_DIR"))}
    readers = {f"wren_tui.foreign.{module}": name for name, (module, _label, _env) in FORMATS._homes.items()}
    for wanted in ({"claude"}, set()):  # built (its reader reads it), then warm
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            env={**clean, **env},
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        status, loaded = json.loads(result.stderr.strip().splitlines()[-1])
        assert status == 0
        # aider keeps no folder of its own: the current folder is looked at, without its module (no history there).
        assert {readers[name] for name in loaded if name in readers} == wanted


class _Recorded(ForeignSession):
    """A ForeignSession that keeps itself in `made`, so a test can look at the sources a command made."""

    made: ClassVar[list[ForeignSession]] = []

    def __init__(self, path: str | Path, fmt: Any, looked: os.stat_result | None = None) -> None:
        super().__init__(path, fmt, looked)
        _Recorded.made.append(self)


@pytest.mark.parametrize(
    "files",
    [[], ["-l"], ["--since", "2000-01-01"], ["-l", "--since", "2000-01-01"]],
    ids=["json", "files", "since", "files since"],
)
def test_a_warm_search_makes_no_path_for_a_session_it_lists_or_shows(
    files: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = _env(tmp_path)
    for stem in ("one", "two", "three"):
        copy_session("claude", "simple", _root("claude", env) / "-work", stem=stem)
    shown = copy_session("claude", "multi-turn", _root("claude", env) / "-other", stem="four")
    (tmp_path / "wren").mkdir()
    for key, value in {**env, "WREN_DIR": str(tmp_path / "wren")}.items():
        monkeypatch.setenv(key, value)
    words = ["search", *files, "to-do list", "--agent", "claude", *([] if "-l" in files else ["--json"])]
    assert main(words) == 0  # builds the index
    built = capsys.readouterr().out
    assert str(shown) in built and "one.jsonl" not in built
    monkeypatch.setattr(_Recorded, "made", [])
    monkeypatch.setattr("wren_tui.search.agents.ForeignSession", _Recorded)
    assert main(words) == 0  # answered from the index
    assert capsys.readouterr().out == built
    made = {source.path_text: source for source in _Recorded.made}
    listed_paths = sorted(str(path) for path in _root("claude", env).rglob("*.jsonl"))
    assert sorted(made) == listed_paths
    # None made its Path: the three the index answered with nothing, nor the one shown (its hit, its id and the line
    # printed are said from its path's text).
    assert [text for text, source in made.items() if source._path is not None] == []
    assert made[str(shown)].session == "four"
    assert all(source.path == Path(text) for text, source in made.items())  # made when asked, the same path


def test_a_listing_gives_each_path_as_the_text_of_the_path_its_folder_and_names_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    odd = os.fsdecode(b"caf\xe9")  # a name that is no UTF-8: kept as the system gave it
    relative = [("a.jsonl",), ("-w", "b.jsonl"), ("-w", "c", "d.jsonl"), (".h", "e.jsonl"), (odd, f"{odd}.jsonl")]
    relative += [("-w", "s", "subagents", "agent-1.jsonl"), ("-w", "n.md")]
    for parts in relative:
        made = tmp_path.joinpath(*parts)
        made.parent.mkdir(parents=True, exist_ok=True)
        made.write_bytes(b"{}\n")
    every = [parts for parts in relative if parts[-1].endswith(".jsonl")]  # codex's: its every .jsonl file
    sessions = [parts for parts in every if "subagents" not in parts]  # claude's: not a subagent's thread
    # The current folder (as aider's is), a folder below it, the absolute folder with a separator at its end.
    for root in (Path("."), Path("-w"), Path(f"{tmp_path}{os.sep}"), Path(f".{os.sep}-w")):
        for name, files in (("claude", sessions), ("codex", every)):
            below = [parts[1:] for parts in files if parts[0] == "-w"] if root.name == "-w" else files
            expected = sorted(str(root.joinpath(*parts)) for parts in below)  # as `root / name` says it
            found = [text for text, _st in listed(HOMES[name], root, [])]
            assert all(type(text) is str for text in found)
            assert sorted(found) == expected
            assert sorted(str(path) for path in session_files(HOMES[name], root)) == expected


def test_a_source_makes_its_path_from_its_text_when_asked_and_keeps_a_path_it_was_given() -> None:
    text = os.path.join("projects", "-work", "one.jsonl")
    source = ForeignSession(text, HOMES["claude"])
    assert source.path_text == text and source._path is None
    assert source.path == Path(text) and source.path is source.path  # made once
    assert source.session == "one"
    given = Path("projects") / "two.jsonl"
    kept = ForeignSession(given, HOMES["claude"])
    assert kept.path is given and kept.path_text == str(given)


@pytest.mark.parametrize("path", ["one.jsonl", Path("projects") / "two.jsonl"], ids=["text", "path"])
def test_a_source_listed_holds_all_a_file_session_holds_as_one_made_by_it_would(path: str | Path) -> None:
    """`ForeignSession` sets a `FileSession`'s state itself (a listing makes thousands): the same members, the same
    values (a future member of `FileSession` not set here fails this)."""
    made = FileSession(path, "")
    listed = ForeignSession(path, HOMES["claude"])
    assert vars(listed) == {**vars(made), "_listed": HOMES["claude"], "looked": None}


NAMES = ["one.jsonl", ".jsonl", "a.b.jsonl", "a.", "plain", ".hidden.jsonl", "x..jsonl", "2026_01_02_uuid.jsonl"]
NAMES += ["rollout-2026-01-02T03-04-05-0a1b2c3d-0000-1111-2222-333344445555.jsonl", "rollout-short.jsonl"]


@pytest.mark.parametrize("name", NAMES)
def test_a_session_id_said_from_a_path_text_is_the_one_its_path_says(name: str) -> None:
    for text in (name, os.path.join("projects", "-work", name), os.path.join(os.sep, "p", os.fsdecode(b"\xe9"), name)):
        assert ID_ON_TEXT[file_stem](text) == Path(text).stem
        for agent in ("claude", "codex", "pi"):
            home = HOMES[agent]
            assert ID_ON_TEXT[home.session_id](text) == home.session_id(Path(text))
            assert ForeignSession(text, home).session == ForeignSession(Path(text), home).session


# A folder's entries for the walk's property: a path below the root (its parts) and what is there.
_PARTS = ["a.jsonl", "agent-1.jsonl", "agent-.jsonl", "agentx.jsonl", "session-1.jsonl", "b.md", "x.jsonl", ".jsonl"]
_PARTS += ["subagents", ".h", "-w", "c", os.fsdecode(b"caf\xe9")]
_PATHS = strategies.lists(strategies.sampled_from(_PARTS), min_size=1, max_size=4)
_ENTRIES = strategies.lists(strategies.tuples(_PATHS, strategies.sampled_from(["file", "dir", "link"])), max_size=14)


def _lay_out(root: Path, entries: list[tuple[list[str], str]], target: Path) -> None:
    """The entries made below `root` (one whose folder is a file already is left out); a link points at `target`."""
    for parts, kind in entries:
        place = root.joinpath(*parts)
        try:
            place.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                place.mkdir(exist_ok=True)
            elif kind == "file" and not place.exists():
                place.write_bytes(b'{"type":"user"}\n')
            elif kind == "link" and not place.exists() and not place.is_symlink():
                place.symlink_to(target)
        except OSError:  # a folder of the path is a file (or a link): no entry there
            continue


def _walked(home: Home, root: Path, skipped: list[str]) -> list[str]:
    """The listing as a generator of each file's walk and test made it: `walk_texts`, each file's `Path` asked."""
    links: list[Path] = []
    folder = home.folder
    found = [
        text
        for text, _entry, _hidden, _top in walk_texts(root, skipped, folder.hidden_folders, folder.suffix, links)
        if folder.is_session_file(Path(text))
    ]
    for link in links:
        if _session_through_link(home, link):
            skipped.append(f"{link}: is a link to a session, and Wren follows no link (name the file it points to)")
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=_ENTRIES)
def test_a_listing_finds_what_a_walk_and_each_files_own_test_find_in_the_same_order(
    tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[list[str], str]]
) -> None:
    base = tmp_path_factory.mktemp("tree")
    target = base / "target.jsonl"
    target.write_bytes(b'{"type":"user","message":{"role":"user","content":"hi"}}\n')
    root = base / "projects"
    root.mkdir()
    _lay_out(root, entries, target)
    shown = Home("claude", Folder(env="X", root=HOMES["claude"].folder.root, is_session_file=_claude_session))
    hiding = Home("claude", Folder(env="X", root=HOMES["claude"].folder.root, hidden_folders=False))
    for home in (HOMES["claude"], HOMES["codex"], HOMES["gemini"], shown, hiding):
        expected_skipped: list[str] = []
        expected = _walked(home, root, expected_skipped)
        skipped: list[str] = []
        texts, stats = found_files(home, root, skipped)
        assert texts == expected and skipped == expected_skipped
        assert [st.st_ino if st else None for st in stats] == [os.lstat(text).st_ino for text in texts]
        assert [text for text, _st in listed(home, root)] == expected
        assert [str(path) for path in session_files(home, root)] == expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=strategies.lists(strategies.sampled_from([None, "gone", 5, 7, 7.5, 9]), max_size=12))
def test_the_sessions_listed_are_newest_first_as_a_sort_by_each_ones_time_puts_them(
    tmp_path_factory: pytest.TempPathFactory, times: list[int | float | str | None]
) -> None:
    """Equal times keep the listing's order; a file listed without its stat (a kept copy read in its place) is stat'ed
    then and keeps that stat; one gone is the oldest, with none."""
    folder = tmp_path_factory.mktemp("times")
    texts: list[str] = []
    stats: list[os.stat_result | None] = []
    for n, time in enumerate(times):
        path = folder / f"{n}.jsonl"
        texts.append(str(path))
        if time == "gone":
            stats.append(None)
            continue
        path.write_bytes(b"{}\n")
        seconds = 3.0 if time is None else float(time)
        os.utime(path, (seconds, seconds))
        stats.append(None if time is None else os.stat(path, follow_symlinks=False))
    home = HOMES["claude"]
    expected = sorted(
        (ForeignSession(text, home, st) for text, st in zip(texts, stats, strict=True)), key=_newest, reverse=True
    )
    found = _newest_first(list(texts), list(stats), home)
    assert all(isinstance(source, ForeignSession) for source in found)
    assert [source.path_text for source in found] == [source.path_text for source in expected]
    assert [getattr(source, "looked", "?") for source in found] == [source.looked for source in expected]
