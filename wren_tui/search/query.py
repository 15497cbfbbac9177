"""What a person searches for: the pattern, how it matches a text, and what its lines' raw bytes must hold.

A journal line is JSON: a text is in it JSON-escaped (a quote as \\", a newline as \\n, maybe a
character as \\uXXXX), so the pattern as typed is not what the bytes hold. The raw pass looks
for a *fragment* of the pattern that every writer leaves as it is (printable ASCII but the quote and
the backslash; other characters as their UTF-8), and lets through any line that holds it, or an
escape that could stand for one of its characters (`\\u0041` for A, `\\/` for /, `\\u00e9` for é).
Such a line can match; it is decoded and the pattern confirmed on the decoded text. A pattern with
no such fragment (`"`, `\\d+`, `a|b`) makes every line a candidate: correct, and as slow as decoding.

Case: a pattern without a capital letter ignores case (as `re.IGNORECASE` does, so `k` also matches
the Kelvin sign; the raw pass lets those lines through too), one with a capital letter does not.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import time
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..portable import main_thread_ticks
from ..records import Frozen
from .choices import REGEX_SECONDS
from .rawpass import holds, native

# What a raw pass over a line's bytes can be given: `_scan.scan`'s needle, fold, escapes and extras.
Prefilter = tuple[bytes | None, bool, bool, tuple[bytes, ...]]

# Letters re.IGNORECASE matches with non-ASCII characters: i with İ and ı, k with the Kelvin sign, s with ſ.
_ODD_CASES = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
# At most this many byte strings besides the fragment (the C pass takes 15).
_MOST_EXTRAS = 15

_parser: Any = importlib.import_module("re._parser")  # re's own parser (sre_parse warns when imported)
_LITERAL = _parser.LITERAL
_SUBPATTERN = _parser.SUBPATTERN
_REPEATS = (_parser.MAX_REPEAT, _parser.MIN_REPEAT, _parser.POSSESSIVE_REPEAT)
_ATOMIC = _parser.ATOMIC_GROUP


class BadPattern(ValueError):
    """The pattern cannot be searched for; the message is one sentence a person reads."""


_TICK = 0.2


class PatternTooSlow(BadPattern):
    """A search's regex matches took longer than its budget: catastrophic backtracking, most likely."""

    def __init__(self, seconds: float, texts: int) -> None:
        super().__init__(f"more than {seconds:g} s over {texts} texts")
        self.seconds = seconds
        self.texts = texts  # how many texts it was matched on (the last one unfinished)


# When the running find() began (None: no regex is matching), read by the tick; the seconds the search's
# matches took before it, and how many there were; the budget (None: outside `regex_budget`).
_matching: list[float | None] = [None]
_spent: list[float] = [0.0]
_texts: list[int] = [0]
_limit: list[float | None] = [None]
# Inside regex_budget where no tick can interrupt `re` (no setitimer: Windows): `find` matches with the
# `regex` library (a dependency there), whose search takes a timeout: what is left of the budget.
_by_library: list[bool] = [False]


@contextlib.contextmanager
def regex_budget(seconds: float = REGEX_SECONDS) -> Iterator[None]:
    """While inside, the regex matches of the search take `seconds` in all, then PatternTooSlow is raised.

    The whole search's, not each text's: 40 texts at 3 s each stop at the budget as one text at 120 s
    does. Python's `re` checks for signals as it matches, so a tick every _TICK
    (`portable.main_thread_ticks`: SIGALRM where there is setitimer) interrupts a long match; the tick
    raises only once the search is over budget (and `find` checks after each match). Without ticks
    (Windows) each match is timed by the `regex` library with what is left of the budget. Only the
    main thread can be interrupted so: elsewhere (and with a handler already set by someone else) the
    budget is checked after each match.
    """

    def tick() -> None:
        began, limit = _matching[0], _limit[0]
        if began is not None and limit is not None and _spent[0] + time.monotonic() - began > limit:
            _matching[0] = None
            raise PatternTooSlow(limit, _texts[0])

    outer = (_limit[0], _spent[0], _texts[0], _by_library[0])  # a budget this one is inside, put back after
    _limit[0], _spent[0], _texts[0] = seconds, 0.0, 0
    try:
        with main_thread_ticks(_TICK, tick) as ticking:
            _by_library[0] = not ticking
            yield
    finally:
        _matching[0] = None
        _limit[0], _spent[0], _texts[0], _by_library[0] = outer


# A cache not yet filled (None is a value it can take).
_UNSET: Any = object()


