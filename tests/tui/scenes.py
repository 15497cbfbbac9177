"""The viewer's fixed scenes: one journal folder, a fixed clock, keys to press, a terminal size.

Shared by the snapshot tests and `python -m tests.tui.screenshots` (the `just screenshots` recipe),
so the README's pictures are exactly what the tests check.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from textual.pilot import Pilot

from tests.conftest import FIXTURES
from tests.foreign.sessions import copy_session
from tests.tui.conftest import screen_text, wait_for
from tests.tui.family import FORK_START, family, other_path, write_fork
from tests.tui.journals import (
    FORK_SESSION,
    SESSION,
    START,
    after_last,
    assistant,
    finished_story,
    story,
    tool_result,
    user,
    write_journal,
)
from wren_tui.foreign import FORMATS
from wren_tui.journal.events import (
    INSTRUCTIONS_MARK,
    ChatMessage,
    Compaction,
    Fork,
    KnownEvent,
    Message,
    Snapshot,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from wren_tui.snapshots.store import STORE, Store
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.foreign import ForeignFolder

OLDER = "s-20250228-173000-k3v9"


@dataclass(frozen=True)
class Scene:
    name: str
    size: tuple[int, int]
    press: tuple[str, ...]
    build: Callable[[Path], WrenApp]
    # For a scene whose keys start work in a thread: what must hold before the picture is taken.
    ready: Callable[[WrenApp], bool] | None = None


async def play(scene: Scene, pilot: Pilot[object]) -> None:
    """Press the scene's keys, then wait (bounded) until it is ready to be pictured."""
    await pilot.press(*scene.press)
    ready = scene.ready
    if ready is not None:
        app = pilot.app
        assert isinstance(app, WrenApp)
        await wait_for(pilot, lambda: ready(app), f"the {scene.name} scene to be ready")


def _folder(root: Path) -> Path:
    """A journals folder with a finished session, one cut off mid-call, an older one and a fork."""
    folder = root / "journals"
    write_journal(folder / f"{SESSION}.jsonl", finished_story())
    write_journal(folder / "s-20250301-101500-cut1.jsonl", story(), start=START + timedelta(minutes=45))
    write_journal(folder / f"{OLDER}.jsonl", finished_story()[:12], start=START - timedelta(hours=16))
    forked: list[KnownEvent] = [*finished_story()[:2], Fork(from_=SESSION, at_seq=2)]
    write_journal(folder / f"{FORK_SESSION}.jsonl", forked, start=START + timedelta(minutes=15))
    return folder


def _clock(events: list[KnownEvent], seconds: float, start: datetime = START) -> Callable[[], object]:
    moment = after_last(events, seconds, start)
    return lambda: moment


def session(root: Path) -> WrenApp:
    folder = _folder(root)
    clock = _clock(finished_story(), 42)
    return WrenApp(folder=Path("journals"), session=folder / f"{SESSION}.jsonl", clock=clock)  # type: ignore[arg-type]


def compacted(root: Path) -> WrenApp:
    """A session past its window: project instructions, two turns compacted, a message with a file given by `@`."""
    rules = INSTRUCTIONS_MARK + "\n" + "\n".join(f"rule {n}: keep it short" for n in range(12))
    given = "what does @a.txt say?\n\n--- @a.txt ---\n" + "".join(f"alpha line {n}\n" for n in range(20))
    summary = "\n".join(f"Request {n}: 'read part {n}'" for n in range(1, 9))
    events: list[KnownEvent] = [
        Message(message=ChatMessage(role="user", content=rules)),
        user("read part 1"),
        assistant("Part 1 read."),
        user("read part 2"),
        assistant("Part 2 read."),
        Compaction(
            summary=summary, first_seq=1, last_seq=5, replaced=5, keep_seq=1, tokens_before=2412, tokens_after=704
        ),
        user(given + "--- end of @a.txt ---"),
        assistant("It says alpha."),
        Usage(input_tokens=900, output_tokens=12, model="scripted", estimated=874, window=3000),
    ]
    path = write_journal(root / "journals" / f"{SESSION}.jsonl", events)
    return WrenApp(folder=Path("journals"), session=path, clock=_clock(events, 42))  # type: ignore[arg-type]


