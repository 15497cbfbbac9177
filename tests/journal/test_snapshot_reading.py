"""How a snapshot reads workspace files and what it leaves in the store.

- An entry is chosen by its lstat, then opened with O_NOFOLLOW | O_NONBLOCK and checked by fstat of that
  descriptor: whatever is swapped in at that exact moment (a link, a FIFO, another file) is stored as
  what it is now or left out, never followed and never waited on. The swap is made deterministic by a
  hook between the caller's lstat and the open (`gitfiles.stored`, wrapped).
- A large file is streamed: memory stays bounded whatever its size (a sparse 2 GiB file under a 768 MB
  address-space limit, in a child process).
- An object already present is freshened (its mtime set to now, as git does), so prune's age rule keeps
  what a new snapshot names, and one present but damaged is written again.
- The stat cache holds ctime: a same-size rewrite with its mtime put back is seen.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from wren_tui.snapshots import gitfiles
from wren_tui.snapshots.store import PENDING, Store, Taken

THREE_HOURS_AGO = time.time() - 3 * 3600


def swap_before_open(monkeypatch: pytest.MonkeyPatch, name: bytes, swap: Callable[[Path], None]) -> list[bytes]:
    """From now on, the first time `name` is about to be opened (after its lstat chose it), `swap` runs on it."""
    real = gitfiles.stored
    swapped: list[bytes] = []

    def hooked(objects: gitfiles.Objects, path: bytes, *rest: object) -> object:
        if path.endswith(b"/" + name) and not swapped:
            swapped.append(path)
            swap(Path(os.fsdecode(path)))
        return real(objects, path, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(gitfiles, "stored", hooked)
    return swapped


def all_objects(store: Store) -> bytes:
    """Every object's content in the store, concatenated (to look for bytes that must not be there)."""
    return store.git("cat-file", "--batch-all-objects", "--batch", "--unordered")


def _workspace(tmp_path: Path) -> tuple[Path, Path, Store]:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"SECRET bytes outside the workspace\n")
    (ws / "keep.txt").write_bytes(b"kept\n")
    (ws / "f.txt").write_bytes(b"the workspace's own file\n")
    return ws, outside, Store(tmp_path / "store")


@pytest.mark.parametrize("when", ["a known file changed", "a new file"])
def test_a_link_swapped_in_between_lstat_and_open_is_stored_as_a_link_and_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    ws, outside, store = _workspace(tmp_path)
    if when == "a new file":
        (ws / "f.txt").unlink()
    store.take(ws, "s-1")
    (ws / "f.txt").write_bytes(b"changed: its stat data differs, so it is read again\n")

    def to_link(path: Path) -> None:
        tmp = path.with_name("swap")
        tmp.symlink_to(outside)
        os.replace(tmp, path)

    swapped = swap_before_open(monkeypatch, b"f.txt", to_link)
    taken = store.take(ws, "s-1")
    assert swapped
    mode, oid = store.files_of(taken.id)[b"f.txt"]
    assert mode == "120000"
    assert store.git("cat-file", "blob", oid) == os.fsencode(outside)
    assert b"SECRET" not in all_objects(store)
    # The next snapshot agrees with itself: the link is what the stat cache now holds.
    monkeypatch.undo()
    assert store.take(ws, "s-1").id == taken.id


@pytest.mark.parametrize("swapped", ["its folder", "a folder above it"])
def test_a_folder_swapped_for_a_link_between_lstat_and_open_is_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped: str
) -> None:
    ws, _, store = _workspace(tmp_path)
    (ws / "top" / "sub").mkdir(parents=True)
    (ws / "top" / "sub" / "f.txt").write_bytes(b"inside\n")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    (elsewhere / "sub" / "f.txt").write_bytes(b"SECRET in a folder outside the workspace\n")
    (elsewhere / "f.txt").write_bytes(b"SECRET in a folder outside the workspace\n")
    store.take(ws, "s-1")
    (ws / "top" / "sub" / "f.txt").write_bytes(b"changed: read again\n")

    def folder_to_link(path: Path) -> None:
        folder = path.parent if swapped == "its folder" else path.parent.parent
        folder.rename(ws / "moved-away")
        folder.symlink_to(elsewhere)

    swap_before_open(monkeypatch, b"top/sub/f.txt", folder_to_link)
    taken = store.take(ws, "s-1")
    assert b"top/sub/f.txt" not in store.files_of(taken.id)
    assert b"SECRET" not in all_objects(store)


