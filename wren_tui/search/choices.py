"""What `wren search`'s options offer and default to: the roles --role narrows to, the seconds --regex's
matches get. Apart from the reader and the matcher, so that the command's help names them without loading either.
"""

from __future__ import annotations

from typing import Literal

Role = Literal["user", "assistant", "tool", "thinking", "error"]
ROLES: tuple[Role, ...] = ("user", "assistant", "tool", "thinking", "error")

# Python's regex engine backtracks: `(a+)+$` takes time exponential in the length of a run of a's.
# A search keeps Python's syntax (look-around, backreferences) and gives its matches this many seconds
# in all, over every text it searches; a pattern that takes longer is too complex (`query.regex_budget`).
REGEX_SECONDS = 5.0