def call_lines(root: Path) -> WrenApp:
    """A session whose edit is in the snapshot store: the snapshot before the call and the one after it."""
    workspace = root / "ws"
    (workspace / "stats").mkdir(parents=True)
    core = workspace / "stats" / "core.py"
    core.write_text("def mean(values):\n    return sum(values) / len(values)\n")
    (workspace / "README.md").write_text("# stats\n")
    folder = root / "journals"
    store = Store(folder / STORE)
    before = store.take(workspace, SESSION).id
    core.write_text("def mean(values):\n    if not values:\n        return 0.0\n    return sum(values) / len(values)\n")
    after = store.take(workspace, SESSION).id
    args = '{"path": "stats/core.py", "old": "def mean(values):\\n", "new": "def mean(values):\\n    if not ..."}'
    events: list[KnownEvent] = [
        user("mean() fails on an empty list; fix it"),
        assistant("", ToolCall("call_1", "edit_file", args)),
        Snapshot(id=before, files=2, before="call_1"),
        ToolStart(id="call_1", name="edit_file", read_only=False),
        ToolEnd(id="call_1", ok=True, elapsed_ms=3, chars=40),
        tool_result("call_1", "edited stats/core.py: 1 replacement"),
        Snapshot(id=after, files=2, changed=1),
        assistant("mean() now returns 0.0 for an empty list."),
    ]
    path = write_journal(folder / f"{SESSION}.jsonl", events)
    return WrenApp(folder=Path("journals"), session=path, clock=_clock(events, 42))  # type: ignore[arg-type]


def outcome_unknown(root: Path) -> WrenApp:
    folder = _folder(root)
    clock = _clock(story(), 42, START + timedelta(minutes=45))
    path = folder / "s-20250301-101500-cut1.jsonl"
    return WrenApp(folder=Path("journals"), session=path, clock=clock)  # type: ignore[arg-type]


def browser(root: Path) -> WrenApp:
    _folder(root)
    return WrenApp(folder=Path("journals"), clock=_clock(finished_story(), 42))  # type: ignore[arg-type]


def _family(root: Path) -> Path:
    """The family of forks, and a fork whose parent was never in the folder."""
    folder = root / "journals"
    family(folder)
    gone = write_journal(root / "elsewhere" / "s-20250301-080000-gone.jsonl", finished_story())
    write_fork(folder / "s-20250301-110000-orph.jsonl", gone, 2, other_path(), start=FORK_START + timedelta(hours=1))
    return folder


def fork_tree(root: Path) -> WrenApp:
    _family(root)
    return WrenApp(folder=Path("journals"), clock=lambda: FORK_START)  # type: ignore[arg-type]


def grandchild(root: Path) -> WrenApp:
    folder = _family(root)
    moment = FORK_START + timedelta(minutes=30)
    return WrenApp(folder=Path("journals"), session=folder / "s-20250301-100000-frk3.jsonl", clock=lambda: moment)  # type: ignore[arg-type]


def fork(root: Path) -> WrenApp:
    folder = _family(root)
    moment = FORK_START + timedelta(minutes=30)
    return WrenApp(folder=Path("journals"), session=folder / "s-20250301-095000-frk1.jsonl", clock=lambda: moment)  # type: ignore[arg-type]


def _shows(text: str) -> Callable[[WrenApp], bool]:
    return lambda app: text in screen_text(app)


def _results_done(app: WrenApp) -> bool:
    from wren_tui.tui.screens.session_list import SessionList

    screen = app.screen
    return isinstance(screen, SessionList) and screen.results_shown and screen.results.done


# Other agents' sessions: their real recordings, last written long before the fixed clock (so not live).
AGENT_CLOCK = datetime(2026, 11, 30, 9, 4, 12, tzinfo=UTC)
_WHEN = 10 * 365 * 86400


# The agents recorded killed mid-call too (their browser's scene is theirs); the others have three recordings.
_FIRST_AGENTS = ("claude", "codex", "pi")
# After the later agents' recordings (Gemini CLI, Qwen Code, Copilot CLI: 2026-12-01).
LATER_CLOCK = datetime(2026, 12, 1, 14, 20, tzinfo=UTC)


def _agents(root: Path, agents: tuple[str, ...] = _FIRST_AGENTS) -> dict[str, Path]:
    """Each agent's sessions folder (relative to `root`, the scene's working folder) with its recordings."""
    folders = {agent: Path("agents") / agent for agent in agents}
    for agent, folder in folders.items():
        for name, n in _RECORDING.items():
            if name == "killed" and agent not in _FIRST_AGENTS:
                continue
            copy_session(agent, name, root / folder, nested=True, stem=_SESSION_ID.format(n=n), age_s=_WHEN)
    return folders


