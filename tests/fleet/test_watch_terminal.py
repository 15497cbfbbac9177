"""`wren watch nats://SERVER` in a real terminal (tmux): a session written on another "host" shows up, live.

Two journals folders stand for two machines, each with its own `wren mirror` and host token; the
viewer, a third process, reads only the server.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fleet.conftest import NatsServer
from tests.fleet.test_mirror import mirror_once, write_journal
from tests.fleet.test_watch import mirroring
from tests.tmux import python_argv, terminal
from tests.waiting import until
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_a_session_appended_on_another_host_shows_up_live_in_the_fleets_viewer(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    # An older session (ids sort by their start, to the second): the one made on ci comes first.
    laptop = write_journal(tmp_path / "laptop").rename(tmp_path / "laptop" / "s-20250101-000000-lapt.jsonl")
    assert mirror_once(nats_server, laptop.parent, "laptop")[0] == 0
    ci = tmp_path / "ci" / f"{new_session_id()}.jsonl"
    here = tmp_path / "here"
    with mirroring(nats_server, ci.parent, "ci"), terminal() as term:
        term.start(python_argv("watch", "--dir", str(here), nats_server.url), tmp_path, (160, 30))
        screen = term.wait_for(laptop.stem, timeout=30)
        assert "host" in screen and "laptop" in screen and ci.stem not in screen
        with JournalWriter.create(ci) as writer:
            writer.append(Message(message=ChatMessage(role="user", content="hello from ci")))
            term.wait_for(ci.stem, timeout=30)
            # The row and the ci mirror's first beat reach the viewer in either order; until the beat, a
            # host never heard from is shown silent. Live once both are in.
            until(lambda: _row(term.capture(), ci.stem).endswith(" live"), "the ci session's row to say live")
            screen = term.capture()
            row = _row(screen, ci.stem)
            assert row.split()[:2] == ["ci", ci.stem] and row.split()[-1] == "live"
            # The newest session is the first row, where the cursor is.
            assert screen.splitlines().index(row) < next(
                n for n, line in enumerate(screen.splitlines()) if laptop.stem in line
            )
            term.keys("Enter")
            term.wait_for("hello from ci", timeout=30)
            writer.append(Message(message=ChatMessage(role="assistant", content="a reply written on ci")))
            screen = term.wait_for("a reply written on ci", timeout=30)
            assert f"ci/{ci.stem} · 2 events" in screen
        term.keys("q")
        term.wait_for("WREN-EXITED-0", timeout=30)
    assert not here.exists()  # the viewer wrote nothing (its one write is a fork)


def _row(screen: str, stem: str) -> str:
    return next((line.rstrip() for line in screen.splitlines() if stem in line), "")
