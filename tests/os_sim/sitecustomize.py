"""A simulated macOS on Linux: with WREN_SIMULATE_OS=macos, Python starts without what CPython on macOS lacks.

Put this folder on PYTHONPATH (tests/conftest.py does, for the pytest process and every process it
starts) and set WREN_SIMULATE_OS=macos. Before anything else is imported, the names CPython on macOS
does not have are removed from `os`, `fcntl`, `signal` and `select`; libc's inotify calls cannot
be looked up through ctypes; `fcntl.F_FULLFSYNC` is given macOS's value (Linux refuses it, so
Wren's fallback to fsync runs, as on a filesystem without it); and Wren's reads of /proc are
switched off through `wren_tui.portable.hide_proc`, the one hook the product has for this.

This is a simulation on a Linux kernel, not a Mac: the calls that remain behave as Linux's do.
"""

from __future__ import annotations

import os

# Names CPython on macOS (arm64 and x86_64, 3.11-3.13) does not define.
OS_NAMES = (
    "fdatasync",
    "copy_file_range",
    "memfd_create",
    "posix_fadvise",
    "posix_fallocate",
    "pipe2",
    "sched_getaffinity",
    "sched_setaffinity",
    "splice",
    "eventfd",
    "eventfd_read",
    "eventfd_write",
    "pidfd_open",
    "getrandom",
    "getxattr",
    "setxattr",
    "listxattr",
    "removexattr",
    "O_NOATIME",
    "O_PATH",
    "O_DIRECT",
    "O_TMPFILE",
    "O_LARGEFILE",
    "O_RSYNC",
)
OS_PREFIXES = ("MFD_", "POSIX_FADV_", "EFD_", "SPLICE_", "GRND_", "XATTR_", "RWF_")
FCNTL_PREFIXES = ("F_OFD_", "F_SEAL_", "DN_")
FCNTL_NAMES = (
    "F_SETPIPE_SZ",
    "F_GETPIPE_SZ",
    "F_ADD_SEALS",
    "F_GET_SEALS",
    "F_NOTIFY",
    "F_SETLEASE",
    "F_GETLEASE",
    "F_SETSIG",
    "F_GETSIG",
    "F_SETOWN_EX",
    "F_GETOWN_EX",
)
SIGNAL_NAMES = ("SIGRTMIN", "SIGRTMAX", "SIGPOLL", "SIGPWR", "SIGSTKFLT", "SIGCLD", "sigtimedwait", "sigwaitinfo")
F_FULLFSYNC = 51  # macOS's <sys/fcntl.h>; an unknown command to Linux (EINVAL)


def _drop(module: object, names: tuple[str, ...], prefixes: tuple[str, ...] = ()) -> None:
    for name in [*names, *(n for n in dir(module) if n.startswith(prefixes))] if prefixes else names:
        if hasattr(module, name):
            delattr(module, name)


def simulate_macos() -> None:
    """Remove what CPython on macOS lacks from this interpreter; idempotent."""
    if getattr(os, "_wren_simulated_os", None) == "macos":
        return
    import ctypes
    import fcntl
    import select
    import signal

    _drop(os, OS_NAMES, OS_PREFIXES)
    _drop(fcntl, FCNTL_NAMES, FCNTL_PREFIXES)
    fcntl.F_FULLFSYNC = F_FULLFSYNC  # type: ignore[attr-defined]
    _drop(signal, SIGNAL_NAMES)
    _drop(select, ("epoll",), ("EPOLL",))

    lookup = ctypes.CDLL.__getattr__

    def no_inotify(self: ctypes.CDLL, name: str) -> object:
        if name.startswith("inotify_"):
            raise AttributeError(f"simulated macOS: libc has no {name}")
        return lookup(self, name)

    ctypes.CDLL.__getattr__ = no_inotify  # type: ignore[method-assign]
    os._wren_simulated_os = "macos"  # type: ignore[attr-defined]
    try:
        from wren_tui import portable
    except ImportError:
        return  # a Python without Wren (a tool's own interpreter): nothing of Wren's reads /proc there
    portable.hide_proc()


if os.environ.get("WREN_SIMULATE_OS") == "macos":
    simulate_macos()