def test_a_workspace_given_through_a_link_is_snapshotted_whole(tmp_path: Path) -> None:
    ws, _, store = _workspace(tmp_path)
    (ws / "sub").mkdir()
    (ws / "sub" / "g.txt").write_bytes(b"deeper\n")
    through = tmp_path / "through-a-link"
    through.symlink_to(ws)
    taken = store.take(through, "s-1")
    assert sorted(store.files_of(taken.id)) == [b"f.txt", b"keep.txt", b"sub/g.txt"]


def test_a_file_swapped_in_where_a_link_was_is_stored_as_the_file_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, _, store = _workspace(tmp_path)
    (ws / "f.txt").unlink()
    (ws / "f.txt").symlink_to("keep.txt")
    store.take(ws, "s-1")
    (ws / "f.txt").unlink()
    (ws / "f.txt").symlink_to("elsewhere")  # changed: read again

    def to_file(path: Path) -> None:
        tmp = path.with_name("swap")
        tmp.write_bytes(b"a regular file now\n")
        os.replace(tmp, path)

    swap_before_open(monkeypatch, b"f.txt", to_file)
    taken = store.take(ws, "s-1")
    mode, oid = store.files_of(taken.id)[b"f.txt"]
    assert mode == "100644" and store.git("cat-file", "blob", oid) == b"a regular file now\n"


def test_a_fifo_swapped_in_between_lstat_and_open_never_blocks_and_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, _, store = _workspace(tmp_path)
    store.take(ws, "s-1")
    (ws / "f.txt").write_bytes(b"changed, to be read again\n")

    def to_fifo(path: Path) -> None:
        path.unlink()
        os.mkfifo(path)

    swap_before_open(monkeypatch, b"f.txt", to_fifo)
    result: list[object] = []
    taker = threading.Thread(target=lambda: result.append(store.take(ws, "s-1")), daemon=True)
    taker.start()
    taker.join(60)  # a bound for a failure only: the snapshot returns at once or blocks for good
    if taker.is_alive():
        # Blocked in open(): a writer's open releases it, so the test ends (and fails) rather than hangs.
        os.close(os.open(ws / "f.txt", os.O_WRONLY | os.O_NONBLOCK))
        taker.join()
        pytest.fail("the snapshot blocked opening a FIFO swapped in for a file")
    (taken,) = result
    assert isinstance(taken, Taken)
    files = store.files_of(taken.id)
    assert b"f.txt" not in files and b"keep.txt" in files
    assert "f.txt (a FIFO: not covered)" in store.not_covered(ws)


def test_another_file_swapped_in_is_stored_as_what_it_is_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, _, store = _workspace(tmp_path)
    store.take(ws, "s-1")
    (ws / "f.txt").write_bytes(b"changed\n")

    def to_other(path: Path) -> None:
        tmp = path.with_name("other")
        tmp.write_bytes(b"another file, renamed over it\n")
        os.replace(tmp, path)

    swap_before_open(monkeypatch, b"f.txt", to_other)
    taken = store.take(ws, "s-1")
    assert store.git("cat-file", "-p", f"{taken.id}:f.txt") == b"another file, renamed over it\n"
    monkeypatch.undo()
    again = store.take(ws, "s-1")  # the stat cache holds the file that was stored: nothing to read again
    assert again.id == taken.id and again.changed == 0


