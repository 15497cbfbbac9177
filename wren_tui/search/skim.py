"""Another agent's session file read for search: its lines translated as `wren log` reads them, or skimmed.

`search.foreign.ForeignSession` is what a listing makes of each file (a path, a format, how it was when
listed); this module is what reads one, loaded only when a file is read: a search the index answers for
every file never loads the translators, the reader or msgspec's decoders through it.

A file is first *skimmed* (`Skim`): its raw bytes are looked at for a word of the query, and a file
that cannot hold a match is not translated, as the raw pass leaves a Wren journal's lines undecoded.
Its lines are still checked to be JSON objects (in C, nothing built), so reading stops where it
would; a file with any doubt is read whole. Lines are not skipped one by one: a translator's memory
learns from every line (see `Skim` for why a file's bytes can vouch for its texts).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pickle
import re
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from types import CodeType, FunctionType

import msgspec

from ..foreign import Format
from ..foreign.exported import open_lines
from ..foreign.make import THINKING
from ..foreign.reader import Translation
from ..foreign.redacted import clean, redacted
from ..journal.events import Event, UnknownEvent
from ..journal.lines import CUT_SHORT
from ..journal.redact import MARK
from ..journal.verdict import Stop
from ..portable import pread
from .query import Prefilter, Query
from .rawpass import holds, native
from .sources import Item, Saved
from .spoken import SPOKEN, items_of


def translated(
    path: Path, fmt: Format, saved: Saved | None, skim: Skim | None
) -> Generator[Item, None, tuple[Stop | None, Saved | None, bool]]:
    """The items of the file at `path` (from `saved` on, if given), then, returned: where reading stopped, where a
    reading of its growth goes on from, and whether it was skimmed (no line could match: nothing translated, nothing
    to go on from, the stop said only when its last line is cut short)."""
    fd = open_lines(path, fmt)
    try:
        if skim is not None:
            skimmed = skim.file(fd)
            if skimmed is not None:  # no line can match, and every line reads: nothing to translate
                lines, good = skimmed
                cut = os.fstat(fd).st_size > good
                return (Stop(lines + 1, good, CUT_SHORT, torn=True) if cut else None), None, True
        if saved is None:
            translator, lineno, good, project = fmt.translator(), 0, 0, None
        else:
            translator, lineno, good, project = pickle.loads(saved.state)
        # Lines, whatever the format: a format read in its own units (a document) is searched by its lines.
        reading = Translation(fd, None, translator, good, lineno)
        for start, line, _data in reading:
            project = line.cwd or project
            if line.events:  # most lines of a session are the client's bookkeeping, translated to nothing
                hidden = line.hidden
                for part, event in enumerate(line.events):
                    if part not in hidden and type(event) in _TEXTS:
                        yield from _items(event, start, part, project)
        stop = reading.ending()
        lineno, good = reading.lineno, reading.offset
        # A session exported into lines (OpenCode, aider) is exported anew from the file each time, so
        # its offsets are no place in the file to go on from: it is read again whole when it changes.
        exported = fmt.export is not None
        return stop, (None if exported else _save(translator, lineno, good, project)), False
    finally:
        os.close(fd)


def _save(translator: object, lineno: int, good: int, project: str | None) -> Saved | None:
    """What a reading remembers at `good`, or None when a format's translator cannot be kept (read again whole)."""
    try:
        return Saved(good, pickle.dumps((translator, lineno, good, project), protocol=5))
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


# The kinds of event that can hold a searched text (the rest, a call's end or a reply's usage, are passed over).
_TEXTS = SPOKEN | {UnknownEvent}


def _items(event: Event, offset: int, part: int, project: str | None) -> Iterator[Item]:
    """The searched texts of an event, secrets redacted (`foreign.redacted`): the index holds none, nor does a hit."""
    if isinstance(event, UnknownEvent):
        text = event.fields.get("text") if event.type == THINKING else None
        if isinstance(text, str) and text:
            yield Item(event.seq, event.ts, "thinking", "reasoning", clean(text), offset, part, project=project)
        return
    yield from items_of(redacted(event), offset, part, project)


# Formats whose translators were read for the texts they build (below): their files are skimmed.
SKIMMED = frozenset({"claude", "codex", "copilot"})
SKIM_CHUNK = 4 << 20
# The doubts of `_plain` (`_scan.plain` in C). \u escapes of a control character that msgspec writes otherwise
# (\b \t \n \f \r, or lowercase hex) when a translator encodes a JSON value again: the letter after the
# backslash would be in the text, not in the bytes.
_CONTROL = re.compile(rb"\\u00(?:0[89aAcCdD]|[01][A-F])")
# A number msgspec cannot hold (a float past 1.8e308): the translator's typed decoding stops there, the skim's does not.
_HUGE = re.compile(rb"(?:(?<![^:\[, \t\n\r])|(?<![^:\[, \t\n\r])-)([0-9]+)(\.[0-9]*)?(?:[eE]\+?([0-9]*))?")
# Words a translator may write itself, besides the ones of its modules' strings: JSON's, encoding a value again.
_LITERALS = ("null", "true", "false")
_BLANK = re.compile(rb"(?:\A|\n)[ \t\r]*\n")
_LETTERS = re.compile(r"[^\W\d_]+")


class _Object(msgspec.Struct):
    """Any JSON object: its members skipped, checked but unread."""


_objects = msgspec.json.Decoder(_Object)


