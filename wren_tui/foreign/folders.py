"""Where other agents keep their sessions, and the walk that finds them, without any agent's reader.

A format's `Folder` (its variable, its folder, which of its files are sessions) and, for the agents whose every
file is one session read as it is, a `Home`: the folder and the session's id from its path. Listing an agent's
sessions (`wren search --agent claude` answered by its index, `keep.found.Kept.own_files`) needs these alone:
no decoder, no translator, no msgspec. The format modules take their `Folder` and `session_id` from here (one
home); `FORMATS[name]` still gives the whole `Format`, its module imported then.

Only the standard library and `portable` are imported here.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from ..portable import O_BINARY, O_CLOEXEC, O_NONBLOCK, open_read_only, pread
from ..records import Frozen


def _every_file(_path: object) -> bool:
    return True


def _nothing_beside(_path: Path) -> tuple[Path, ...]:
    return ()


def file_stem(path: Path) -> str:
    """A session's id where its agent names the file after it: the file's name without its suffix."""
    return path.stem


def variable_or_home(variable: str, default: str, below: str) -> Callable[[Mapping[str, str], Path], Path]:
    """A `Folder.root`: `below` inside the folder $`variable` names, else inside `default` in the home folder ("": the
    home folder itself). `variable_or_home("CODEX_HOME", ".codex", "sessions")`: $CODEX_HOME/sessions, else
    ~/.codex/sessions."""

    def root(env: Mapping[str, str], home: Path) -> Path:
        named = env.get(variable)
        return (Path(os.path.expanduser(named)) if named else home / default) / below

    return root


class Folder(Frozen):
    """Where an agent keeps its sessions: the folder, which of its files are sessions, and what goes with each."""

    __slots__ = (
        "env",
        "hidden_folders",
        "is_session_file",
        "kept_with",
        "own_folder",
        "parts",
        "root",
        "suffix",
        "where",
    )
    env: str  # the variable naming the agent's own folder, when set ("": none)
    # The folder of sessions: from the environment and the home folder.
    root: Callable[[Mapping[str, str], Path], Path]
    # How its session files' names end (a folder is searched for these).
    suffix: str
    # Which files of its folder with its suffix are sessions (not the client's other files).
    is_session_file: Callable[[Path], bool]
    # Whether a search for its files goes into hidden folders (.git, .venv: not where aider writes).
    hidden_folders: bool
    # Whether its default folder is the agent's own (False: aider writes beside each project, and its
    # "folder" is wherever Wren is run), so that a Wren fork is never written inside it.
    own_folder: bool
    # Where its sessions are found when that is not one file a session in the agent's own folder, as
    # `--agent`'s help says it ("OpenCode keeps every session in one database ...").
    where: str | None
    # For a session spread over the files of a folder (Mistral Vibe's journal segments beside its meta.json): that
    # folder, from the session's path. It is watched for changes, and its newest file's time is the session's.
    parts: Callable[[Path], Path] | None
    # The agent's other files of a session, kept with its session file by `wren keep` so that its reader reads the
    # kept folder as it reads the agent's (Cline's status document beside its messages; Kimi's context and state).
    kept_with: Callable[[Path], tuple[Path, ...]]

    def __init__(
        self,
        env: str,
        root: Callable[[Mapping[str, str], Path], Path],
        suffix: str = ".jsonl",
        is_session_file: Callable[[Path], bool] = _every_file,
        hidden_folders: bool = True,
        own_folder: bool = True,
        where: str | None = None,
        parts: Callable[[Path], Path] | None = None,
        kept_with: Callable[[Path], tuple[Path, ...]] = _nothing_beside,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "env", env)
        set_field(self, "root", root)
        set_field(self, "suffix", suffix)
        set_field(self, "is_session_file", is_session_file)
        set_field(self, "hidden_folders", hidden_folders)
        set_field(self, "own_folder", own_folder)
        set_field(self, "where", where)
        set_field(self, "parts", parts)
        set_field(self, "kept_with", kept_with)


if TYPE_CHECKING:  # protocols for the checker alone: no class made at import

    class Listed(Protocol):
        """What a listing asks of an agent: a `Home`, or the whole `Format` (which has these too)."""

        @property
        def name(self) -> str: ...

        @property
        def folder(self) -> Folder: ...

        @property
        def session_id(self) -> Callable[[Path], str]: ...

    class _Whole(Protocol):
        """What the link check asks of a whole `Format` (this module imports no reader, nor `base`)."""

        @property
        def export_all(self) -> object | None: ...

        @property
        def claims_file(self) -> Callable[[Path, bytes], bool] | None: ...


class Home(Frozen):
    """An agent whose every file is one session, as a listing finds its sessions: its name, its folder and a
    session's id from its path. Its `Format` is `FORMATS[name]`, loaded when a file is read."""

    __slots__ = ("folder", "name", "session_id")
    name: str
    folder: Folder
    session_id: Callable[[Path], str]

    def __init__(self, name: str, folder: Folder, session_id: Callable[[Path], str] = file_stem) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "folder", folder)
        object.__setattr__(self, "session_id", session_id)