def test_a_file_over_a_chunk_is_streamed_into_an_object_git_reads_back_byte_for_byte(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = Store(tmp_path / "store")
    (ws / "big.bin").write_bytes(b"")
    store.take(ws, "s-1")
    data = os.urandom(gitfiles.CHUNK) * 2 + os.urandom(12345)  # three chunks, the last short
    (ws / "big.bin").write_bytes(data)
    taken = store.take(ws, "s-1")
    assert taken.changed == 1
    assert store.git("cat-file", "blob", f"{taken.id}:big.bin") == data
    store.git("fsck", "--strict", "--no-dangling")
    assert not list((store.path / "objects").glob("tmp_obj_*"))


@pytest.mark.parametrize("size", [100, 3 * gitfiles.CHUNK], ids=["read at once", "streamed"])
def test_a_file_that_shrinks_while_it_is_read_is_stored_as_it_is_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "log.txt"
    target.write_bytes(b"")
    store = Store(tmp_path / "store")
    store.take(ws, "s-1")
    target.write_bytes(b"x" * size)
    real = gitfiles._read
    cut: list[int] = []

    def shrinking(fd: int, n: int) -> bytes:
        if not cut:  # the first read of the file: a command truncates and rewrites it at that moment
            cut.append(n)
            target.write_bytes(b"rotated\n")
        return real(fd, n)

    monkeypatch.setattr(gitfiles, "_read", shrinking)
    taken = store.take(ws, "s-1")
    assert cut
    assert store.git("cat-file", "-p", f"{taken.id}:log.txt") == b"rotated\n"
    monkeypatch.undo()
    assert store.take(ws, "s-1").id == taken.id  # and the next snapshot agrees


_BIG = textwrap.dedent(
    """
    import os, resource, sys
    from pathlib import Path
    from wren_tui.snapshots.store import Store

    ws, store = Path(sys.argv[1]), Store(Path(sys.argv[2]))
    big = ws / "big.bin"
    big.write_bytes(b"small at first\\n")
    store.take(ws, "s-1")  # in the snapshot: a file already covered stays covered whatever its size
    os.truncate(big, 2 << 30)  # 2 GiB, sparse: a command ran `truncate -s 2G big.bin`
    resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))
    taken = store.take(ws, "s-1")
    print(taken.id, taken.changed)
    """
)


def test_a_file_grown_to_gigabytes_is_snapshotted_in_bounded_memory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-c", _BIG, str(ws), str(store)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    tree, changed = done.stdout.split()
    assert changed == "1"
    assert Store(store).git("cat-file", "-s", f"{tree}:big.bin") == b"%d\n" % (2 << 30)


def _age(store: Store) -> None:
    for root, _dirs, names in os.walk(store.path / "objects"):
        for name in names:
            os.utime(os.path.join(root, name), (THREE_HOURS_AGO, THREE_HOURS_AGO))


@pytest.mark.parametrize("files", [3, 310], ids=["in process", "through git"])
def test_objects_a_new_snapshot_finds_present_are_freshened_so_prune_keeps_them(tmp_path: Path, files: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(files):
        (ws / f"f{n}.txt").write_text(f"file {n}\n")
    store = Store(tmp_path / "store")
    first = store.take(ws, "s-old")  # a session whose journal is then deleted
    _age(store)
    # A new run snapshots the same files: every object it names already exists, three hours old.
    taken = Store(store.path).take(ws, "s-new")
    assert taken.id == first.id
    # A writer that records nothing for prune (an earlier Wren, or a system with no lock): only the
    # 2-hour grace keeps what it is about to name, so the objects it found must be fresh.
    shutil.rmtree(store.path / PENDING, ignore_errors=True)
    store.prune(lambda: ([], ["s-new"]))  # no journal names the tree yet (the run is writing it)
    store.check_whole(taken.id)


@pytest.mark.parametrize("files", [3, 310], ids=["in process", "through git"])
def test_a_tree_taken_again_unchanged_is_freshened_so_prune_keeps_it(tmp_path: Path, files: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(files):
        (ws / f"f{n}.txt").write_text(f"file {n}\n")
    store = Store(tmp_path / "store")
    first = store.take(ws, "s-1")
    _age(store)
    again = store.take(ws, "s-1")  # nothing changed: the same tree, from this process's memory
    assert again.id == first.id and again.changed == 0
    tree = store.path / "objects" / again.id[:2] / again.id[2:]
    assert tree.stat().st_mtime > THREE_HOURS_AGO + 3600


def test_a_damaged_loose_object_is_written_again_when_a_snapshot_uses_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_bytes(b"the content\n")
    store = Store(tmp_path / "store")
    first = store.take(ws, "s-1")
    blob = store.files_of(first.id)[b"f.txt"][1]
    loose = store.path / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"not a zlib stream at all")
    taken = Store(store.path).take(ws, "s-2")  # a new session reads the file and finds its object damaged
    assert taken.id == first.id
    store.check_whole(taken.id)


def test_a_same_size_rewrite_with_its_mtime_put_back_is_seen_by_its_ctime(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "f.txt"
    target.write_bytes(b"before\n")
    old = (THREE_HOURS_AGO, THREE_HOURS_AGO)  # long before the index is written: not racy
    os.utime(target, old)
    mtime = os.lstat(target).st_mtime_ns
    store = Store(tmp_path / "store")
    first = store.take(ws, "s-1")
    cached = os.lstat(target).st_ctime_ns
    target.write_bytes(b"after!\n")  # the same size, the same inode
    os.utime(target, old)  # mtime put back, as `cp -p`, `rsync -t` or `touch -r` do
    while os.lstat(target).st_ctime_ns == cached:  # the ctime clock's tick: make sure it moved on
        os.utime(target, old)
    st = os.lstat(target)
    assert (st.st_size, st.st_mtime_ns) == (7, mtime)  # only the ctime tells the change
    taken = store.take(ws, "s-1")
    assert taken.changed == 1 and taken.id != first.id
    assert store.git("cat-file", "-p", f"{taken.id}:f.txt") == b"after!\n"
