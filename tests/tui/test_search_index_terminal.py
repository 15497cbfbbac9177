"""The browser's `/` answers from the index `wren search` keeps, in a real terminal (tmux), and finds new lines.

The index is built by `wren search` (the viewer only reads it). To see that the browser answers
from it, one journal's line is then damaged in place (a word of it changed, its CRC left as it was),
with the same size and its modification time put back: reading the file, the line's CRC does not
match and reading stops there, no hit; the index trusts a file whose device, inode, size and time are
unchanged, reads the line it holds as a candidate again and checks that it is still the line it read
by its place and the CRC it carries (not the body against the CRC again), so the browser finds the
line, as it now reads. Then a line is appended to the other journal, as a live session appends: the
browser finds it at once (the index answers up to where it read, and the new line is read from there).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.tmux import python_argv, terminal
from tests.tui.journals import encode, finished_story, user, write_journal
from wren_tui.search.index import index_path

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

OLD = "s-20250301-093000-aaaa"
NEW = "s-20250302-100000-bbbb"


def test_the_browsers_search_answers_from_the_index_and_finds_a_line_just_appended(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    write_journal(folder / f"{OLD}.jsonl", finished_story())
    write_journal(folder / f"{NEW}.jsonl", [user("the parrot said hello")])
    built = run_wren(["search", "parrot", "--dir", str(folder)], cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert index_path(folder).is_file()

    changed = folder / f"{NEW}.jsonl"
    before = changed.stat()
    with changed.open("r+b") as out:
        out.write(changed.read_bytes().replace(b"said hello", b"said jello"))
    os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert changed.stat().st_size == before.st_size and b"hello" not in changed.read_bytes()
    scanned = run_wren(["search", "parrot", "--dir", str(folder), "--no-index", "--json"], cwd=tmp_path)
    assert '"hit"' not in scanned.stdout and '"stopped"' in scanned.stdout  # the file read: its CRC is wrong

    with terminal("wren-index") as term:
        term.start(python_argv("watch", "--dir", str(folder)), tmp_path, (140, 30))
        term.wait_for(NEW)
        term.keys("/")
        term.wait_for("search every session listed")
        term.keys("-l", "parrot")
        term.wait_for("parrot")
        term.keys("Enter")
        screen = term.wait_for("the parrot said jello")  # the line the index holds: the file's reading stops there
        assert OLD not in screen  # the hits are listed in place of the sessions
        term.keys("Escape")
        term.wait_gone("the parrot said jello")
        term.wait_for(OLD)  # the sessions again

        # A line appended as a live session appends it: found by the next search.
        with (folder / f"{OLD}.jsonl").open("ab") as out:
            out.write(encode([user("a kestrel flew over the build")], first_seq=len(finished_story()) + 1))
        term.keys("/")
        term.wait_for("▊  parrot")  # the box shows again, holding the last pattern
        term.keys(*["BSpace"] * len("parrot"))
        term.wait_for("search every session listed")
        term.keys("-l", "kestrel")
        term.wait_for("kestrel")
        term.keys("Enter")
        term.wait_for("a kestrel flew over the build", timeout=5)
        term.keys("q")
