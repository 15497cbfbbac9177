"""What every format reader shares: one line of another agent's session in, Wren events out.

A line is translated on its own, by `Translator.translate`: the events it gives (their number and
kinds) depend only on its bytes, so a viewer can decode any line again by its byte span and its
place among the line's events. What a line cannot say alone (when the call it answers was asked,
how much of a usage its message's earlier lines already counted) comes from the translator's
memory of the lines before it: it fills values and may hide an event from a reading (`hidden`),
never change which events there are. Seq is the line's number in the file, from 1.
"""

from __future__ import annotations

import functools
import operator
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

import msgspec

from .contract import ExportAll as ExportAll
from .contract import Follower as Follower
from .contract import Format as Format
from .contract import Frames as Frames
from .contract import Kinds as Kinds
from .contract import Node as Node
from .contract import Progress as Progress
from .contract import Tail as Tail
from .contract import Translated as Translated
from .contract import Translator as Translator
from .contract import Verdict as Verdict
from .contract import never_a_line as never_a_line
from .folders import MEMBER as MEMBER
from .folders import Folder as Folder
from .folders import head_of as head_of
from .folders import member_path as member_path
from .folders import split_member as split_member
from .folders import variable_or_home as variable_or_home
from .make import MALFORMED, note

S = TypeVar("S", bound=msgspec.Struct)
L = TypeVar("L", bound=msgspec.Struct)
_T = TypeVar("_T")


class BadLine(Exception):
    """A line that is not a JSON object: reading stops there, as at a damaged line of a Wren journal."""


@dataclass
class Skipped:
    """Lines left out of a reading, by kind: bookkeeping on purpose, unknown kinds, malformed lines."""

    known: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)

    def count(self, line: Translated) -> None:
        if line.verdict == "skipped":
            self.known[line.kind] += 1
        elif line.verdict == "unknown":
            self.unknown[line.kind] += 1
        elif line.verdict == "malformed":
            self.malformed[line.kind] += 1

    def sentence(self) -> str | None:
        """What was left out, in one line a person reads; None when every line was translated."""
        parts = []
        if self.known:
            parts.append("not shown: " + _kinds(self.known))
        if self.unknown:
            parts.append("kinds this version does not know: " + _kinds(self.unknown))
        if self.malformed:
            parts.append("lines whose fields did not fit: " + _kinds(self.malformed))
        return "; ".join(parts) or None

    def as_json(self) -> dict[str, dict[str, int]]:
        return {"known": dict(self.known), "unknown": dict(self.unknown), "malformed": dict(self.malformed)}