class Query(Frozen):
    """A compiled search: `find` on decoded text, `prefilter` for the raw bytes of a line."""

    __slots__ = (
        "_literal",
        "_needle",
        "_prefilter",
        "_timed_pattern",
        "compiled",
        "fold",
        "fragment",
        "pattern",
        "regex",
        "runs",
    )
    pattern: str
    regex: bool
    fold: bool
    compiled: re.Pattern[str]
    fragment: str | None  # what the raw bytes must hold, as text (None: any line can match)
    runs: tuple[str, ...]  # runs of literal text every match holds (the index looks for the longest)
    if TYPE_CHECKING:  # its caches (no fields): what `find` and the raw pass ask of it, worked out when first asked
        _literal: str | None
        _needle: bytes
        _prefilter: Prefilter
        _timed_pattern: Any

    def __init__(
        self,
        pattern: str,
        regex: bool,
        fold: bool,
        compiled: re.Pattern[str],
        fragment: str | None,
        runs: tuple[str, ...] = (),
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "pattern", pattern)
        set_field(self, "regex", regex)
        set_field(self, "fold", fold)
        set_field(self, "compiled", compiled)
        set_field(self, "fragment", fragment)
        set_field(self, "runs", runs)
        # What `find` looks for with str.find: the pattern as typed (lowercased when ignoring case, where it must be
        # ASCII); None: only the regex finds it.
        literal = None if regex else pattern if not fold else pattern.lower() if pattern.isascii() else None
        set_field(self, "_literal", literal)
        # The literal's bytes, for the raw pass's search ignoring ASCII case: asked only when folding, where the
        # literal is ASCII (a pattern as typed may hold a lone surrogate, which has no UTF-8).
        set_field(self, "_needle", literal.encode() if fold and literal is not None else b"")
        set_field(self, "_prefilter", _UNSET)
        set_field(self, "_timed_pattern", _UNSET)

    @classmethod
    def of(cls, pattern: str, *, regex: bool = False) -> Query:
        """The search for `pattern`: a literal text, or with `regex` a Python regular expression.

        Raises:
            BadPattern: it is empty, or not a valid regular expression.
        """
        if not pattern:
            raise BadPattern("the pattern is empty: give the text to look for")
        fold = not _has_capital(pattern, regex)
        flags = re.IGNORECASE if fold else 0
        source = pattern if regex else re.escape(pattern)
        try:
            with warnings.catch_warnings():
                # re's FutureWarnings ("possible nested set") would reach stderr as lines of code, not a sentence.
                warnings.simplefilter("ignore")
                compiled = re.compile(source, flags)
                runs = _regex_runs(source, flags) if regex else [pattern]
        except re.error as exc:
            raise BadPattern(
                f"{_shown(pattern)} is not a valid regular expression ({exc}): correct it, or leave out --regex "
                "to search for the text as typed"
            ) from None
        except (OverflowError, RecursionError, MemoryError) as exc:
            why = "a repeat count too large" if isinstance(exc, OverflowError) else "groups nested too deep"
            if isinstance(exc, MemoryError):
                why = "too large to compile"
            raise BadPattern(
                f"{_shown(pattern)} is too complex a regular expression ({why}): simplify it, or leave out --regex "
                "to search for the text as typed"
            ) from None
        fold = bool(compiled.flags & re.IGNORECASE)  # (?i) inside a regex turns it on
        fragment = _best(runs, fold)
        return cls(pattern, regex, fold, compiled, fragment, tuple(runs))

    def find(self, text: str) -> tuple[int, int] | None:
        """Where the first match in `text` starts and ends, or None.

        Raises:
            PatternTooSlow: inside `regex_budget`, the search's regex matches took longer than its budget.
        """
        if not self.regex:
            literal = self._literal
            if literal is not None and (not self.fold or text.isascii()):
                # The same first match as the regex: a literal as typed, or ignoring ASCII case in an ASCII text
                # (where no other character can match), found in a fraction of re's time.
                if not self.fold:
                    at = text.find(literal)
                elif native is not None:  # the raw pass's search, ASCII case ignored (a byte is a character here)
                    at = native.find(text.encode(), self._needle, True, False, ())
                else:
                    at = text.lower().find(literal)
                return None if at < 0 else (at, at + len(literal))
            match = self.compiled.search(text)
        else:
            began = _matching[0] = time.monotonic()
            _texts[0] += 1
            limit = _limit[0]
            try:
                timed = self._timed if _by_library[0] and limit is not None else None
                if timed is None or limit is None:
                    match = self.compiled.search(text)
                else:
                    match = timed.search(text, timeout=max(limit - _spent[0], 0.001))
            except TimeoutError:
                raise PatternTooSlow(limit or 0.0, _texts[0]) from None
            finally:
                _matching[0] = None
                _spent[0] += time.monotonic() - began
            if limit is not None and _spent[0] > limit:
                raise PatternTooSlow(limit, _texts[0])
        return None if match is None else match.span()

    @property
    def _timed(self) -> Any:
        """The pattern compiled by the `regex` library (its search takes a timeout); None without it, or
        for a pattern it reads otherwise than `re` (then the match is not limited). Compiled when first asked."""
        timed = self._timed_pattern
        if timed is _UNSET:
            timed = _timed_compile(self.compiled)
            object.__setattr__(self, "_timed_pattern", timed)
        return timed

    @property
    def prefilter(self) -> Prefilter:
        """The raw pass's arguments: needle, fold, escapes, extras (see `_scan.c`); worked out once, asked per line."""
        prefilter = self._prefilter
        if prefilter is _UNSET:
            prefilter = self._prefilter_of()
            object.__setattr__(self, "_prefilter", prefilter)
        return prefilter

    def _prefilter_of(self) -> Prefilter:
        fragment = self.fragment
        if fragment is None:
            return None, False, False, ()
        needle = (fragment.lower() if self.fold else fragment).encode()
        extras: list[bytes] = []
        for char in dict.fromkeys(fragment.lower() if self.fold else fragment):
            if not char.isascii():
                extras.append(_escape(char))
            elif self.fold and char in _ODD_CASES:
                for odd in _ODD_CASES[char]:
                    extras.extend((odd.encode(), _escape(odd)))
        return needle, self.fold, any(char.isascii() for char in fragment), tuple(extras)

    def line_may_match(self, line: bytes) -> bool:
        """What the raw pass decides for one line's bytes (a reader of another format asks it line by line)."""
        needle, fold, escapes, extras = self.prefilter
        return needle is None or holds(line, needle, fold, escapes, extras)