# Between a file that holds several sessions and one of them, in a path: `DB#ID` (OpenCode's database).
MEMBER = "#"


def split_member(path: Path) -> tuple[Path, str | None]:
    """The file and the session a path names: `FILE#ID`, or the file alone (its only session)."""
    if MEMBER in path.name and not os.path.lexists(path):
        base, _sep, session = path.name.rpartition(MEMBER)
        return path.with_name(base), session or None
    return path, None


def member_path(file: Path, session: str) -> Path:
    """The path that names one session of a file that holds several: `FILE#ID`."""
    return file.with_name(f"{file.name}{MEMBER}{session}")


def head_of(path: Path, size: int) -> bytes:
    """The first `size` bytes of the file at `path`; b"" when it cannot be opened or read (no link is followed,
    and a FIFO is never waited on)."""
    try:
        fd = open_read_only(path)
    except OSError:
        return b""
    try:
        return pread(fd, size, 0)
    except OSError:
        return b""
    finally:
        os.close(fd)


class KeptMark(Frozen):
    """What a command says of a session Wren kept (`wren keep`) that its agent deleted, truncated or rewritten."""

    __slots__ = ("copy", "sentence")
    sentence: str  # "kept; deleted by its agent on 2026-12-07 09:10 UTC"
    copy: bool  # the kept copy is read in place of the agent's file (gone, or shorter): never live

    def __init__(self, sentence: str, copy: bool) -> None:
        object.__setattr__(self, "sentence", sentence)
        object.__setattr__(self, "copy", copy)


# --- the agents' homes (each format module takes its Folder and session_id from here) ---------------------------


def _claude_session(path: str | os.PathLike[str]) -> bool:
    """A session, not a subagent's thread (`<session>/subagents/agent-*.jsonl`)."""
    # The path's own text, split once: a listing gives the text (`listed`), no Path made for each of thousands of files.
    folder, _sep, name = os.fspath(path).rpartition(os.sep)
    return _claude_name(name) and _claude_folder(folder)


# How a subagent's thread's name starts (`agent-*.jsonl`): never a session's.
_CLAUDE_SUBAGENT = "agent-"


def _claude_name(name: str) -> bool:
    """Whether a file of this name can be a session (not a subagent's thread)."""
    return not name.startswith(_CLAUDE_SUBAGENT)


def _claude_folder(folder: str) -> bool:
    """Whether the folder of this text (a file's text before its last separator) can hold sessions: not a session's
    `subagents`."""
    return not (folder == "subagents" or folder.endswith(os.sep + "subagents"))


