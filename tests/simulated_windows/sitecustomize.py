"""A simulated Windows, for the import surface: put this folder on PYTHONPATH and Python loads it at start.

What CPython on Windows does not have is taken away before Wren is imported, so a test on Linux
finds each place where Wren would die there (tests/test_simulated_windows.py):

- the modules `fcntl`, `termios`, `tty`, `pty`, `pwd`, `grp` and `resource` cannot be imported;
- the POSIX-only names of `os` (`pread`, `fork`, `killpg`, `statvfs`, the `O_*` flags Windows lacks,
  ...), of `signal` (every signal but the six Windows has, `setitimer`, `alarm`, ...), of `select`
  (`poll`, `epoll`) and of `mmap` (`PROT_*`, `MAP_*`, the `prot`/`flags` arguments) are removed;
- a `dir_fd` argument raises NotImplementedError, as it does there (`os.supports_dir_fd` is empty);
- `ctypes.CDLL(None)` raises TypeError, as it does there (no "the program itself" library);
- there is no `/proc`: a path under it is not found;
- `os.rename` onto a name that exists fails (FileExistsError), as it does there (`os.replace` replaces);
- `os.open` of a folder fails (PermissionError), as it does there.

It is a simulation, not Windows: `sys.platform` stays `linux` and paths stay POSIX paths. Two
things keep the platform's own way, because on Windows they take their own, working, path: the
standard library modules imported below before anything is removed (on Windows CPython's own
`subprocess` and `asyncio` use Windows calls), platformdirs (Textual's; it picks its module by
`sys.platform`, its Windows one there), and Textual's terminal driver (Textual picks its
Windows driver there; here its Linux driver stands in, so its imports are let through and it keeps
the POSIX signals it uses).
"""

from __future__ import annotations

import asyncio  # noqa: F401  (this, selectors, subprocess and tempfile: see the docstring)
import builtins
import ctypes
import importlib.abc
import importlib.machinery
import io
import mmap
import os
import select
import selectors  # noqa: F401
import shutil
import signal
import subprocess  # noqa: F401
import sys
import tempfile
import types

import platformdirs  # noqa: F401

BLOCKED = frozenset({"fcntl", "termios", "tty", "pty", "pwd", "grp", "resource"})
# Textual's Linux driver stands in for its Windows driver (see above).
DRIVER_ONLY = ("textual.drivers.",)

OS_NAMES = [
    "pread",
    "pwrite",
    "preadv",
    "pwritev",
    "readv",
    "writev",
    "sendfile",
    "splice",
    "copy_file_range",
    "memfd_create",
    "eventfd",
    "fork",
    "forkpty",
    "register_at_fork",
    "killpg",
    "setsid",
    "getsid",
    "getpgid",
    "setpgid",
    "getpgrp",
    "setpgrp",
    "tcgetpgrp",
    "statvfs",
    "fstatvfs",
    "ST_RDONLY",
    "ST_NOSUID",
    "fdatasync",
    "fchmod",
    "fchown",
    "chown",
    "lchown",
    "chroot",
    "fwalk",
    "sched_getaffinity",
    "sched_setaffinity",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getgroups",
    "setuid",
    "setgid",
    "uname",
    "sync",
    "posix_fadvise",
    "posix_fallocate",
    "mkfifo",
    "mknod",
    "major",
    "minor",
    "makedev",
    "pipe2",
    "get_blocking",
    "set_blocking",
    "WNOHANG",
    "WUNTRACED",
    "WCONTINUED",
    "wait",
    "wait3",
    "wait4",
    "waitid",
    "getloadavg",
    "sysconf",
    "sysconf_names",
    "confstr",
    "confstr_names",
    "pathconf",
    "fpathconf",
    "pathconf_names",
    "nice",
    "openpty",
    "ttyname",
    "ctermid",
    "lockf",
    "F_LOCK",
    "F_TLOCK",
    "F_ULOCK",
    "F_TEST",
    "getpriority",
    "setpriority",
    "O_NOFOLLOW",
    "O_CLOEXEC",
    "O_DIRECTORY",
    "O_NONBLOCK",
    "O_ACCMODE",
    "O_NOATIME",
    "O_PATH",
    "O_DIRECT",
    "O_SYNC",
    "O_DSYNC",
    "O_RSYNC",
    "O_NDELAY",
    "O_NOCTTY",
    "O_ASYNC",
    "O_LARGEFILE",
    "O_TMPFILE",
    "O_FSYNC",
    "getxattr",
    "setxattr",
    "listxattr",
    "removexattr",
    "pidfd_open",
    "posix_spawn",
    "posix_spawnp",
]

# What Windows has of `signal` (and SIG_DFL, SIG_IGN, NSIG and the functions kept below).
SIGNALS_KEPT = {"SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM"}
SIGNAL_FUNCTIONS_GONE = [
    "alarm",
    "pause",
    "setitimer",
    "getitimer",
    "ITIMER_REAL",
    "ITIMER_VIRTUAL",
    "ITIMER_PROF",
    "ItimerError",
    "siginterrupt",
    "sigpending",
    "sigwait",
    "sigwaitinfo",
    "sigtimedwait",
    "pthread_kill",
    "pthread_sigmask",
    "SIG_BLOCK",
    "SIG_UNBLOCK",
    "SIG_SETMASK",
    "pidfd_send_signal",
]


