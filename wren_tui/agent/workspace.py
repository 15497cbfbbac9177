"""The workspace: the demo template, fresh copies of it, and the paths tools take, confined to a workspace root."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from ..journal.targets import kind_of
from ..portable import O_BINARY, O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK
from .errors import AgentError

TEMPLATE = Path(__file__).resolve().parent / "demo_workspace"
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")


class WorkspaceError(AgentError):
    """A workspace cannot be prepared or a path leaves it; the message says what to do."""


def prepare_workspace(dest: Path) -> Path:
    """Write a fresh copy of the demo workspace into `dest` (created if missing, refused if not empty)."""
    dest = Path(os.path.expanduser(dest)).resolve()
    if not TEMPLATE.is_dir():
        raise WorkspaceError(f"{TEMPLATE}: the demo workspace template is missing; reinstall wren-tui")
    if dest.exists():
        if not dest.is_dir():
            raise WorkspaceError(f"{dest}: exists and is not a folder; choose an empty or new folder")
        if any(dest.iterdir()):
            raise WorkspaceError(f"{dest} is not empty; choose an empty or new folder for the demo workspace")
    shutil.copytree(TEMPLATE, dest, ignore=_SKIP, dirs_exist_ok=True)
    return dest


@dataclass(frozen=True)
class Place:
    """A path a tool was given, resolved once: where it really is, and how the tools reach it."""

    given: str
    path: Path  # absolute, every link resolved, inside the workspace
    parts: tuple[str, ...]  # `path` below the workspace root, one name per folder; () for the root
    through_link: bool  # the given path is a symbolic link or goes through one

    @property
    def rel(self) -> str:
        """The path as the model and the journal show it: relative, with forward slashes."""
        return "/".join(self.parts) or "."


class Workspace:
    """A root folder and the folders no tool may touch (the journals): every path a tool takes comes through here.

    A path is resolved once (`place`), then reached from the root one name at a time with
    O_NOFOLLOW (`open_folder`, `open_file`), so a link swapped in between is refused, not followed.
    """

    def __init__(self, root: Path, protected: tuple[Path, ...] = ()) -> None:
        self.root = Path(os.path.realpath(root))
        self.protected = tuple(Path(os.path.realpath(folder)) for folder in protected)

    def place(self, given: str, *, writing: bool = False) -> Place:
        """`given` (relative to the root, or absolute) resolved; refused outside the root or in a protected folder.

        Writing also refuses the root, a folder and any path through a symbolic link, before anything is created.
        """
        if "\x00" in given:
            raise WorkspaceError(f"the path {given!r} contains a NUL byte; give a plain path inside the workspace")
        candidate = os.path.join(self.root, os.path.expanduser(given))
        real = Path(os.path.realpath(candidate))
        if not real.is_relative_to(self.root):
            raise WorkspaceError(
                f"{given}: resolves to {real}, outside the workspace {self.root}; use a path inside the workspace"
            )
        for folder in self.protected:
            if real.is_relative_to(folder):
                raise WorkspaceError(f"{given}: is in the journals folder {folder}, which tools never read or write")
        place = Place(given, real, real.relative_to(self.root).parts, str(real) != os.path.normpath(candidate))
        if writing:
            self._writable(place)
        return place

    def is_protected(self, path: Path) -> bool:
        return any(path.is_relative_to(folder) for folder in self.protected)

    @staticmethod
    def _writable(place: Place) -> None:
        shown = place.given or '""'
        if not place.parts:
            raise WorkspaceError(f"{shown}: is the workspace folder itself; give the path of a file, such as notes.txt")
        if place.through_link:
            raise WorkspaceError(
                f"{shown}: is a symbolic link or goes through one (to {place.rel}); write_file and edit_file do not "
                f"write through links, so give the real path {place.rel} if that is the file you mean"
            )
        if place.given.endswith(("/", os.sep)) or place.path.is_dir():
            raise WorkspaceError(f"{shown}: is a folder; give the path of a file inside it")

    def open_folder(self, parts: tuple[str, ...], *, create: bool = False) -> int:
        """A descriptor of the folder root/parts, reached one name at a time and never through a link.

        With `create`, missing folders are made (only after the path was accepted).
        """
        fd = os.open(self.root, os.O_RDONLY | O_DIRECTORY | O_BINARY | O_CLOEXEC)
        try:
            for n, name in enumerate(parts):
                try:
                    child = os.open(name, _FOLDER, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(name, dir_fd=fd)
                    child = os.open(name, _FOLDER, dir_fd=fd)
                except OSError as exc:
                    raise _not_a_folder(fd, parts[: n + 1], exc) from None
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_file(self, place: Place) -> tuple[int, os.stat_result]:
        """`place` opened for reading, non-blocking and without following a link, with what fstat says of it.

        Anything but a regular file or a folder is refused before it is opened: opening a device can act.
        """
        if not place.parts:
            fd = self.open_folder(())
            return fd, os.fstat(fd)
        folder = self.open_folder(place.parts[:-1])
        try:
            name = place.parts[-1]
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise WorkspaceError(
                    f"{place.rel}: is {kind_of(st.st_mode)}, not a regular file; the file tools read and write "
                    "regular files only"
                )
            fd = os.open(name, os.O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_BINARY | O_CLOEXEC, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise WorkspaceError(f"{place.rel}: became a symbolic link while it was being opened") from None
            raise
        finally:
            os.close(folder)
        return fd, os.fstat(fd)


_FOLDER = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_BINARY | O_CLOEXEC


def _not_a_folder(parent: int, parts: tuple[str, ...], exc: OSError) -> Exception:
    """Why a folder on the way could not be opened: a link (O_DIRECTORY says ENOTDIR for one), a file, or the error."""
    where = "/".join(parts)
    try:
        link = stat.S_ISLNK(os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        link = False
    if link or exc.errno == errno.ELOOP:
        return WorkspaceError(f"{where}: became a symbolic link while it was being opened")
    if exc.errno == errno.ENOTDIR:
        return WorkspaceError(f"{where}: is not a folder; list_dir lists folders, read_file reads files")
    return exc


def python_command() -> str:
    """The name a shell in the workspace uses for this interpreter (its folder is put first on PATH)."""
    here = Path(sys.executable).parent
    return "python" if (here / "python").exists() else Path(sys.executable).name
