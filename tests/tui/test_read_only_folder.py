"""The viewer on a read-only journals folder (0500, files 0400) makes not a single write attempt.

Root ignores permission bits, so "it did not fail" proves nothing here: a child process records
every write-like system call the viewer makes through Python's audit hooks, and the test asserts
that none of them touches the folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.tui.journals import SESSION, story, write_journal

_CHILD = textwrap.dedent(
    """
    import asyncio, json, os, sys, time
    from datetime import UTC, datetime
    from pathlib import Path

    folder = Path(sys.argv[1]).resolve()
    writes = []
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    MUTATING = {"os.rename", "os.replace", "os.remove", "os.rmdir", "os.truncate", "os.mkdir",
                "os.chmod", "os.chown", "os.utime", "os.link", "os.symlink", "shutil.copyfile",
                "shutil.move", "shutil.rmtree"}

    def inside(arg):
        try:
            return Path(os.fsdecode(arg)).resolve().is_relative_to(folder)
        except (TypeError, ValueError):
            return False

    def hook(event, args):
        if event == "open" and args and isinstance(args[-1], int) and args[-1] & WRITE_FLAGS:
            if inside(args[0]):
                writes.append([event, os.fsdecode(args[0])])
        elif event in MUTATING and any(inside(a) for a in args if isinstance(a, (str, bytes, os.PathLike))):
            writes.append([event, [str(a) for a in args]])

    sys.addaudithook(hook)

    from wren_tui.tui.app import WrenApp

    def shown(app):
        return "\\n".join(strip.text for strip in app.screen._compositor.render_strips())

    async def until(pilot, condition, what):
        # A condition with a deadline, never a fixed pause: each step proves the viewer did something.
        deadline = time.monotonic() + 30
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}: {type(pilot.app.screen).__name__}: {shown(pilot.app)}")
            await pilot.pause(0.05)

    def on(app, name):
        return lambda: type(app.screen).__name__ == name

    async def main():
        session = folder / sys.argv[2]
        seen = []
        for target in (None, session):
            app = WrenApp(folder=folder, session=target, clock=lambda: datetime(2025, 3, 1, 10, 0, tzinfo=UTC))
            async with app.run_test(size=(120, 40)) as pilot:
                if target is None:
                    await until(pilot, lambda: sys.argv[2][:-6] in shown(app), "the session listed")
                    seen.append("listed")
                    await pilot.press("enter")
                await until(pilot, lambda: on(app, "SessionScreen")() and "ZeroDivisionError" in shown(app), "it open")
                seen.append("opened")
                await pilot.press("e", "t", "r")
                await until(pilot, on(app, "RawLines"), "the raw lines")
                seen.append("raw")
                await pilot.press("escape")
                await until(pilot, on(app, "SessionScreen"), "back from the raw lines")
                await pilot.press("/", "m", "e", "a", "n", "enter")
                await until(pilot, lambda: "match 1 of" in shown(app), "a search's first match")
                seen.append("searched")
                await pilot.press("escape", "p")
                await until(pilot, on(app, "ForkPicker"), "the fork points")
                seen.append("fork points")
                await pilot.press("escape")
                await until(pilot, on(app, "SessionScreen"), "back from the fork points")
        print(json.dumps({"writes": writes, "seen": seen}))

    asyncio.run(main())
    """
)


def test_viewer_makes_no_write_attempt_in_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    path = write_journal(folder / f"{SESSION}.jsonl", story())
    before = path.read_bytes()
    path.chmod(0o400)
    folder.chmod(0o500)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(folder), path.name],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env={**os.environ, "TEXTUAL": ""},
        )
    finally:
        folder.chmod(0o700)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["writes"] == []
    # It did what a person does there, step by step (so "no write" is not "nothing happened").
    steps = ["opened", "raw", "searched", "fork points"]
    assert report["seen"] == ["listed", *steps, *steps]
    assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == [path.name]


def test_the_audit_hook_sees_a_write_into_the_folder(tmp_path: Path) -> None:
    """The recorder itself must be able to fail: a write into the folder is caught."""
    folder = tmp_path / "journals"
    folder.mkdir()
    probe = _CHILD.replace(
        "asyncio.run(main())", "open(folder / 'x', 'w').close(); print(json.dumps({'writes': writes}))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(folder), "none"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [w[0] for w in report["writes"]] == ["open"]