class _Unimportable(importlib.abc.MetaPathFinder):
    """`import fcntl` (and the others) fails as on Windows, except inside Textual's terminal driver."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name not in BLOCKED:
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen")):
            frame = frame.f_back  # type: ignore[assignment]
        importer = "" if frame is None else str(frame.f_globals.get("__name__", ""))
        if importer.startswith(DRIVER_ONLY):
            return None
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)


class _DriverStandIn(importlib.abc.MetaPathFinder):
    """Textual's Linux drivers, once loaded, see `signal` as it was: they stand in for its Windows driver."""

    def __init__(self, posix_signal: types.SimpleNamespace) -> None:
        self.posix_signal = posix_signal

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        if name not in ("textual.drivers.linux_driver", "textual.drivers.linux_inline_driver"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)  # type: ignore[arg-type]
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module
        posix_signal = self.posix_signal

        def exec_module(module: types.ModuleType) -> None:
            load(module)
            module.signal = posix_signal  # type: ignore[attr-defined]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _no_dir_fd(function):  # type: ignore[no-untyped-def]
    def call(*args, **kwargs):  # type: ignore[no-untyped-def]
        if any(kwargs.get(k) is not None for k in ("dir_fd", "src_dir_fd", "dst_dir_fd")):
            raise NotImplementedError("dir_fd unavailable on this platform")
        return function(*args, **kwargs)

    call.__name__ = function.__name__
    return call


def _proc(path: object) -> bool:
    if isinstance(path, int):
        return False
    try:
        name = os.fsdecode(os.fspath(path))  # type: ignore[arg-type]
    except TypeError:
        return False
    return name == "/proc" or name.startswith("/proc/")


def _no_proc(function):  # type: ignore[no-untyped-def]
    def call(*args, **kwargs):  # type: ignore[no-untyped-def]
        if args and _proc(args[0]):
            raise FileNotFoundError(2, "No such file or directory", os.fsdecode(os.fspath(args[0])))
        return function(*args, **kwargs)

    call.__name__ = function.__name__
    return call


def _no_folder_open(function):  # type: ignore[no-untyped-def]
    def call(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not isinstance(path, int) and kwargs.get("dir_fd") is None and os.path.isdir(path):
            raise PermissionError(13, "Permission denied", os.fsdecode(os.fspath(path)))
        return function(path, *args, **kwargs)

    call.__name__ = function.__name__
    return call


def _rename_not_over(function):  # type: ignore[no-untyped-def]
    def call(src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
        if os.path.lexists(dst):
            raise FileExistsError(17, "Cannot create a file when that file already exists", os.fsdecode(src))
        return function(src, dst, *args, **kwargs)

    call.__name__ = function.__name__
    return call


def _no_descriptor_listing(function):  # type: ignore[no-untyped-def]
    def call(path=None):  # type: ignore[no-untyped-def]
        if isinstance(path, int):
            raise TypeError(f"{function.__name__}: path should be string, bytes, os.PathLike or None, not int")
        return function() if path is None else function(path)

    call.__name__ = function.__name__
    return call


class _WindowsMmap(mmap.mmap):
    """`mmap.mmap` as Windows has it: no `flags` or `prot` arguments (an `access=` works on both)."""

    def __new__(cls, fileno, length, *args, **kwargs):  # type: ignore[no-untyped-def]
        if args or "flags" in kwargs or "prot" in kwargs:
            raise TypeError("'prot' is an invalid keyword argument for mmap() on this platform")
        return super().__new__(cls, fileno, length, **kwargs)


class _WindowsCDLL(ctypes.CDLL):
    def __init__(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name is None:
            raise TypeError("expected str, bytes or os.PathLike object, not NoneType")
        super().__init__(name, *args, **kwargs)


def simulate() -> None:
    sys.meta_path.insert(0, _DriverStandIn(types.SimpleNamespace(**vars(signal))))
    for name in BLOCKED:
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, _Unimportable())
    for name in OS_NAMES:
        if hasattr(os, name):
            delattr(os, name)
    for name in ("open", "stat", "lstat", "mkdir", "rmdir", "unlink", "remove", "rename", "replace", "access"):
        setattr(os, name, _no_dir_fd(getattr(os, name)))
    for name in ("chmod", "link", "symlink", "readlink", "utime"):
        setattr(os, name, _no_dir_fd(getattr(os, name)))
    os.listdir = _no_descriptor_listing(os.listdir)
    os.scandir = _no_descriptor_listing(os.scandir)
    for name in ("open", "stat", "lstat", "listdir", "scandir", "readlink", "access"):
        setattr(os, name, _no_proc(getattr(os, name)))
    builtins.open = io.open = _no_proc(io.open)
    os.rename = _rename_not_over(os.rename)
    os.open = _no_folder_open(os.open)
    tempfile._O_TMPFILE_WORKS = False  # type: ignore[attr-defined]  # it would use O_TMPFILE, removed above
    os.supports_dir_fd = set()
    os.supports_fd = {os.stat}
    os.supports_follow_symlinks = {os.stat}
    shutil._use_fd_functions = False  # type: ignore[attr-defined]  # computed at import, from the above
    for name in list(vars(signal)):
        if (name.startswith("SIG") and not name.startswith("SIG_") and name not in SIGNALS_KEPT) or (
            name in SIGNAL_FUNCTIONS_GONE
        ):
            delattr(signal, name)
    # The constructors only: asyncio's selector, chosen at import as Linux's, reads the constants.
    for name in ("poll", "epoll", "devpoll", "kqueue", "kevent"):
        if hasattr(select, name):
            delattr(select, name)
    for name in list(vars(mmap)):
        if name.startswith(("PROT_", "MAP_", "MADV_")):
            delattr(mmap, name)
    mmap.mmap = _WindowsMmap  # type: ignore[misc]
    ctypes.CDLL = _WindowsCDLL  # type: ignore[misc]


simulate()
