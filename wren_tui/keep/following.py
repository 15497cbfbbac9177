"""`wren keep --follow`: the agents' folders watched (watchfiles), each change kept as `wren keep` keeps it.

The store's lock is held for as long as it runs. Once the watcher runs, one whole keep catches what was written
before it started; after that only the folders a change was seen in are looked at again (a session's folder, so a
file kept with it, Kimi's context or Cline's status document, is seen too), each change kept within about 50 ms
of the agent's write. A database (OpenCode, Kilo) is copied whole at each version, so while it keeps changing it
is copied at most once every `DATABASE_EVERY_S` (the first change at once). A kill at any moment leaves the store
as a kill of `wren keep` does: its manifest's last whole line says what counts. An agent's folder made after it
started is watched from its next wake (`journal.watching.WAKE_MS`); every `LOOK_AGAIN_S` a whole keep also
catches what no event said.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .keeping import AgentKeeper, Asked, Planned, StoreLock, Tally, keep_locked, kind_of, plan, walk

DEBOUNCE_MS = 20
STEP_MS = 10
LOOK_AGAIN_S = 30.0
DATABASE_EVERY_S = 10.0


class _Agent:
    def __init__(self, planned: Planned, store_root: Path) -> None:
        from ..foreign import FORMATS

        self.planned = planned
        self.fmt = FORMATS[planned.name]
        self.keeper = AgentKeeper(store_root, planned.name, self.fmt, planned.root)
        self.database_at: dict[str, float] = {}  # when each database was last copied
        self.waiting: set[Path] = set()  # folders with a database change held back until its time


def _outermost(folders: Iterable[Path]) -> list[Path]:
    chosen: list[Path] = []
    for folder in sorted(set(folders), key=lambda p: len(p.parts)):
        if not any(folder == c or c in folder.parents for c in chosen):
            chosen.append(folder)
    return chosen


def follow(asked: Asked, *, say: Callable[[str], None] | None = None, skip: Iterable[Path] = ()) -> None:
    """Keep the agents' files as they change, until interrupted (KeyboardInterrupt) or killed."""
    root = asked.root
    skip = [*skip, root]
    lock = StoreLock(root)
    try:
        agents, skipped = plan(asked)
        for sentence in skipped:
            if say is not None:
                say(sentence)
        while True:
            watched = [a for a in agents if os.path.isdir(a.start or a.root)]
            keeping = {a.name: _Agent(a, root) for a in watched}
            try:
                _watch(agents, watched, keeping, asked, say, skip)
            finally:
                for agent in keeping.values():
                    agent.keeper.close()
    finally:
        lock.close()


def _watch(
    agents: list[Planned],
    watched: list[Planned],
    keeping: dict[str, _Agent],
    asked: Asked,
    say: Callable[[str], None] | None,
    skip: list[Path],
) -> None:
    """Watch the folders that exist until one more of the agents' folders does (then return, to watch it too)."""
    from ..journal.watching import folder_changes_blocking  # watchfiles: only for --follow

    root = asked.root
    absent = [a for a in agents if a not in watched]
    paths = [a.start or a.root for a in watched] or [root]
    started = False
    looked = 0.0
    for changes in folder_changes_blocking(*paths, debounce_ms=DEBOUNCE_MS, step_ms=STEP_MS, recursive=True):
        now = time.monotonic()
        if not started or now - looked > LOOK_AGAIN_S:
            # Watching now: one whole keep catches what was written before (and, now and then, what no event said).
            for agent in keeping.values():
                agent.keeper.close()
            keep_locked(asked, say=say if not started else None, skip=skip)
            for name in list(keeping):
                keeping[name] = _Agent(keeping[name].planned, root)
            if not started and say is not None:
                say(f"following {len(watched)} agent folder{'' if len(watched) == 1 else 's'} (Ctrl+C stops)")
            started, looked = True, now
            continue
        if any(os.path.isdir(a.start or a.root) for a in absent):
            return  # an agent's folder made since: watched too, from a whole keep
        by_agent: dict[str, set[Path]] = {}
        for path in changes:
            for planned in watched:
                base = planned.start or planned.root
                if path == base or base in path.parents:
                    by_agent.setdefault(planned.name, set()).add(path if path.is_dir() else path.parent)
                    break
        for name, agent in keeping.items():
            folders = by_agent.get(name, set()) | agent.waiting
            if folders:
                _keep_folders(agent, folders, root, say, skip, now)


def _within(prefix: str, held: set[str]) -> Callable[[str], bool]:
    return lambda rel: rel.startswith(prefix) and rel not in held


def _keep_folders(
    agent: _Agent, folders: set[Path], root: Path, say: Callable[[str], None] | None, skip: list[Path], now: float
) -> None:
    planned = agent.planned
    base = planned.start or planned.root
    agent.waiting = set()
    for folder in _outermost(f for f in folders if f == base or base in f.parents):
        while folder != base and not folder.exists():
            folder = folder.parent  # a folder removed: what was kept below it is looked for from its parent
        walked = walk(agent.fmt, planned.root, skip, folder)
        while not walked.files and folder != base:
            # No session file here: a folder of files kept with a session above it (Vibe's journal/), or one whose
            # sessions are all gone: looked at from its parent, so none is taken for deleted while it is there.
            folder = folder.parent
            walked = walk(agent.fmt, planned.root, skip, folder)
        held = []
        for source in walked.files:
            if kind_of(source.rel, agent.fmt) == "database":
                last = agent.database_at.get(source.rel)
                if last is not None and now - last < DATABASE_EVERY_S:
                    held.append(source)
                    agent.waiting.add(folder)
                    continue
                agent.database_at[source.rel] = now
        walked.files = [s for s in walked.files if s not in held]
        held_rels = {s.rel for s in held}
        prefix = "" if folder == planned.root else folder.relative_to(planned.root).as_posix() + "/"
        tally = Tally(planned.name)
        agent.keeper.keep(
            walked,
            tally,
            started_ns=time.time_ns(),
            many=False,
            only=_within(prefix, held_rels),
        )
        changed = {k: n for k, n in tally.changes.items() if k != "unchanged" and n}
        if say is not None and (changed or tally.problems):
            say(tally.line(planned.label))
            for problem in tally.problems:
                say(problem)
