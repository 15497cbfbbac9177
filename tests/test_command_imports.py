"""Each command starts without the code it never runs; `wren --help` and `--version` import no command.

`wren search` does not import the export package or forking. `wren --help`, `--version`, no command
or an unknown one list the commands from `cli.SUMMARIES` without importing any command's module, and
each command imports its own module and no other command's.

The exit table knows their errors by where they are defined (`cli.exits.LAZY_EXITS`), so the
commands that raise them still exit with their status and sentence (tests/test_exit_policy.py for a
fork point, tests/test_export.py for a refused export); here, that the names there are the classes'.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wren_tui.cli import COMMANDS, SUMMARIES, SUMMARY, build_parser, listing_parser
from wren_tui.cli.exits import LAZY_EXITS, Exit, exit_for
from wren_tui.export import ExportRefused
from wren_tui.foreign import FORMATS
from wren_tui.journal.forking import NotAForkPoint
from wren_tui.search.agents import agents

NEVER = ("wren_tui.export", "wren_tui.journal.forking")


def test_wren_search_imports_neither_the_export_package_nor_forking(tmp_path: Path) -> None:
    (tmp_path / "journals").mkdir()
    code = (
        "import sys\nfrom wren_tui.cli import main\n"
        f"status = main(['search', 'parrot', '--dir', {str(tmp_path / 'journals')!r}, '--json'])\n"
        f"print(sorted(m for m in sys.modules if m.startswith({NEVER!r})), status)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.stdout.split("\n")[-2:] == ["[] 1", ""], result.stderr


def test_the_errors_known_by_name_are_those_classes_and_keep_their_status() -> None:
    assert {(c.__module__, c.__qualname__) for c in (NotAForkPoint, ExportRefused)} == set(LAZY_EXITS)
    assert exit_for(NotAForkPoint(Path("s.jsonl"), 4, [])) is Exit.USAGE
    assert exit_for(ExportRefused("no such folder")) is Exit.ERROR


# The command modules each command loads besides its own when its help is asked (none: ls loads the snapshots
# command's module only once it lists Wren's journals, to show the snapshot store's space).
ALSO: dict[str, set[str]] = {}


def _command_modules_loaded(args: list[str]) -> list[str]:
    code = (
        "import json, sys\nfrom wren_tui.cli import COMMANDS, main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "names = {'wren_tui.cli.' + c.replace('-', '_'): c for c in COMMANDS}\n"
        "print(json.dumps(sorted(names[m] for m in sys.modules if m in names)), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    names: list[str] = json.loads(result.stderr.strip().splitlines()[-1])
    return names


@pytest.mark.parametrize("args", [["--help"], ["--version"], [], ["no-such-command"]], ids=repr)
def test_wren_help_and_version_import_no_commands_module(args: list[str]) -> None:
    assert _command_modules_loaded(args) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_imports_its_own_module_and_no_other_commands(command: str) -> None:
    assert set(_command_modules_loaded([command, "--help"])) == {command} | ALSO.get(command, set())


def test_wren_help_lists_each_command_as_its_module_registers_it() -> None:
    full, commands = build_parser()
    registered = {a.dest: a.help for a in full._subparsers._group_actions[0]._choices_actions}  # type: ignore[union-attr]
    assert registered == SUMMARIES and list(commands) == list(COMMANDS)
    assert listing_parser().format_help() == full.format_help()


# What each of these may import of Wren's (besides the standard library): nothing of a command's that it does
# not run. `--version` loads the C modules (to say whether they are in use) without their packages.
ALLOWED: dict[str, set[str]] = {
    "--help": {"wren_tui", "wren_tui.cli"},  # not `cli.about`: --version's report, imported when it is asked
    "--version": {
        "wren_tui",
        "wren_tui.cli",
        "wren_tui.cli.about",
        "wren_tui.portable",
        "wren_tui.journal._lines",
        "wren_tui.search._scan",
        "wren_tui.foreign._aider",
        "wren_tui.snapshots._linediff",
    },
    # The parser: the shared options, and what --agent, --role and --regex's help name (no reader, no journal).
    "search --help": {
        "wren_tui",
        "wren_tui.cli",
        "wren_tui.cli.options",
        "wren_tui.cli.search",
        "wren_tui.portable",
        "wren_tui.foreign",  # the registry alone: the agents' names, labels and variables
        "wren_tui.search",
        "wren_tui.search.choices",
    },
    # The parser alone: no journal, no snapshot store, no exit table (they load when blame runs).
    "blame --help": {
        "wren_tui",
        "wren_tui.cli",
        "wren_tui.cli.options",
        "wren_tui.cli.blame",
        "wren_tui.portable",
    },
}
# Nothing outside the standard library (msgspec, the journal's and the formats' decoder, alone is 2x bare Python).
OTHERS: dict[str, set[str]] = {"--help": set(), "--version": set(), "search --help": set(), "blame --help": set()}


def _loaded_by(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    """The modules `wren ARGS` adds to those a bare `python -c` has, run as its own process."""
    code = (
        "import json, sys\nbefore = set(sys.modules)\nfrom wren_tui.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(set(sys.modules) - before)), file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stderr.strip().splitlines()[-1])
    return set(loaded)


def _outside_the_standard_library(names: set[str]) -> set[str]:
    tops = {name.split(".")[0] for name in names}
    return {top for top in tops if top not in sys.stdlib_module_names and not top.startswith("_") and top != "wren_tui"}


@pytest.mark.parametrize("words", list(ALLOWED))
def test_help_version_search_help_and_blame_help_import_only_the_modules_they_need(words: str) -> None:
    loaded = _loaded_by(words.split())
    assert {name for name in loaded if name.startswith("wren_tui")} - ALLOWED[words] == set()
    assert _outside_the_standard_library(loaded) <= OTHERS[words]
    assert "sqlite3" not in loaded  # the index, and OpenCode's and Kilo's readers


@pytest.mark.parametrize("words", [["--help"], ["--version"]], ids=" ".join)
def test_wren_help_and_version_load_no_typing(words: list[str]) -> None:
    # typing is 1.8 ms of a start that is 10 ms of bare Python: the CLI's package and the portable layer import their
    # types for the checker alone.
    loaded = _loaded_by(words)
    assert "wren_tui.cli" in loaded and {"typing", "collections.abc"} & loaded == set()


def test_search_help_loads_no_engine_index_reader_or_viewer() -> None:
    loaded = _loaded_by(["search", "--help"])
    readers = {f"wren_tui.foreign.{home}" for home, _label, _env in FORMATS._homes.values()}
    never = {"wren_tui.cli.searching", "wren_tui.search.engine", "wren_tui.search.index", "wren_tui.search.indexer"}
    assert loaded & (readers | never) == set()
    assert not {name for name in loaded if name.split(".")[0] in ("textual", "httpx", "rich")}


def test_each_format_is_registered_by_its_name_label_and_variable() -> None:
    for name in FORMATS:
        fmt = FORMATS[name]
        assert (fmt.name, fmt.label, fmt.folder.env) == (name, *FORMATS.described(name))
    assert "nobody" not in FORMATS and FORMATS.get("nobody") is None


def test_each_formats_file_suffix_in_the_registry_is_its_modules() -> None:
    # The registry's table as it is (not a loaded format's own, which `suffix` gives once it is loaded).
    assert {name: FORMATS._suffixes.get(name, ".jsonl") for name in FORMATS} == {
        name: FORMATS[name].folder.suffix for name in FORMATS
    }
    assert {name: FORMATS.suffix(name) for name in FORMATS} == {name: FORMATS[name].folder.suffix for name in FORMATS}
    with pytest.raises(KeyError):
        FORMATS.suffix("nobody")


@pytest.mark.parametrize("setting", ["unset", "set", "both"])
def test_each_agents_own_folder_by_the_registrys_rule_is_its_modules_root(tmp_path: Path, setting: str) -> None:
    home = tmp_path / "home"
    variables = {v for rule in FORMATS._roots.values() if rule is not None for v in rule[0]}
    env = {"HOME": str(home)}
    if setting != "unset":
        env |= {v: str(tmp_path / v.lower()) for v in sorted(variables)}
    if setting == "both":
        env["QWEN_RUNTIME_DIR"] = ""  # set but empty: the next variable is the one
    ruled = dict(FORMATS.own_folders(env))
    assert ruled == {name: FORMATS[name].folder.root(env, home) for name in FORMATS if FORMATS[name].folder.own_folder}


def test_search_agent_choices_are_the_agents_search_reads() -> None:
    _parser, commands = build_parser("search")
    (agent,) = [a for a in commands["search"]._actions if a.dest == "agent"]
    assert tuple(agent.choices or ()) == (*agents(), "all")


def test_the_exit_statuses_help_lists_are_the_exit_tables() -> None:
    listed = dict(re.findall(r"(\d+) ([a-z][a-z ]+?)(?:,| \()", SUMMARY.split(": ", 1)[1]))
    assert {int(n) for n in listed} == {int(status) for status in Exit if status < 128}


EXTERNAL = Path(__file__).resolve().parent / "fixtures" / "external"


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_search_over_one_agent_imports_that_agents_reader_and_no_other(tmp_path: Path, agent: str) -> None:
    claude = tmp_path / "claude" / "projects" / "-work"
    codex = tmp_path / "codex" / "sessions" / "2026" / "01" / "25"
    for folder in (claude, codex, tmp_path / "wren"):
        folder.mkdir(parents=True)
    shutil.copy(
        EXTERNAL / "claude-code" / "agentlogs_crud.jsonl", claude / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl"
    )
    shutil.copy(EXTERNAL / "codex" / "agentlogs_crud_rollout.jsonl", codex / "rollout-2026-01-25T10-31-58-crud.jsonl")
    env = {
        "WREN_DIR": str(tmp_path / "wren"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    loaded = _loaded_by(["search", "joke", "--agent", agent, "--json", "--no-index"], env)
    readers = {f"wren_tui.foreign.{home}": name for name, (home, _label, _env) in FORMATS._homes.items()}
    assert {readers[name] for name in loaded if name in readers} == {agent}


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_an_indexed_search_over_one_agent_imports_that_agents_reader_to_build_and_no_reader_when_warm(
    tmp_path: Path, agent: str
) -> None:
    claude = tmp_path / "claude" / "projects" / "-work"
    codex = tmp_path / "codex" / "sessions" / "2026" / "01" / "25"
    for folder in (claude, codex, tmp_path / "wren"):
        folder.mkdir(parents=True)
    shutil.copy(
        EXTERNAL / "claude-code" / "agentlogs_crud.jsonl", claude / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl"
    )
    shutil.copy(EXTERNAL / "codex" / "agentlogs_crud_rollout.jsonl", codex / "rollout-2026-01-25T10-31-58-crud.jsonl")
    env = {
        "WREN_DIR": str(tmp_path / "wren"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    readers = {f"wren_tui.foreign.{home}": name for name, (home, _label, _env) in FORMATS._homes.items()}
    # The first search builds the index (reading the files: their agent's reader alone); the second is answered
    # from it, its files listed from the agent's folder (`foreign.folders`): no reader, no decoder.
    for readers_loaded in ({agent}, set()):
        loaded = _loaded_by(["search", "joke", "--agent", agent, "--json"], env)
        assert {readers[name] for name in loaded if name in readers} == readers_loaded
        if not readers_loaded:
            assert "wren_tui.foreign.listing" not in loaded
    assert (tmp_path / "wren" / ".index" / "search.sqlite").is_file()


# What a search of Claude Code's sessions answered wholly from the index never needs: the translating reader (and
# the skim), the read-ahead's subprocess, OpenSSL's hashes, the snapshot store's copying, the journal writer, the
# Wren journals' reader.
NOT_FOR_AN_ANSWERED_SEARCH = {
    "wren_tui.foreign.reader",
    "wren_tui.search.skim",
    "wren_tui.foreign.snapshot",
    "wren_tui.journal.writer",
    "subprocess",
    "hashlib",
    "tempfile",
    "shutil",  # argparse's formatter imports it to ask the terminal's width: cli.Formatter asks os, once
    "wren_tui.search.wren",  # Wren journals' reader, for a search of another agent's sessions
    "pickle",
}


def _one_claude_session(tmp_path: Path) -> dict[str, str]:
    """A Claude Code folder holding one recorded session, and an empty Wren folder: the environment naming both."""
    claude = tmp_path / "claude" / "projects" / "-work"
    claude.mkdir(parents=True)
    (tmp_path / "wren").mkdir()
    shutil.copy(
        EXTERNAL / "claude-code" / "agentlogs_crud.jsonl", claude / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl"
    )
    return {
        "WREN_DIR": str(tmp_path / "wren"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }


@pytest.mark.skipif(sys.platform != "linux", reason="a name of bytes that are not UTF-8: macOS and Windows keep none")
def test_a_session_named_in_bytes_that_are_not_utf8_is_read_from_its_file_and_the_index_not_written_each_search(
    tmp_path: Path,
) -> None:
    """The index cannot keep such a name (SQLite's text is UTF-8): the session is read from its file at every search,
    as without an index, and is no reason to open the index for writing (the writer loaded) at every search."""
    env = _one_claude_session(tmp_path)
    folder = tmp_path / "claude" / "projects" / "-work"
    recorded = (folder / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl").read_bytes()
    with open(os.fsencode(folder) + b"/caf\xe9-0001.jsonl", "wb") as odd:
        odd.write(recorded)
    args = ["search", "joke", "--agent", "claude", "--json"]
    assert "wren_tui.search.indexer" in _loaded_by(args, env)  # the index made
    loaded = _loaded_by(args, env)
    assert "wren_tui.search.indexer" not in loaded and "wren_tui.search.skim" in loaded  # the odd one read
    result = subprocess.run(
        [sys.executable, "-m", "wren_tui", *args], capture_output=True, text=True, timeout=60, env={**os.environ, **env}
    )
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    hits = [row for row in rows if row["type"] == "hit"]
    assert result.returncode == 0 and {row["session"] for row in hits} == {
        "8122657c-fe54-4dc9-89a3-20049e8a84f7",
        "caf\udce9-0001",
    }


def test_a_search_the_index_answers_loads_no_translator_no_subprocess_and_no_hashes(tmp_path: Path) -> None:
    env = _one_claude_session(tmp_path)
    built = _loaded_by(["search", "joke", "--agent", "claude", "--json"], env)
    assert "wren_tui.search.skim" in built  # the first search read the file to index it
    for words in (["joke"], ["-l", "joke"], ["quokkaflume"]):  # hits, a file's first hit, and none
        loaded = _loaded_by(["search", *words, "--agent", "claude", "--json"], env)
        assert loaded & NOT_FOR_AN_ANSWERED_SEARCH == set(), words


def test_ls_over_one_agent_imports_that_agents_reader_and_its_help_still_names_every_agent(tmp_path: Path) -> None:
    env = _one_claude_session(tmp_path)
    readers = {f"wren_tui.foreign.{home}": name for name, (home, _label, _env) in FORMATS._homes.items()}
    loaded = _loaded_by(["ls", "--agent", "claude", "--json"], env)
    assert {readers[name] for name in loaded if name in readers} == {"claude"}
    assert "asyncio" not in loaded  # the fleet's, for `wren ls nats://...` only
    helped = subprocess.run(
        [sys.executable, "-m", "wren_tui", "ls", "--help"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    said = " ".join(helped.split())
    for name in FORMATS:
        fmt = FORMATS[name]
        assert f"{name}: {fmt.label}" in said
        assert str(fmt.folder.root({}, Path("~"))) in said


# What a page of `wren ls --agent` made from the store's rows never needs: the translating reader, the snapshot store
# (its space is said of Wren's own journals only), the terminal's width and the copying of files (shutil), a
# command line quoted back (a refusal's), subprocesses, hashes, the journal writer, the fleet's asyncio.
NOT_FOR_A_PAGE_FROM_THE_STORE = {
    # No reader: the page's rows are the store's (an agent's Home says where its sessions are), printed without msgspec.
    "msgspec",
    "wren_tui.foreign.claude",
    "wren_tui.foreign.base",
    "wren_tui.journal.events",
    "wren_tui.journal.reader",
    "wren_tui.sessions.opening",
    "wren_tui.fleet",
    "wren_tui.foreign.reader",
    "wren_tui.snapshots",
    "wren_tui.journal.writer",
    "wren_tui.journal.commandline",
    "shutil",
    "subprocess",
    "hashlib",
    "tempfile",
    "pickle",
    "asyncio",
}


def test_a_page_of_ls_agent_from_the_store_loads_no_reader_no_snapshot_store_and_no_terminal_sizing(
    tmp_path: Path,
) -> None:
    env = _one_claude_session(tmp_path)
    first = _loaded_by(["ls", "--agent", "claude", "--json"], env)  # reads the file, and keeps its row
    assert "wren_tui.search.listing_cache" in first
    inside = tuple(f"{module}." for module in NOT_FOR_A_PAGE_FROM_THE_STORE)  # a package's modules too
    for args in (["--json", "--limit", "1"], ["--json"], []):  # piped text too: no terminal, no width asked
        loaded = _loaded_by(["ls", "--agent", "claude", *args], env)
        assert {name for name in loaded if name in NOT_FOR_A_PAGE_FROM_THE_STORE or name.startswith(inside)} == set()


def test_wren_log_of_a_wren_journal_loads_no_other_agents_reader_no_fork_and_no_file_watcher(tmp_path: Path) -> None:
    from tests.tui.journals import SESSION, finished_story, write_journal

    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    loaded = _loaded_by(["log", str(journal)])
    assert "wren_tui.sessions.local" in loaded  # read through the sessions floor
    never = {"wren_tui.sessions.foreign", "wren_tui.sessions.exported", "wren_tui.journal.forking"}
    assert loaded & never == set() and "wren_tui.journal.writer" not in loaded
    assert not {name for name in loaded if name.split(".")[0] in ("watchfiles", "textual", "rich")}


def test_wren_otel_help_loads_no_file_watcher() -> None:
    loaded = _loaded_by(["otel", "--help"])
    assert "wren_tui.cli.otel" in loaded  # the command's own module, so the help was its
    assert "wren_tui.journal.watching" not in loaded and "watchfiles" not in loaded  # started by --follow only


# What a warm `wren search` of Claude Code's sessions (each file as the index holds it) never loads: what only reading
# a session file runs (msgspec, the journal's reader and event types, Claude Code's reader with its decoders and
# translator, the formats' kinds, the items of events), what only other commands run (the sessions' contract and
# opening, the fleet's names), and the standard library's modules only they need.
NOT_FOR_A_WARM_SEARCH = {
    "msgspec",  # 20 ms: the rows are written by the standard library's JSON (`console.JsonRows`)
    "typing_extensions",
    "wren_tui.journal.reader",
    "wren_tui.journal.events",
    "wren_tui.journal.calls",
    "wren_tui.journal.locks",
    "wren_tui.journal.replay",
    "wren_tui.foreign.claude",  # Claude Code's reader: its line decoders and translator
    "wren_tui.foreign.kinds",  # what recognises a file's kind (ATIF's and mca's readers with it)
    "wren_tui.foreign.reader",
    "wren_tui.search.skim",
    "wren_tui.search.spoken",  # the items of Wren events: the readers'
    "wren_tui.sessions.contract",  # the viewer's and the commands' protocols of a session
    "wren_tui.sessions.opening",  # a session a person names (nats:// too)
    "wren_tui.fleet",
    "wren_tui.fleet.names",
    "socket",
    "selectors",
    "threading",  # the index's Ctrl+C watch asks the signal module instead; -l alone asks ahead (`AHEAD`)
    "uuid",
    "decimal",
    "platform",
    "textwrap",
    "unicodedata",
    "shlex",  # the exit table's commands to run, said only for a journal that stops
    "base64",  # a page's cursor, printed only when a page ends before the last hit
    # The value classes it makes are `records.Record`s: dataclasses loads inspect, ast, dis and tokenize (6 ms), and
    # compiled the methods of every class it decorated, made or not.
    "dataclasses",
    "inspect",
    "ast",
    "dis",
    "tokenize",
    "zlib",  # the kept store's manifest lines' CRCs, read only where the store holds some
    "wren_tui.search.indexer",  # the index opened read-only first (`Index.begin`), for writing only if a file is stale
    "importlib.util",  # --version's, to load a C module without its package
    "struct",  # a journal writer's mark (`portable.hold_mark`), taken or asked of only by the commands that need it
}
# The most modules a warm search adds to those of bare Python (56 on Python 3.11 as this is written; 59 with
# importlib.util and struct, 72 with dataclasses, 124 before).
MOST_FOR_A_WARM_SEARCH = 56
# What -l alone loads beside: its candidates are asked of the index in a thread while the sessions are listed
# (`index.IndexRead.ahead`).
AHEAD = {"threading", "_weakrefset"}


def _allowed(words: list[str], never: set[str], most: int) -> tuple[set[str], int]:
    """What a search of `words` must not load, and the most it may load (-l: its thread's modules besides)."""
    return (never - AHEAD, most + len(AHEAD)) if "-l" in words else (never, most)


@pytest.mark.parametrize("words", [["joke"], ["-l", "joke"], ["quokkaflume"]], ids=" ".join)
def test_a_warm_search_loads_only_what_it_runs(tmp_path: Path, words: list[str]) -> None:
    env = _one_claude_session(tmp_path)
    _loaded_by(["search", "joke", "--agent", "claude", "--json"], env)  # builds the index
    loaded = _loaded_by(["search", *words, "--agent", "claude", "--json"], env)
    never, most = _allowed(words, NOT_FOR_A_WARM_SEARCH, MOST_FOR_A_WARM_SEARCH)
    assert loaded & never == set()
    assert len(loaded) <= most, sorted(loaded)


def test_the_named_tuples_of_the_search_path_are_made_without_compiling_their_annotations() -> None:
    # typing.NamedTuple compiles each field's annotation written as text (a ForwardRef), and the process's first
    # compile() makes the classes of Python's AST (0.75 ms): these modules' annotations are evaluated (types, no text).
    code = (
        "import sys\ncompiled = []\n"
        "def hook(event, args):\n"
        "    frame = sys._getframe(1) if event == 'compile' else None\n"
        "    if frame is not None and frame.f_globals.get('__name__') == 'typing':  # a ForwardRef's\n"
        "        while frame is not None and not frame.f_globals.get('__name__', '').startswith('wren_tui'):\n"
        "            frame = frame.f_back\n"
        "        compiled.append('' if frame is None else frame.f_globals['__name__'])\n"
        "sys.addaudithook(hook)\n"
        "import wren_tui.search.pages\n"
        "import typing\ntyping.ForwardRef('int')  # one of this program's: the hook sees them\n"
        "print(' '.join(sorted(set(compiled))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    compilers = result.stdout.rstrip("\n").split(" ")
    assert compilers[0] == ""  # this program's ForwardRef
    ours = {"wren_tui.search.sources", "wren_tui.search.engine", "wren_tui.search.pages", "wren_tui.search.index"}
    assert ours & set(compilers) == set()


def test_a_warm_search_l_printing_paths_loads_only_what_it_runs(tmp_path: Path) -> None:
    # As a person (and the bench against `rg -l`) runs it: the paths printed as text, not JSON rows.
    env = _one_claude_session(tmp_path)
    _loaded_by(["search", "joke", "--agent", "claude", "--json"], env)  # builds the index
    loaded = _loaded_by(["search", "-l", "joke", "--agent", "claude"], env)
    assert "wren_tui.search.pages" in loaded  # it searched, and printed a page
    never, most = _allowed(
        ["-l"], NOT_FOR_A_WARM_SEARCH | NOT_FOR_AN_ANSWERED_SEARCH | {"json", "base64"}, MOST_FOR_A_WARM_SEARCH
    )
    assert "threading" in loaded  # its candidates asked ahead
    assert loaded & never == set()
    assert len(loaded) <= most, sorted(loaded)


# What a warm `wren search` of a folder of Wren journals (each journal as the index holds it, so none is opened) never
# loads: any agent's format module (the walk of a --dir takes their file names from the registry, `Registry.suffix`),
# what recognises a file by its first bytes and the formats' contract, the journal's reader and the raw pass over a
# journal (`search.wren`), what only reading a journal needs (pickle: a reading's memory kept in the index), the
# indexer (nothing to write), and msgspec with the event types: its hits' lines are decoded by the standard
# library's JSON (`search.stored`).
NOT_FOR_A_WARM_JOURNALS_SEARCH = {
    *(f"wren_tui.foreign.{home}" for home, _label, _env in FORMATS._homes.values()),
    "wren_tui.foreign.kinds",
    "wren_tui.foreign.contract",
    "wren_tui.foreign.listing",  # the rows of a listing (`every_session` is `foreign.every_agent`'s)
    "wren_tui.foreign.snapshot",
    "wren_tui.journal.reader",
    "wren_tui.journal._fastpath",
    "wren_tui.journal.events",
    "wren_tui.search.wren",
    "wren_tui.search.spoken",
    "wren_tui.search.skim",
    "wren_tui.search.readahead",
    "wren_tui.search.indexer",  # the index opened read-only: every journal as it holds it, nothing to write
    "msgspec",
    "typing_extensions",
    "pickle",
    "dataclasses",  # the value classes are `records.Record`s
    "inspect",
    "ast",
    "dis",
    "tokenize",
}
# The most modules a warm search of Wren journals adds to those of bare Python, finding nothing (58 on Python 3.11 as
# this is written) and finding hits (61); 61 and 64 with importlib.util and struct; with dataclasses 74 and 76; with
# every agent's format module, what recognises a file, the journal's reader and msgspec, as before, either added 143
# (69 of them Wren's).
MOST_FOR_A_WARM_JOURNALS_SEARCH = {False: 58, True: 61}


def _wren_journals(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder of two Wren journals (a joke told in one), no other agent's folder: the folder and the environment."""
    from tests.tui.journals import assistant, user, write_journal

    folder = tmp_path / "journals"
    write_journal(folder / "s-20250301-093000-aaaa.jsonl", [user("tell me a joke"), assistant("a joke about parrots")])
    write_journal(folder / "s-20250302-100000-bbbb.jsonl", [user("no laughing matter"), assistant("quite so")])
    env = {
        "WREN_DIR": str(folder),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "HOME": str(tmp_path / "home"),
    }
    return folder, env


@pytest.mark.parametrize("where", ["--agent wren --dir", "--dir", "--agent wren"])
def test_a_warm_search_of_wren_journals_loads_no_agents_reader_nor_the_journals_reader(
    tmp_path: Path, where: str
) -> None:
    folder, env = _wren_journals(tmp_path)
    options = [*where.split(), *([str(folder)] if "--dir" in where else [])]
    built = _loaded_by(["search", "joke", *options, "--json"], env)  # builds the index: each journal read
    assert "wren_tui.journal.reader" in built
    for words in (["joke"], ["-l", "joke"], ["quokkaflume"]):  # hits, a file's first hit, and none
        loaded = _loaded_by(["search", *words, *options, "--json"], env)
        found = words != ["quokkaflume"]
        never, most = _allowed(words, NOT_FOR_A_WARM_JOURNALS_SEARCH, MOST_FOR_A_WARM_JOURNALS_SEARCH[found])
        assert loaded & never == set(), words
        assert len(loaded) <= most, sorted(loaded)


def test_a_line_appended_to_a_journal_after_the_index_was_built_is_found_and_then_held_by_the_index(
    tmp_path: Path,
) -> None:
    from tests.tui.journals import encode, user

    folder, env = _wren_journals(tmp_path)
    options = ["--agent", "wren", "--dir", str(folder)]
    _loaded_by(["search", "joke", *options, "--json"], env)  # builds the index
    with (folder / "s-20250302-100000-bbbb.jsonl").open("ab") as out:
        out.write(encode([user("one more joke, a quokkaflume")], first_seq=3))
    result = subprocess.run(
        [sys.executable, "-m", "wren_tui", "search", "quokkaflume", *options, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(row["session"], row["seq"], row["role"]) for row in rows] == [("s-20250302-100000-bbbb", 3, "user")]
    # That search read the grown part and wrote it into the index: the next one is warm again.
    loaded = _loaded_by(["search", "quokkaflume", *options, "--json"], env)
    assert loaded & NOT_FOR_A_WARM_JOURNALS_SEARCH == set()