# The sessions' ids, as uuids like the clients' (0: simple, 1: tool-error, 2: multi-turn, 3: killed mid-call).
_SESSION_ID = "01a22bb1-6ee3-7b50-88bd-b3d9bf76300{n}"
_RECORDING = {"simple": 0, "tool-error": 1, "multi-turn": 2, "killed": 3}


def _agent_session(agent: str, name: str) -> Callable[[Path], WrenApp]:
    def build(root: Path) -> WrenApp:
        folder = _agents(root, (agent,))[agent]
        stem = _SESSION_ID.format(n=_RECORDING[name])
        path = next(p for p in (root / folder).rglob("*.jsonl") if stem in str(p)).relative_to(root)
        clock = AGENT_CLOCK if agent in _FIRST_AGENTS else LATER_CLOCK
        return WrenApp(folder=folder, session=path, clock=lambda: clock)

    return build


def agents_browser(root: Path) -> WrenApp:
    folders = _agents(root)
    browse = [ForeignFolder(FORMATS[agent], folder) for agent, folder in folders.items()]
    return WrenApp(folder=folders["claude"], agents=browse, clock=lambda: AGENT_CLOCK)


# OpenCode's database and aider's chat history: recorded on 2026-12-01, shown a little later that day.
EXPORTED_CLOCK = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)


def opencode_session(root: Path) -> WrenApp:
    folder = root / "agents" / "opencode"
    folder.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "agents" / "opencode" / "tool-error.opencode.db", folder / "opencode.db")
    return WrenApp(folder=folder, session=Path("agents/opencode/opencode.db"), clock=lambda: EXPORTED_CLOCK)


def aider_session(root: Path) -> WrenApp:
    folder = root / "agents" / "aider" / "project"
    folder.mkdir(parents=True)
    path = folder / ".aider.chat.history.md"
    shutil.copyfile(FIXTURES / "agents" / "aider" / "multi-turn.chat.history.md", path)
    os.utime(path, (0, 0))  # written long ago: not live
    return WrenApp(folder=folder, session=path.relative_to(root), clock=lambda: EXPORTED_CLOCK)


SCENES = [
    Scene("session", (100, 32), (), session),
    Scene("session-80x24", (80, 24), (), session),
    # The diff pane is read by a `wren diff-files` child: pictured once it has answered, not while it reads.
    Scene("fork-picker", (100, 32), ("p",), session, _shows("no snapshot holds the")),
    Scene("call-lines", (100, 32), ("home", "t", "b"), call_lines, _shows("if not values")),
    Scene("outcome-unknown", (100, 32), ("home", "t", "t", "t"), outcome_unknown),
    Scene("browser", (120, 16), (), browser),
    Scene("browser-80x24", (80, 24), (), browser),
    Scene("raw-event", (100, 32), ("home", "e", "e", "r"), session),
    Scene("search", (100, 32), ("/", *"zerodivision", "enter"), session),
    Scene("fork-tree", (120, 16), (), fork_tree, _shows("s-20250301-100000-frk3")),
    Scene("lineage", (100, 32), ("g",), grandchild, _shows("↑2 s-20250301-093000-demo")),
    Scene("side-by-side", (120, 32), ("d", "n"), fork, _shows("differs here")),
    Scene("waterfall", (100, 32), ("w",), session),
    Scene("replay", (100, 32), ("R", *("right",) * 9), session, _shows("event 9 of 24")),
    Scene("export", (100, 32), ("x",), session),
    Scene("claude-session", (100, 32), (), _agent_session("claude", "multi-turn")),
    Scene("codex-session", (100, 32), (), _agent_session("codex", "tool-error")),
    Scene("pi-session", (100, 32), (), _agent_session("pi", "killed")),
    Scene("agents-browser", (140, 18), (), agents_browser),
    Scene("opencode-session", (100, 32), (), opencode_session, _shows("missing.txt does not exist here")),
    Scene("aider-session", (100, 32), (), aider_session, _shows("hello.py has 3 lines.")),
    Scene("gemini-session", (100, 32), (), _agent_session("gemini", "multi-turn")),
    Scene("qwen-session", (100, 32), (), _agent_session("qwen", "tool-error")),
    Scene("copilot-session", (100, 32), (), _agent_session("copilot", "tool-error")),
    Scene("search-all", (120, 16), ("/", *"zerodivision", "enter"), browser, _results_done),
    Scene("compaction", (100, 32), (), compacted),
]