def _codex_id(path: str | os.PathLike[str]) -> str:
    """The uuid at the end of rollout-<time>-<uuid> (of a Path, or of a path's text: `ID_ON_TEXT`)."""
    stem = _stem_of_text(os.fspath(path))
    parts = stem.split("-")
    return "-".join(parts[-5:]) if stem.startswith("rollout-") and len(parts) > 5 else stem


def _pi_id(path: str | os.PathLike[str]) -> str:
    """The uuid after the start time (<time>_<uuid>), of a Path or of a path's text (`ID_ON_TEXT`)."""
    return _stem_of_text(os.fspath(path)).rsplit("_", 1)[-1]


@cache
def _gemini_file() -> re.Pattern[str]:
    """The name of a Gemini CLI chat: compiled when its folder is first listed (not by a search of another agent)."""
    return re.compile(r"^session-.*\.jsonl$")


def _gemini_session(path: Path) -> bool:
    """A chat (`session-<time>-<id8>.jsonl`), not the client's other files."""
    return bool(_gemini_file().match(path.name))


def _gemini_id(path: Path) -> str:
    """The file's name without `session-` (its start time and the session id's first 8 hex)."""
    return path.stem.removeprefix("session-")


# Moves only where Qwen Code's conversations (and logs) go, not the rest of ~/.qwen.
QWEN_RUNTIME_ENV = "QWEN_RUNTIME_DIR"


def _qwen_root(env: Mapping[str, str], home: Path) -> Path:
    """$QWEN_RUNTIME_DIR/projects, else $QWEN_HOME/projects, else ~/.qwen/projects."""
    base = env.get(QWEN_RUNTIME_ENV) or env.get("QWEN_HOME")
    return (Path(os.path.expanduser(base)) if base else home / ".qwen") / "projects"


def _qwen_session(path: Path) -> bool:
    """A conversation (`<project>/chats/<uuid>.jsonl`), not the client's usage records or logs."""
    return path.parent.name == "chats"


def _copilot_session(path: Path) -> bool:
    return path.name == "events.jsonl"


def _copilot_id(path: Path) -> str:
    """The session's folder name (its uuid)."""
    return path.parent.name if path.name == "events.jsonl" else path.stem


def _kimi_session(path: Path) -> bool:
    """A session's `wire.jsonl` (not its `context.jsonl`, which holds what was sent to the model)."""
    return path.name == "wire.jsonl"


def _kimi_with(path: Path) -> tuple[Path, ...]:
    """The session's other files in its folder: what was sent to the model (`context.jsonl`) and its state."""
    return (path.with_name("context.jsonl"), path.with_name("state.json"))


def _kimi_id(path: Path) -> str:
    """The session's uuid: the name of the folder its wire.jsonl is in."""
    return path.parent.name if path.name == "wire.jsonl" and path.parent.name else path.stem


def _home(
    name: str,
    env: str,
    default: str,
    below: str,
    *,
    is_session_file: Callable[[Path], bool] = _every_file,
    session_id: Callable[[Path], str] = file_stem,
    kept_with: Callable[[Path], tuple[Path, ...]] = _nothing_beside,
) -> Home:
    """An agent keeping its sessions `below` the folder $`env` names, else `below` `default` in the home folder."""
    root = variable_or_home(env, default, below)
    return Home(name, Folder(env=env, root=root, is_session_file=is_session_file, kept_with=kept_with), session_id)


CLAUDE = _home("claude", "CLAUDE_CONFIG_DIR", ".claude", "projects", is_session_file=_claude_session)
CODEX = _home("codex", "CODEX_HOME", ".codex", "sessions", session_id=_codex_id)
PI = _home("pi", "PI_CODING_AGENT_DIR", ".pi/agent", "sessions", session_id=_pi_id)
GEMINI = _home("gemini", "GEMINI_CLI_HOME", "", ".gemini/tmp", is_session_file=_gemini_session, session_id=_gemini_id)
QWEN = Home("qwen", Folder(env="QWEN_HOME", root=_qwen_root, is_session_file=_qwen_session))
COPILOT = _home(
    "copilot", "COPILOT_HOME", ".copilot", "session-state", is_session_file=_copilot_session, session_id=_copilot_id
)
KIMI = _home(
    "kimi",
    "KIMI_SHARE_DIR",
    ".kimi",
    "sessions",
    is_session_file=_kimi_session,
    session_id=_kimi_id,
    kept_with=_kimi_with,
)
# aider keeps no folder of its own: a chat history is a Markdown file (of its default name, or any) starting as its.
AIDER_HEADER = b"# aider chat started at "
AIDER_DEFAULT_NAME = ".aider.chat.history.md"