def _kinds(counts: Counter[str]) -> str:
    return ", ".join(f"{kind} ×{n}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class TypedTranslator(Translator, Generic[L]):
    """A translator of lines its `decoder` types as one tagged Struct per kind (`decode_line`), each then given
    to `typed` (`class PiTranslator(TypedTranslator[_Entry], decoder=..., known=...)`); a known kind whose
    fields do not fit what `typed` reads is a malformed line. It remembers when
    each call was asked (`_asked`), for the time its result took.
    """

    decoder: ClassVar[msgspec.json.Decoder[Any]]
    known: ClassVar[frozenset[str]]  # the kinds it knows: a line of another kind is counted as unknown
    # The Struct classes of kinds left out on purpose (`tagged`): counted as skipped without calling `typed`.
    skipped: ClassVar[frozenset[type]]

    def __init_subclass__(
        cls,
        decoder: msgspec.json.Decoder[Any],
        known: frozenset[str],
        skipped: tuple[type, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        cls.decoder, cls.known, cls.skipped = decoder, known, frozenset(skipped)

    def __init__(self) -> None:
        self._asked: dict[str, int | None] = {}

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        line: L | Translated = decode_line(self.decoder, lineno, data, self.known)
        if isinstance(line, Translated):
            return line  # a kind this reader does not type, counted, or a known one that does not fit
        kind = str(line.__struct_config__.tag)
        if type(line) in self.skipped:
            out = Translated([], kind, "skipped")
        else:
            try:
                out = self.typed(lineno, kind, line, learn)
            except (msgspec.ValidationError, TypeError, ValueError) as exc:
                out = malformed(lineno, self.time_of(line), kind, exc)
        out.node = self.node(kind, line)
        cwd = self.cwd(line)
        if cwd is not None:
            out.cwd = cwd
        return out

    @abstractmethod
    def typed(self, seq: int, kind: str, line: L, learn: bool) -> Translated:
        """The events of a line of kind `kind`; `learn`: as `translate`'s."""

    def time_of(self, line: L) -> str:
        """When the line was written, as it says (its `timestamp`)."""
        ts = getattr(line, "timestamp", "")
        return ts if isinstance(ts, str) else ""

    def node(self, kind: str, line: L) -> Node | None:
        """The line's place in the file's tree (None: the format's lines are one sequence)."""
        return None

    def cwd(self, line: L) -> str | None:
        """The workspace every line of the format names, if it does."""
        return None


# --- helpers the formats share (the events they make: `make`) ----------------------------------------


def union(kinds: tuple[type, ...]) -> Any:
    """The union of some Struct classes, for a decoder that picks one by its tag."""
    return functools.reduce(operator.or_, kinds)


def tagged(base: type[S], kinds: tuple[str, ...]) -> tuple[type[S], ...]:
    """A Struct class per kind, with `base`'s fields and no more: lines decoded only to be counted."""
    return tuple(cast(type[S], msgspec.defstruct(f"_{i}", [], bases=(base,), tag=kind)) for i, kind in enumerate(kinds))


def malformed(seq: int, ts: str, kind: str, why: Exception) -> Translated:
    """A known kind whose fields do not fit: a note that says so, and the line counted as malformed."""
    return Translated([note(seq, ts, MALFORMED, kind=kind, why=str(why))], kind, "malformed")


class Envelope(msgspec.Struct):
    """Only the kind of a line (and its time), for lines the typed decoder refused."""

    type: Any = None
    timestamp: Any = None


_envelope = msgspec.json.Decoder(Envelope)


def refused(seq: int, data: bytes, exc: msgspec.ValidationError, known: frozenset[str]) -> Translated:
    """A line the typed decoder refused: an unknown kind (counted), a known kind that does not fit (a
    note), or not a JSON object at all (BadLine)."""
    try:
        env = _envelope.decode(data)
    except msgspec.ValidationError:
        raise BadLine("it is JSON but not an object") from None
    except msgspec.DecodeError as bad:  # a value, then more: the typed decoder refused the first before seeing them
        raise not_json(bad) from None
    kind = env.type if isinstance(env.type, str) else "(no type)"
    ts = env.timestamp if isinstance(env.timestamp, str) else ""
    if kind in known:
        return malformed(seq, ts, kind, exc)
    return Translated([], kind, "unknown")


def decode_line(decoder: msgspec.json.Decoder[_T], seq: int, data: bytes, known: frozenset[str]) -> _T | Translated:
    """The line as `decoder` types it; what `refused` makes of one it cannot type (check with isinstance
    Translated); BadLine for one that is not JSON. Every format's translator starts here."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        return refused(seq, data, exc, known)
    except msgspec.DecodeError as exc:
        raise not_json(exc) from None


# Why reading stops at a value nested past what a decoder follows.
TOO_DEEP = "its JSON is nested too deeply to read"


def node_reader(fields: type[S], place: Callable[[S], Node | None]) -> Callable[[bytes], Node | None]:
    """A format's `node_of`: a line's place in the tree, from `fields` (a Struct of the tree's fields alone) read
    without the rest of the line; None for a line out of the tree or whose fields do not fit (its full reading
    says why); BadLine for a line that is not a JSON object."""
    decoder = msgspec.json.Decoder(fields)

    def node_of(data: bytes) -> Node | None:
        try:
            line = decoder.decode(data)
        except msgspec.ValidationError:
            if data.lstrip()[:1] != b"{":
                raise BadLine("it is JSON but not an object") from None
            return None  # an object whose fields do not fit: the full reading shows why
        except msgspec.DecodeError as exc:
            raise not_json(exc) from None
        return place(line)

    return node_of


def field_reader(fields: type[S], marker: bytes, read: Callable[[S], _T], absent: _T) -> Callable[[bytes], _T]:
    """What one line records (a format's `tokens_of`, `totals`), from `fields` (a Struct of those fields alone)
    read without translating the line; `absent` for a line without `marker` in its bytes or whose fields do not
    decode."""
    decoder = msgspec.json.Decoder(fields)

    def reader(data: bytes) -> _T:
        if marker not in data:
            return absent
        try:
            line = decoder.decode(data)
        except msgspec.DecodeError:
            return absent
        return read(line)

    return reader


def not_json(exc: msgspec.DecodeError) -> BadLine:
    """Why a line that msgspec could not parse at all stops the reading."""
    return BadLine("its bytes are not valid UTF-8" if "UTF-8" in str(exc) else "it is not JSON")
