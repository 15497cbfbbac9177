"""A Claude Code file whose parentUuid links go round in a loop: the viewer says how many lines are on no branch.

The branch shown is the one to the newest entry; entries whose parents form a loop (A -> C -> B -> A)
are on no branch, so no newest entry leads to them. They are hidden, as another branch's are, and the
status line says how many, rather than leaving them out silently.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tests.foreign.sessions import AN_HOUR, age, lines_of
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.foreign import FORMATS
from wren_tui.foreign.reader import Branch
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 11, 30, 9, 10, tzinfo=UTC)


def _entry(template: bytes, uuid: str, parent: str | None, text: str, second: int) -> bytes:
    """A user entry of the recording, with its own uuid, parent, words and time."""
    entry = json.loads(template)
    entry.update(uuid=uuid, parentUuid=parent, timestamp=f"2026-11-30T09:03:{second:02d}.000Z")
    entry["message"]["content"] = text
    return json.dumps(entry).encode() + b"\n"


def looped_file(folder: Path, *, newest_on_its_own: bool) -> Path:
    """Three entries whose parents go round (a -> c -> b -> a), then a newest entry (its own parent, or a root)."""
    user = lines_of("claude", "simple")[2]
    loop = [
        _entry(user, "aaaa", "cccc", "first in the loop", 1),
        _entry(user, "bbbb", "aaaa", "second in the loop", 2),
        _entry(user, "cccc", "bbbb", "third in the loop", 3),
    ]
    newest = _entry(user, "ssss", "ssss" if newest_on_its_own else None, "the newest entry", 4)
    path = folder / "-ws" / "f8014127-6f7a-48fd-b929-dddf69eafff6.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(loop) + newest)
    age(path, AN_HOUR)
    return path


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def test_lines_whose_parents_form_a_loop_are_said_to_be_on_no_branch(tmp_path: Path) -> None:
    path = looped_file(tmp_path, newest_on_its_own=True)
    app = WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK))
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_for_text(pilot, "the newest entry")
        await wait_for(
            pilot,
            lambda: "3 lines on no branch (their parent links form a loop) not shown" in _status(app),
            "the loop's lines counted",
        )
        assert "in the loop" not in screen_text(app)


def test_a_branch_that_meets_no_loop_counts_no_stray_line_and_a_root_beside_a_loop_counts_the_loop(
    tmp_path: Path,
) -> None:
    node_of = FORMATS["claude"].node_of
    assert node_of is not None
    clean = lines_of("claude", "multi-turn")
    path = tmp_path / "clean.jsonl"
    path.write_bytes(b"".join(clean))
    with path.open("rb") as f:
        assert Branch.scan(f.fileno(), node_of, path.stat().st_size).stray == 0
    looped = looped_file(tmp_path / "loop", newest_on_its_own=False)
    with looped.open("rb") as f:
        branch = Branch.scan(f.fileno(), node_of, looped.stat().st_size)
    assert (branch.stray, branch.others, branch.hidden) == (3, 0, {1, 2, 3})
    assert branch.note() == "3 lines on no branch (their parent links form a loop) not shown"
