"""`wren --version`: the version, and where it runs: which C modules are in use, and the journal's durable sync.

The C modules are optional (a wheel carries them; an install without a compiler runs Python's fallback,
slower, with the same answers), so the version alone does not say which path runs: each module is imported
here, as the code that uses it imports it, and a module that does not import is named with the reason.
"""

from __future__ import annotations

import os
import sys

from .. import __version__

# Each C module, what it does, and the Python that does the same without it.
C_MODULES: tuple[tuple[str, str, str], ...] = (
    ("wren_tui.journal._lines", "the journal's line check and builder", "journal/reader.py"),
    ("wren_tui.search._scan", "search's raw pass", "search/rawpass.py"),
    ("wren_tui.foreign._aider", "aider's line count", "foreign/aider.py"),
    ("wren_tui.snapshots._linediff", "blame's line diff", "snapshots/linediff.py"),
)


def _c_module(name: str) -> str | None:
    """None when the module is in use, else why not.

    It is found by the import system's finders (sys.meta_path, as `import` asks them) and loaded, but its
    package is not imported: `wren_tui.journal` and `wren_tui.foreign` would load the journal and every
    agent's reader, and the report needs neither. It is not kept in sys.modules (the process exits).
    """
    if name in sys.modules:
        return None
    import importlib.util  # here: only --version needs it

    package, _, _leaf = name.rpartition(".")
    root = sys.modules["wren_tui"].__path__[0]
    folder = os.path.join(root, *package.split(".")[1:])
    try:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, [folder]) if find is not None else None
            if spec is not None:
                break
        else:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if spec.loader is None:
            raise ImportError(f"No loader for {name!r}", name=name)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except ImportError as exc:
        return str(exc) or type(exc).__name__
    return None


def report() -> str:
    """What `wren --version` prints."""
    import platform  # here: only --version needs it

    from .. import portable

    lines = [
        f"wren {__version__}",
        f"Python: {platform.python_implementation()} {platform.python_version()} on "
        f"{platform.system()} {platform.machine()}",
    ]
    missing = {name: _c_module(name) for name, _what, _fallback in C_MODULES}
    in_use = sum(why is None for why in missing.values())
    lines.append(f"C modules: {in_use} of {len(C_MODULES)} in use")
    for name, what, fallback in C_MODULES:
        short = name.removeprefix("wren_tui.")
        why = missing[name]
        if why is None:
            lines.append(f"  {short}: C ({what})")
        else:
            lines.append(f"  {short}: Python's fallback, {fallback} ({why})")
    lines.append(f"Journal's durable sync: {portable.DURABLE_SYNC}")
    lines.append(f"A writer seen live by: {portable.LIVENESS}")
    return "\n".join(lines)