def aider_claims(path: Path, head: bytes) -> bool:
    """aider's first line: `# aider chat started at ` (after blank lines)."""
    return head.lstrip(b"\r\n").startswith(AIDER_HEADER)


def _aider_session(path: Path) -> bool:
    """A Markdown file whose first line is aider's."""
    return aider_claims(path, head_of(path, 256))


def _aider_root(env: Mapping[str, str], home: Path) -> Path:
    """The folder of $AIDER_CHAT_HISTORY_FILE when set, else the current folder (aider has no folder of its own)."""
    named = env.get("AIDER_CHAT_HISTORY_FILE")
    return Path(os.path.expanduser(named)).parent if named else Path(os.curdir)


def _aider_id(path: Path) -> str:
    """The project's folder name for aider's default name (the current folder's, for a path relative to it),
    else the file's name (as for one in the filesystem's root: a folder with no name)."""
    if path.name != AIDER_DEFAULT_NAME:
        return path.name
    return Path(os.path.abspath(path)).parent.name or path.name


AIDER = Home(
    "aider",
    Folder(
        env="AIDER_CHAT_HISTORY_FILE",
        root=_aider_root,
        suffix=".md",
        is_session_file=_aider_session,
        hidden_folders=False,
        own_folder=False,
        where=(
            "aider keeps no folder of its own: its chat histories are found by their first line in the folder --dir "
            "names, else the current folder, and the folders below it"
        ),
    ),
    _aider_id,
)
# The agents listed without their module (`FORMATS.home`): each file one session (read as it is, or aider's exported
# into lines when read). The others are listed by their `Format`.
HOMES: dict[str, Home] = {home.name: home for home in (CLAUDE, CODEX, PI, GEMINI, QWEN, COPILOT, KIMI, AIDER)}


# --- the walk --------------------------------------------------------------------------------------------------


def session_files(fmt: Listed, root: Path, skipped: list[str] | None = None) -> Iterator[Path]:
    """The session files of `fmt` under `root`, in nested folders too (no link is followed).

    Args:
        skipped: Given, it receives a sentence for each folder below `root` that cannot be listed
            (no permission...), for the command to say rather than leave its sessions out silently.
    """
    for text in found_files(fmt, root, skipped, stat_each=False)[0]:
        yield Path(text)


# A `Folder.is_session_file` that is a test of a file's folder (its text) and how no session's name starts: a listing
# asks the first once a folder and the second of each name (`_session_texts`), and makes no `Path` for each of
# thousands of files (the other agents' tests, but `_every_file`, are asked of a Path).
_ON_PARTS: dict[Callable[[Path], bool], tuple[Callable[[str], bool], str]] = {
    _claude_session: (_claude_folder, _CLAUDE_SUBAGENT),
}


def _stem_of_text(text: str) -> str:
    """`file_stem` of a path's text, without a Path: its name less its last suffix (as `Path.stem` says it)."""
    name = os.path.basename(text)
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


# A `session_id` that can be asked of a path's text (claude's, codex's, pi's): a search's hit says its session's id
# with no Path made.
ID_ON_TEXT: dict[Callable[[Path], str], Callable[[str], str]] = {
    file_stem: _stem_of_text,
    _codex_id: _codex_id,
    _pi_id: _pi_id,
}


