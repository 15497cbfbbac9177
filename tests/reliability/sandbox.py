"""The sandbox table: every path trick against every file tool, run through `Toolbox`.

`python -m tests.reliability.sandbox` prints the measured table (markdown) for the README;
test_sandbox.py asserts every cell. Each cell runs in a fresh layout:

    tmp/.ws.wren-tmp   a file beside the workspace ("KEEP ME"), where a write to "." used to land
    tmp/outside/       files outside the workspace, holding SECRET-OUTSIDE
    tmp/ws/            the workspace; each trick adds its links, FIFO, big file or journals folder

and checks that nothing outside the workspace changed (every file's bytes, mode and name, and no new
one) and that no outside secret came back in the result (which is what the journal and the model get).
run_command is a shell with the user's rights and is not part of this table: paths do not confine it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from wren_tui.agent.tools import Toolbox, ToolResult

TOOLS = ("read_file", "list_dir", "grep", "write_file", "edit_file")
SECRET = "SECRET-OUTSIDE"
JOURNAL_SECRET = "SECRET-JOURNAL"
BIG = 2 << 30  # the sparse file's size: 2 GiB


@dataclass(frozen=True)
class Trick:
    name: str
    setup: Callable[[Path, Path], None]  # (workspace, outside)
    paths: dict[str, str]  # the path each tool is given (grep's is its `path`)
    expected: dict[str, str]  # per tool: "refused: PHRASE" or "ok: PHRASE" (PHRASE in the result)
    protect_journals: bool = False


@dataclass(frozen=True)
class Cell:
    ok: bool
    text: str
    seconds: float
    outside_changed: list[str]
    leaked: bool
    grew_mb: float


def _nothing(ws: Path, outside: Path) -> None:
    pass


def _symlinked_file(ws: Path, outside: Path) -> None:
    os.symlink(outside / "secret.txt", ws / "link.txt")


def _symlinked_folder(ws: Path, outside: Path) -> None:
    os.symlink(outside, ws / "linkdir")


def _inner_link(ws: Path, outside: Path) -> None:
    (ws / "real.txt").write_text("inside text\n")
    os.symlink("real.txt", ws / "alias.txt")


def _hardlinked_temp(ws: Path, outside: Path) -> None:
    (ws / "victim.txt").write_text("v\n")
    # The temporary name older versions used: a write through it would overwrite the outside file.
    os.link(outside / "target.txt", ws / ".victim.txt.wren-tmp")


def _fifo(ws: Path, outside: Path) -> None:
    os.mkfifo(ws / "pipe")


def _sparse(ws: Path, outside: Path) -> None:
    with open(ws / "big.bin", "wb") as f:
        f.write(b"hello from a big file\n")
        f.truncate(BIG)


def _journals(ws: Path, outside: Path) -> None:
    (ws / "journals").mkdir()
    (ws / "journals" / "s-20260101-000000-abcd.jsonl").write_text(f'{{"note": "{JOURNAL_SECRET}"}}\n')


def _same(text: str) -> dict[str, str]:
    return dict.fromkeys(TOOLS, text)


OUTSIDE = "refused: outside the workspace"
ROOT = "refused: is the workspace folder itself"
FOLDER = "refused: is a folder; use list_dir"
TRICKS = [
    Trick(
        "`..`",
        _nothing,
        {"read_file": "../outside/secret.txt", "list_dir": "../outside", "grep": "..",
         "write_file": "../outside/new.txt", "edit_file": "../outside/secret.txt"},
        _same(OUTSIDE),
    ),
    Trick(
        "absolute path outside",
        _nothing,
        {"read_file": "{outside}/secret.txt", "list_dir": "{outside}", "grep": "{outside}",
         "write_file": "{outside}/new.txt", "edit_file": "{outside}/secret.txt"},
        _same(OUTSIDE),
    ),
    Trick(
        "symlinked file (to outside)",
        _symlinked_file,
        {"read_file": "link.txt", "list_dir": ".", "grep": ".", "write_file": "link.txt", "edit_file": "link.txt"},
        {"read_file": OUTSIDE, "list_dir": "ok: link.txt@", "grep": "ok: no match", "write_file": OUTSIDE,
         "edit_file": OUTSIDE},
    ),
    Trick(
        "symlinked folder (to outside)",
        _symlinked_folder,
        {"read_file": "linkdir/secret.txt", "list_dir": "linkdir", "grep": ".", "write_file": "linkdir/new.txt",
         "edit_file": "linkdir/secret.txt"},
        {"read_file": OUTSIDE, "list_dir": OUTSIDE, "grep": "ok: no match", "write_file": OUTSIDE,
         "edit_file": OUTSIDE},
    ),
    Trick(
        "symlink to a file inside",
        _inner_link,
        {"read_file": "alias.txt", "list_dir": ".", "grep": "alias.txt", "write_file": "alias.txt",
         "edit_file": "alias.txt"},
        {"read_file": "ok: inside text", "list_dir": "ok: alias.txt@", "grep": "ok: real.txt:1: inside text",
         "write_file": "refused: do not write through links", "edit_file": "refused: do not write through links"},
    ),
    Trick(
        "hard link at the old temporary name",
        _hardlinked_temp,
        {"read_file": "victim.txt", "list_dir": ".", "grep": ".", "write_file": "victim.txt",
         "edit_file": "victim.txt"},
        {"read_file": "ok: v", "list_dir": "ok: .victim.txt.wren-tmp", "grep": "ok: victim.txt:1: v",
         "write_file": "ok: overwrote victim.txt", "edit_file": "ok: edited victim.txt"},
    ),
    Trick(
        "`.`",
        _nothing,
        _same("."),
        {"read_file": FOLDER, "list_dir": "ok: (empty folder)", "grep": "ok: no match", "write_file": ROOT,
         "edit_file": ROOT},
    ),
    Trick(
        "empty path",
        _nothing,
        _same(""),
        {"read_file": FOLDER, "list_dir": "ok: (empty folder)", "grep": "ok: no match", "write_file": ROOT,
         "edit_file": ROOT},
    ),
    Trick("NUL in the path", _nothing, _same("a\x00b.txt"), _same("refused: contains a NUL byte")),
    Trick(
        "a FIFO",
        _fifo,
        _same("pipe"),
        {"read_file": "refused: is a FIFO (named pipe), not a regular file", "list_dir": "refused: is not a folder",
         "grep": "refused: is a FIFO (named pipe), not a regular file",
         "write_file": "refused: is a FIFO (named pipe), not a regular file",
         "edit_file": "refused: is a FIFO (named pipe), not a regular file"},
    ),
    Trick(
        "a 2 GB sparse file",
        _sparse,
        _same("big.bin"),
        {"read_file": "refused: is a binary file", "list_dir": "refused: is not a folder",
         "grep": "ok: no match", "write_file": "ok: overwrote big.bin",
         "edit_file": "refused: edit_file edits files up to"},
    ),
    Trick(
        "the journals folder inside the workspace (--dir ws/journals)",
        _journals,
        {"read_file": "journals/s-20260101-000000-abcd.jsonl", "list_dir": "journals", "grep": ".",
         "write_file": "journals/new.jsonl", "edit_file": "journals/s-20260101-000000-abcd.jsonl"},
        {"read_file": "refused: in the journals folder", "list_dir": "refused: in the journals folder",
         "grep": "ok: no match", "write_file": "refused: in the journals folder",
         "edit_file": "refused: in the journals folder"},
        protect_journals=True,
    ),
    Trick(
        "the journals folder outside (the default)",
        _nothing,
        {"read_file": "{outside}/journals/s.jsonl", "list_dir": "{outside}/journals", "grep": "{outside}/journals",
         "write_file": "{outside}/journals/new.jsonl", "edit_file": "{outside}/journals/s.jsonl"},
        _same(OUTSIDE),
    ),
]  # fmt: skip


def args_for(tool: str, path: str) -> str:
    if tool == "grep":
        return json.dumps({"pattern": "SECRET|hello|inside|^v$", "path": path})
    if tool == "write_file":
        return json.dumps({"path": path, "content": "written by the model\n"})
    if tool == "edit_file":
        return json.dumps({"path": path, "old": "v", "new": "w"} if "victim" in path else
                          {"path": path, "old": "SECRET", "new": "CHANGED"})  # fmt: skip
    return json.dumps({"path": path})


def layout(tmp: Path) -> tuple[Path, Path]:
    ws, outside = tmp / "ws", tmp / "outside"
    ws.mkdir()
    (outside / "journals").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{SECRET}: the outside file\n")
    (outside / "target.txt").write_text("the outside target, which must stay as it is\n")
    (outside / "journals" / "s.jsonl").write_text(f'{{"note": "{SECRET}"}}\n')
    (tmp / ".ws.wren-tmp").write_text("KEEP ME\n")
    return ws, outside


def snapshot(tmp: Path, ws: Path) -> dict[str, tuple[int, int, str]]:
    """Every name outside the workspace: its mode, size and the hash of its bytes (links: their target)."""
    seen: dict[str, tuple[int, int, str]] = {}
    for base, folders, files in os.walk(tmp):
        folders[:] = [f for f in folders if Path(base, f) != ws]
        for name in [*folders, *files]:
            path = Path(base, name)
            st = path.lstat()
            if path.is_symlink():
                digest = os.readlink(path)
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                digest = ""
            seen[str(path.relative_to(tmp))] = (st.st_mode, st.st_size, digest)
    return seen


def measure(trick: Trick, tool: str, tmp: Path) -> Cell:
    ws, outside = layout(tmp)
    trick.setup(ws, outside)
    before = snapshot(tmp, ws)
    box = Toolbox(ws, protected=(ws / "journals",) if trick.protect_journals else ())
    path = trick.paths[tool].format(outside=outside)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    result = _call(box, tool, args_for(tool, path), ws)
    seconds = time.monotonic() - start
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
    after = snapshot(tmp, ws)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    leaked = SECRET in result.content or JOURNAL_SECRET in result.content
    return Cell(result.ok, result.content, seconds, changed, leaked, grew)


def _call(box: Toolbox, tool: str, args: str, ws: Path, timeout: float = 10) -> ToolResult:
    """The tool's result, from a thread: a call that blocks (a FIFO opened for reading) cannot hang the table."""
    results: list[ToolResult] = []
    worker = threading.Thread(target=lambda: results.append(asyncio.run(box.run(tool, args))), daemon=True)
    worker.start()
    worker.join(timeout)
    if results:
        return results[0]
    with contextlib.suppress(OSError):  # a reader blocked on the FIFO gets its end of file
        os.close(os.open(ws / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    worker.join(timeout)
    return ToolResult(False, f"BLOCKED: the call did not return within {timeout:g} s")


def verdict(trick: Trick, tool: str, cell: Cell) -> list[str]:
    """What is wrong with a cell, in words; empty when it behaved as expected."""
    kind, phrase = trick.expected[tool].split(": ", 1)
    wrong = []
    if cell.ok != (kind == "ok"):
        wrong.append(f"expected {kind}, got ok={cell.ok}")
    if phrase not in cell.text:
        wrong.append(f"{phrase!r} not in the result")
    if not cell.ok and ("\n" in cell.text or "Traceback" in cell.text):
        wrong.append("the refusal is not one sentence")
    if cell.outside_changed:
        wrong.append(f"changed outside the workspace: {', '.join(cell.outside_changed)}")
    if cell.leaked:
        wrong.append("a secret from outside the workspace is in the result")
    if cell.text.startswith("BLOCKED:"):
        # A hang is caught by _call's deadline, whatever the machine's speed; how long calls take is not judged here.
        wrong.append("the call blocked and never returned")
    if cell.grew_mb > 200:
        wrong.append(f"memory grew by {cell.grew_mb:.0f} MB")
    return wrong


def _short(text: str, tmp: str, width: int = 90) -> str:
    flat = " ".join(text.replace(tmp, "TMP").split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def table() -> str:
    """The measured table, then one line: how many cells went wrong, the slowest call, the most memory grown."""
    rows = [
        "| trick | " + " | ".join(f"`{t}`" for t in TOOLS) + " |",
        "| --- |" + " --- |" * len(TOOLS),
    ]
    wrong_cells, slowest, grew = 0, 0.0, 0.0
    for trick in TRICKS:
        cells = []
        for tool in TOOLS:
            with tempfile.TemporaryDirectory() as tmp:
                cell = measure(trick, tool, Path(tmp))
                wrong = verdict(trick, tool, cell)
                shown = ("ok: " if cell.ok else "refused: ") + _short(cell.text, tmp, 70)
                cells.append(shown + ("" if not wrong else f" **WRONG: {'; '.join(wrong)}**"))
                wrong_cells += bool(wrong)
                slowest, grew = max(slowest, cell.seconds), max(grew, cell.grew_mb)
        rows.append(f"| {trick.name} | " + " | ".join(cells) + " |")
    total = len(TRICKS) * len(TOOLS)
    rows.append(
        f"\n{total} cells, {wrong_cells} not as expected; slowest call {slowest * 1000:.0f} ms; "
        f"peak memory grew by at most {grew:.0f} MB."
    )
    return "\n".join(rows)


if __name__ == "__main__":
    sys.stdout.write(table() + "\n")