@dataclasses.dataclass(frozen=True)
class Skim:
    """What a file's bytes must hold to hold a match: a word of the query (its longest run of letters).

    A text a translator builds is made of the line's strings (decoded, or its JSON kept as written),
    JSON it encodes again from the line's values, and its own words (a placeholder, a sentence),
    joined by newlines or punctuation, never letter to letter (read in SKIMMED's translators: a
    format not read is not skimmed, nor one exported into lines). So a text holding the word holds it
    within one of those. A line's string holds it in its bytes, as the raw pass looks for it (escapes
    and other cases let through); JSON encoded again differs from the bytes in spaces, numbers (no
    letters but e) and escapes: one whose letter could differ (`_CONTROL`) lets the file through. The
    translator's own words are every string constant of its module and of `foreign.base` (JSON's
    null, true and false too): a query whose word is in one is not skimmed. Formats that write a
    value with Python's str() (pi, Qwen Code, Gemini CLI: a repr's escapes hold letters) are not.
    """

    word: str
    prefilter: Prefilter

    @staticmethod
    @functools.lru_cache(maxsize=16)
    def of(query: Query, fmt: Format) -> Skim | None:
        """The skim for `query` over `fmt`'s files, or None: every file is read."""
        if fmt.name not in SKIMMED or fmt.export is not None or query.fragment is None:
            return None
        word = max(_LETTERS.findall(query.fragment), key=len, default="")
        made = _made_words(fmt.translator.__module__)
        if len(word) < 3 or not made or any(word.lower() in each for each in made):
            return None
        return Skim(word, query.replace(fragment=word).prefilter)

    def holds(self, data: bytes) -> bool:
        """Whether these bytes (whole lines) may hold the word, or an escape or case of it."""
        needle, fold, escapes, extras = self.prefilter
        assert needle is not None
        if native is not None:
            return int(native.find(data, needle, fold, escapes, extras)) >= 0
        return holds(data, needle, fold, escapes, extras)

    def file(self, fd: int) -> tuple[int, int] | None:
        """The file's whole lines and where they end, when none may hold a match and each reads as a JSON
        object (reading stops at none); None: read it."""
        lines = offset = 0
        rest = b""
        while True:
            data = pread(fd, SKIM_CHUNK, offset)
            if not data:
                return lines, offset - len(rest)
            offset += len(data)
            if rest:
                data, rest = rest + data, b""
            cut = data.rfind(b"\n") + 1
            if cut < len(data):
                data, rest = data[:cut], data[cut:]
            if not data:
                continue
            plain = None if self.holds(data) else _plain(data)
            if plain is None:
                return None
            lines += plain


def _plain(data: bytes) -> int | None:
    """How many lines `data` (whole lines) has, if each is a JSON object the translators read as its bytes say
    (None: read the file). The doubts (`_scan.plain` finds the same, faster): a number too large for a float,
    a control character's escape msgspec writes otherwise, bytes that are not UTF-8, a blank line (then the
    objects msgspec counts can equal the lines with two objects on another)."""
    if native is not None:
        lines, doubt = (int(n) for n in native.plain(data))
        if doubt >= 0:
            return None
    else:
        lines = data.count(b"\n")
        if _CONTROL.search(data) or _BLANK.search(data) or any(_huge(match) for match in _HUGE.finditer(data)):
            return None
        try:
            data.decode()
        except UnicodeDecodeError:
            return None
    try:
        if len(_objects.decode_lines(data)) != lines:
            return None  # two objects on one line
    except (msgspec.DecodeError, RecursionError):
        return None
    return lines


def _huge(match: re.Match[bytes]) -> bool:
    """`_scan.plain`'s test of one number: its digits before the point and its exponent add up to 300 or more."""
    whole = len(match[1])
    if match[3] is None:
        return match[2] is not None and whole >= 300
    return whole + min(int(match[3] or b"0"), 100_000) >= 300


@functools.cache
def _made_words(module: str) -> tuple[str, ...]:
    """Every word (run of letters, lowercase) of every string in the code and values of a translator's module
    and of the helpers it builds texts with (`foreign.base`), docstrings aside; () when one is not loaded."""
    # And the mark a key is redacted to (`foreign.redacted`): a text may hold it where the file holds the key.
    words: set[str] = set(_LITERALS) | {word.lower() for word in _LETTERS.findall(MARK)}
    for name in (module, "wren_tui.foreign.base"):
        loaded = sys.modules.get(name)
        if loaded is None:
            return ()
        docs: set[str | None] = {loaded.__doc__}
        strings: list[str] = []
        own = [value for key, value in vars(loaded).items() if not key.startswith("__")]  # not its path, builtins
        for value in _defined(own, name):
            docs.add(getattr(value, "__doc__", None))
            strings.extend(_strings(value.__code__ if isinstance(value, FunctionType) else value))
        words.update(word.lower() for text in strings if text not in docs for word in _LETTERS.findall(text))
    return tuple(sorted(words))


_NOT_MADE = frozenset({"__doc__", "__module__", "__qualname__", "__dict__", "__weakref__"})


def _defined(values: list[object], module: str) -> Iterator[object]:
    """The functions, classes and values of a module's namespace (and of its classes), its own only."""
    seen: set[int] = set()
    while values:
        value = values.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, staticmethod | classmethod):
            values.append(value.__func__)
        elif isinstance(value, property):
            values.extend(f for f in (value.fget, value.fset, value.fdel) if f is not None)
        elif callable(value) and hasattr(value, "__wrapped__"):
            values.append(value.__wrapped__)
        if isinstance(value, type | FunctionType):
            if getattr(value, "__module__", None) != module:
                continue
            if isinstance(value, type):
                values.extend(v for key, v in vars(value).items() if key not in _NOT_MADE)
        yield value


def _strings(value: object) -> Iterator[str]:
    """The string constants of a code object and of those inside it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, CodeType):
        for const in value.co_consts:
            yield from _strings(const)
    elif isinstance(value, tuple | frozenset | list | set):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