def listed(
    fmt: Listed, root: Path, skipped: list[str] | None = None, *, stat_each: bool = True
) -> Iterator[tuple[str, os.stat_result | None]]:
    """`session_files`, each by its path's text (`str(path)` of the path `session_files` gives: no `Path` made for
    each file), with the file as it was stat'ed once when found (`stat_each`; its link not followed), None for one
    gone since or not stat'ed: a search sorts by it and its index compares it, not stat'ing again."""
    texts, stats = found_files(fmt, root, skipped, stat_each=stat_each)
    return zip(texts, stats, strict=True)


def found_files(
    fmt: Listed, root: Path, skipped: list[str] | None = None, *, stat_each: bool = True
) -> tuple[list[str], list[os.stat_result | None]]:
    """`listed` as two lists of the same length: the files' texts, and each one's stat (None: not stat'ed, or gone
    since). A warm search lists thousands of files: no tuple, generator or `Path` is made for each (a walk of 2,000
    files takes what a bare `os.scandir` and `os.stat` of each take)."""
    links: list[Path] | None = [] if skipped is not None else None
    texts = _session_texts(fmt.folder, root, skipped, links)
    stats: list[os.stat_result | None]
    if not stat_each:
        stats = [None] * len(texts)
    else:
        try:
            # By its path (not `DirEntry.stat()`: Windows gives a DirEntry's no inode nor device, which the index
            # compares), each file once, its link not followed.
            stats = list(map(os.lstat, texts))
        except OSError:  # one gone since it was listed (rare): each of them looked at alone
            stats = [_stat_or_none(text) for text in texts]
    for link in links or ():
        if _session_through_link(fmt, link):
            assert skipped is not None
            skipped.append(f"{link}: is a link to a session, and Wren follows no link (name the file it points to)")
    return texts, stats


def _stat_or_none(text: str) -> os.stat_result | None:
    try:
        return os.stat(text, follow_symlinks=False)
    except OSError:
        return None


def _entries(folder: str, skipped: list[str] | None) -> list[os.DirEntry[str]] | None:
    """The entries of `folder`; None when it cannot be listed: not there (an agent's folder not made yet holds no
    sessions), or said in `skipped` (no permission, not a folder)."""
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if skipped is not None:
            skipped.append(f"{folder}: {(exc.strerror or str(exc)).lower()}, so its sessions cannot be read")
        return None


def _session_texts(own: Folder, root: Path, skipped: list[str] | None, links: list[Path] | None) -> list[str]:
    """The texts of `own`'s session files below `root` (as `walk_texts` gives them, filtered by `is_session_file`),
    in `walk_texts`'s order: one list, each folder's files tested by name and the folder by its text once
    (`_ON_PARTS`), where the walk and its filter were a generator of tuples a file."""
    test = own.is_session_file
    parts = _ON_PARTS.get(test)
    on_path = None if parts is not None or test is _every_file else test  # asked of a Path: the other agents'
    hidden_too, suffixes = own.hidden_folders, own.suffix
    base = str(Path(root))  # as a Path says it (no doubled or trailing separator)
    # Path(".") / "a" is "a": the current folder's files are named without "./" (an aider search of the current folder).
    pending = [(base, "" if base == os.curdir else base)]
    join, sep = os.path.join, os.sep
    texts: list[str] = []
    take = texts.append
    while pending:
        folder, prefix = pending.pop()
        entries = _entries(folder, skipped)
        if entries is None:
            continue
        # A file's text is `join(prefix, name)`: its folder's part, what join puts before any name (one holds no
        # separator nor drive), made once a folder.
        lead = join(prefix, "_")[:-1]
        # The folder's test, where the agent's test is of a folder and a name: `lead + name`'s text before its last
        # separator is lead's (a name holds no separator).
        holds = parts is None or parts[0](lead.rpartition(sep)[0])
        never = None if parts is None else parts[1]  # how no session's name starts
        # scandir's own path of an entry is `join(folder, name)`: the text wanted, but in the current folder ("./a").
        as_listed = folder is prefix
        for entry in entries:
            try:
                name = entry.name
                if name.endswith(suffixes) and entry.is_file(follow_symlinks=False):
                    if not holds or (never is not None and name.startswith(never)):
                        continue
                    text = entry.path if as_listed else lead + name
                    if on_path is None or on_path(Path(text)):
                        take(text)
                elif entry.is_dir(follow_symlinks=False):
                    if hidden_too or not name.startswith("."):
                        below = join(prefix, name) if prefix else name
                        pending.append((below, below))
                elif links is not None and name.endswith(suffixes) and entry.is_symlink():
                    links.append(Path(join(prefix, name) if prefix else name))
            except OSError:
                continue
    return texts


