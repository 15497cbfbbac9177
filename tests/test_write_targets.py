"""What Wren writes at a path a person named replaces nothing but a regular file, and is as private as its source.

An export (`wren export -o`, the viewer's `x`), a fork and the agent's write_file each write under a
temporary name and rename it into place; a rename replaces whatever has the name, so a FIFO, a device
node, a socket or a folder at the name is refused with one sentence (journal/targets.py), and left
as it was.
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.tui.journals import SESSION, finished_story, write_journal
from wren_tui.export import export_session
from wren_tui.journal import forking
from wren_tui.journal.forking import fork, fork_points, fresh_journal, put_in_place
from wren_tui.journal.reader import read_events
from wren_tui.journal.targets import NotReplaceable, replaceable
from wren_tui.journal.writer import FileOps


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is


def _socket(path: Path) -> None:
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.close()  # the socket file stays


def _folder(path: Path) -> None:
    path.mkdir()


MAKERS = {"a FIFO (named pipe)": _fifo, "a device": _device, "a socket": _socket, "a folder": _folder}


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "journals"
    folder.mkdir()
    yield write_journal(folder / f"{SESSION}.jsonl", finished_story())


def _kind(path: Path) -> int:
    return stat.S_IFMT(os.lstat(path).st_mode)


@pytest.mark.parametrize("kind", [kind for kind in MAKERS if kind != "a folder"])  # -o FOLDER writes inside it
def test_export_refuses_to_replace_a_fifo_a_device_or_a_socket(tmp_path: Path, journal: Path, kind: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "session.html"
    MAKERS[kind](target)
    before = _kind(target)
    proc = run_wren(["export", str(journal), "--format", "html", "-o", str(target)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"wren: {target}: is {kind}, not a regular file; an export replaces only a regular file: name another file, "
        "or a "
        "folder to write it in"
    ]
    assert "Traceback" not in proc.stderr and "wrote" not in proc.stdout
    assert _kind(target) == before
    assert sorted(p.name for p in out.iterdir()) == ["session.html"]  # no temporary file left


def test_export_into_a_folder_refuses_a_folder_named_like_the_export(tmp_path: Path, journal: Path) -> None:
    (tmp_path / f"{SESSION}.md").mkdir()
    proc = run_wren(["export", str(journal), "-o", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 1 and f"{SESSION}.md: is a folder, not a regular file" in proc.stderr
    assert (tmp_path / f"{SESSION}.md").is_dir()


def test_export_still_replaces_a_regular_file_and_refuses_a_link(tmp_path: Path, journal: Path) -> None:
    target = tmp_path / "old.md"
    target.write_text("an older export")
    proc = run_wren(["export", str(journal), "-o", str(target)], cwd=tmp_path)
    assert proc.returncode == 0 and target.read_text().startswith("# ")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    proc = run_wren(["export", str(journal), "-o", str(link)], cwd=tmp_path)
    assert proc.returncode == 1 and f"{link}: is a symbolic link, not a regular file" in proc.stderr
    assert link.is_symlink()


def test_a_fifo_put_at_the_name_while_the_journal_is_read_is_refused_not_replaced(
    tmp_path: Path, journal: Path
) -> None:
    target = tmp_path / "late.md"
    made: list[Path] = []

    def swap_in_a_fifo() -> bool:
        if not made:
            os.mkfifo(target)
            made.append(target)
        return False

    with pytest.raises(NotReplaceable, match="is a FIFO"):
        export_session(journal, "md", target, cancelled=swap_in_a_fifo)
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals", "late.md"]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644])
def test_an_export_takes_the_mode_of_its_journal(tmp_path: Path, journal: Path, mode: int) -> None:
    journal.chmod(mode)
    for fmt in ("md", "html", "json"):
        target = tmp_path / f"x.{fmt}"
        proc = run_wren(["export", str(journal), "--format", fmt, "-o", str(target)], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert stat.S_IMODE(target.stat().st_mode) == mode, fmt
    # Replacing a wider file gives the journal's mode, not the old file's.
    wide = tmp_path / "wide.md"
    wide.write_text("old")
    wide.chmod(0o666)
    run_wren(["export", str(journal), "-o", str(wide)], cwd=tmp_path)
    assert stat.S_IMODE(wide.stat().st_mode) == mode


def test_a_fork_never_takes_a_name_anything_holds_and_never_replaces_what_came_there(
    tmp_path: Path, journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = "s-20990101-000000-aaaa"
    (journal.parent / f"{taken}.jsonl").symlink_to(tmp_path / "nowhere")  # a dangling link: exists() says no
    ids = iter([taken, "s-20990101-000000-bbbb"])
    monkeypatch.setattr(forking, "new_session_id", lambda: next(ids))
    new_id, final, tmp = fresh_journal(journal.parent)
    assert new_id == "s-20990101-000000-bbbb" and final.name == f"{new_id}.jsonl"
    # Something put at the chosen name while the fork was written: left as it is, the fork removed.
    tmp.write_bytes(journal.read_bytes())
    os.mkfifo(final)
    with pytest.raises(NotReplaceable, match=r"is a FIFO .* a fork never replaces anything"):
        put_in_place(tmp, final, FileOps())
    assert stat.S_ISFIFO(os.lstat(final).st_mode) and not tmp.exists()
    # And a whole fork still goes where nothing is.
    monkeypatch.setattr(forking, "new_session_id", lambda: "s-20990101-000000-cccc")
    point = fork_points(read_events(journal).events)[-1].seq
    forked = fork(journal, point)
    assert forked.path.name == "s-20990101-000000-cccc.jsonl" and read_events(forked.path).ok


def test_the_one_check_answers_for_each_kind_of_file(tmp_path: Path) -> None:
    assert replaceable(tmp_path / "missing", advice="x") is None
    regular = tmp_path / "regular"
    regular.write_text("r")
    there = replaceable(regular, advice="x")
    assert there is not None and stat.S_ISREG(there.st_mode)
    for kind, make in MAKERS.items():
        if kind == "a device" and os.geteuid() != 0:
            continue
        path = tmp_path / kind.split()[1]
        make(path)
        with pytest.raises(NotReplaceable) as info:
            replaceable(path, advice="do this instead")
        assert str(info.value) == f"{path}: is {kind}, not a regular file; do this instead"
    # Relative to an open folder, as the agent's write_file asks.
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.mkfifo("pipe", dir_fd=folder)
        with pytest.raises(NotReplaceable, match=r"^pipe: is a FIFO"):
            replaceable("pipe", dir_fd=folder, advice="x")
    finally:
        os.close(folder)
