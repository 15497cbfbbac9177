"""A session, whatever wrote it: the contract the viewer's session screen and the commands read through
(`sessions/contract.py`: `Session`, `SessionSource`, `LineReader`, `ForeignSource`, `TailFirst`, and what they tell).

The contract's names are importable from here as ever (`from wren_tui.sessions import SessionSource`) and loaded on
first use (`__getattr__`): a module of this package imported alone (`sessions.refusal`, which a warm `wren search`
runs) does not make the contract's protocols and dataclasses (about 2 ms).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .contract import Arrival as Arrival
    from .contract import Change as Change
    from .contract import ForeignSource as ForeignSource
    from .contract import LineReader as LineReader
    from .contract import Made as Made
    from .contract import Points as Points
    from .contract import Session as Session
    from .contract import SessionSource as SessionSource
    from .contract import TailFirst as TailFirst
    from .contract import Whereabouts as Whereabouts

__all__ = [
    "Arrival",
    "Change",
    "ForeignSource",
    "LineReader",
    "Made",
    "Points",
    "Session",
    "SessionSource",
    "TailFirst",
    "Whereabouts",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        return getattr(importlib.import_module(f"{__name__}.contract"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