def _session_through_link(listed: Listed, link: Path) -> bool:
    """Whether the link at `link` leads to a file that starts as a session of `listed` does (its first bytes only)."""
    try:
        if not stat.S_ISREG(os.stat(link).st_mode):
            return False
        fd = os.open(link, os.O_RDONLY | O_BINARY | O_CLOEXEC | O_NONBLOCK)
    except OSError:
        return False
    try:
        head = pread(fd, 256, 0)
    except OSError:
        return False
    finally:
        os.close(fd)
    fmt = _format_of(listed)
    if fmt.export_all is not None:  # a database: its header (its tables are read only from the file itself)
        from .snapshot import SQLITE_HEADER  # shutil, tempfile: only for a database

        return head.startswith(SQLITE_HEADER)
    return fmt.claims_file(link, head) if fmt.claims_file is not None else bool(head)


def _format_of(listed: Listed) -> _Whole:
    """The whole format of a `Home` (its module imported now), or the format itself (nothing else is `Listed`)."""
    if isinstance(listed, Home):
        from . import FORMATS

        return FORMATS[listed.name]
    return cast("_Whole", listed)


def walk(
    root: Path,
    skipped: list[str] | None,
    hidden_too: bool,
    suffixes: str | tuple[str, ...],
    links: list[Path] | None = None,
) -> Iterator[tuple[Path, os.DirEntry[str], bool, bool]]:
    """The regular files below `root` whose names end in one of `suffixes` (no link followed), each with its entry,
    whether a hidden folder holds it and whether it is directly in `root`; hidden folders are gone into only if
    `hidden_too`.
    `links`, given, receives each link whose name so ends (not followed)."""
    for text, entry, hidden, top in walk_texts(root, skipped, hidden_too, suffixes, links):
        yield Path(text), entry, hidden, top


def walk_texts(
    root: Path,
    skipped: list[str] | None,
    hidden_too: bool,
    suffixes: str | tuple[str, ...],
    links: list[Path] | None = None,
) -> Iterator[tuple[str, os.DirEntry[str], bool, bool]]:
    """`walk`, each file by its path's text: `str(root / ... / name)`, the text of the `Path` `walk` gives, made
    without one (a `Path` a file was most of a warm search's walk)."""
    base = str(Path(root))  # as a Path says it (no doubled or trailing separator)
    # Path(".") / "a" is "a": the current folder's files are named without "./" (an aider search of the current folder).
    pending = [(base, "" if base == os.curdir else base, False)]
    join = os.path.join
    while pending:
        folder, prefix, hidden = pending.pop()
        top = folder is base
        entries = _entries(folder, skipped)
        if entries is None:
            continue
        for entry in entries:
            try:
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    dot = name.startswith(".")
                    if hidden_too or not dot:
                        below = join(prefix, name) if prefix else name
                        pending.append((below, below, hidden or dot))
                elif name.endswith(suffixes) and entry.is_file(follow_symlinks=False):
                    yield (join(prefix, name) if prefix else name), entry, hidden, top
                elif links is not None and name.endswith(suffixes) and entry.is_symlink():
                    links.append(Path(join(prefix, name) if prefix else name))
            except OSError:
                continue