def _timed_compile(compiled: re.Pattern[str]) -> Any:
    """`Query._timed`, compiled."""
    try:
        import regex  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    flags = compiled.flags & (re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII)
    try:
        return regex.compile(compiled.pattern, flags | regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, MemoryError):
        return None


def _shown(pattern: str) -> str:
    """The pattern as a sentence can quote it: its start, when it is long."""
    return repr(pattern) if len(pattern) <= 80 else f"{pattern[:60]!r}... ({len(pattern):,} characters)"


def _escape(char: str) -> bytes:
    """`char` as a JSON \\u escape, lowercase hex (the raw pass ignores ASCII case); astral: a surrogate pair."""
    code = ord(char)
    if code < 0x10000:
        return b"\\u%04x" % code
    code -= 0x10000
    return b"\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _has_capital(pattern: str, regex: bool) -> bool:
    """Whether the pattern holds a capital letter (in a regex, not one that is part of an escape like \\W)."""
    text = re.sub(r"\\.", "", pattern) if regex else pattern
    return any(char.isupper() for char in text)


def _raw(char: str, fold: bool) -> bool:
    """Whether every writer leaves `char` in a line as it is (or as an escape the raw pass also looks for)."""
    if char.isascii():
        return " " <= char <= "\x7f" and char not in '"\\'
    if 0xD800 <= ord(char) < 0xE000:
        return False  # a lone surrogate has no UTF-8
    if not fold:
        return True
    # Ignoring case, a character with another case could be written in that one: not raw.
    return char.lower() == char == char.upper() and char.casefold() == char


def _best(runs: list[str], fold: bool) -> str | None:
    """The longest piece (in bytes) of the runs made of raw characters, trimmed to what the raw pass can take."""
    pieces: list[str] = []
    for run in runs:
        piece = ""
        for char in run:
            if _raw(char, fold):
                piece += char
            elif piece:
                pieces.append(piece)
                piece = ""
        if piece:
            pieces.append(piece)
    if not pieces:
        return None
    best = max(pieces, key=lambda piece: len(piece.encode()))
    return _trimmed(best, fold)


def _trimmed(fragment: str, fold: bool) -> str:
    """The longest start of `fragment` whose escapes fit the raw pass's extras."""
    extras = 0
    seen: set[str] = set()
    for index, char in enumerate(fragment.lower() if fold else fragment):
        if char in seen:
            continue
        seen.add(char)
        extras += 0 if char.isascii() and not (fold and char in _ODD_CASES) else 1 + 2 * len(_ODD_CASES.get(char, ""))
        if extras > _MOST_EXTRAS:
            return fragment[:index]
    return fragment


def _regex_runs(source: str, flags: int) -> list[str]:
    """Runs of literal characters that every match of the regex holds, one after the other in the text."""
    parsed = _parser.parse(source, flags)
    return [run for run in _required(list(parsed.data)) if run]


def _required(items: list[tuple[Any, Any]]) -> list[str]:
    """Runs of literals a match of this sequence of parsed items must hold (never an optional part)."""
    runs: list[str] = []
    run = ""
    for op, arg in items:
        if op is _LITERAL:
            run += chr(arg)
            continue
        runs.append(run)
        run = ""
        if op is _SUBPATTERN:
            _group, add_flags, del_flags, inner = arg
            if not add_flags and not del_flags:  # a group that changes case changes what its literals match
                runs.extend(_required(list(inner.data if hasattr(inner, "data") else inner)))
        elif op is _ATOMIC:
            runs.extend(_required(list(arg.data if hasattr(arg, "data") else arg)))
        elif op in _REPEATS:
            low, _high, inner = arg
            if low >= 1:
                runs.extend(_required(list(inner.data if hasattr(inner, "data") else inner)))
    runs.append(run)
    return runs
