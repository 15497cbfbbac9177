"""Text from a journal, a model or a tool made safe to show: every character a terminal would obey is shown instead.

Control characters (C0, DEL, C1), bidi overrides and format characters become printable
placeholders, one character at a time, so an escape sequence split across two streamed fragments is
still shown whole and never reaches a terminal. The viewer, `wren log` and the agent's printer all
use this one definition.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache

# Bidi embeddings, overrides, isolates and marks: they reorder what a person reads.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_TAB = "    "


@lru_cache(maxsize=512)
def _placeholder(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        # U+2400.. are the printable "control pictures": ESC shows as ␛, BEL as ␇.
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


def _first_category(char: str) -> str:
    """`unicodedata.category`, loaded when a character above ASCII in text that is not printable first asks: most
    text never does (`visible`'s fast path), so a command that shows only such text never loads the Unicode tables."""
    global _category
    from unicodedata import category

    _category = category  # later calls go straight to it
    return category(char)


_category: Callable[[str], str] = _first_category


def _is_hidden(char: str) -> bool:
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F or char in _BIDI:
        return True
    # Format characters (Cf: zero-width joiners and the like) can hide or reorder text too; a lone
    # surrogate (Cs) cannot be encoded for a terminal at all; the line and paragraph separators (Zl,
    # Zp: U+2028, U+2029) break a line where some terminals and editors do not show one.
    return code > 0x9F and _category(char) in ("Cf", "Cs", "Zl", "Zp")


@cache
def hidden_above_ascii() -> re.Pattern[str]:
    """The characters above ASCII that `visible` hides (C1 controls, the soft hyphen and every other format
    character: bidi marks, embeddings, overrides and isolates, zero-width spaces and joiners, tags; the line and
    paragraph separators), as of Unicode 15 (tests/test_json_for_people.py checks it against `_is_hidden`).
    Compiled when JSON that is not ASCII is first written (0.3 ms): most output never is."""
    return re.compile(
        "[\x80-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
        "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
        "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
    )


@cache
def _surrogate() -> re.Pattern[str]:
    """A lone or paired surrogate (`valid_text`), compiled when first asked."""
    return re.compile("[\ud800-\udfff]")


def _json_escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escaped_json(data: bytes) -> bytes:
    """JSON (UTF-8) as written for a person, a terminal or a pipe: each character `visible` hides that JSON
    writers leave as it is (they escape only U+0000-U+001F) written as `\\uXXXX`, so a C1 CSI (U+009B), a
    right-to-left override (U+202E) or a zero-width space (U+200B) reaches no terminal. The same JSON value:
    such a character is never part of JSON's syntax, only of a string. Bytes that are not UTF-8 stay as they are.
    """
    if data.isascii():
        return data
    text = data.decode("utf-8", "surrogateescape")
    if text.isprintable():  # every character hidden is one Python counts as not printable: none here
        return data
    hidden = hidden_above_ascii()
    if hidden.search(text) is None:
        return data
    return hidden.sub(_json_escape, text).encode("utf-8", "surrogateescape")


def valid_text(text: str) -> str:
    """`text` as UTF-8 can hold it: surrogate pairs joined (a JSON `\\ud83d\\ude00` cut in two), a lone one U+FFFD."""
    if _surrogate().search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def visible(text: str) -> str:
    """One line of text with every control, bidi and format character shown as a placeholder."""
    # Every character made visible below is one Python counts as not printable (Cc, Cf, Cs, Zl, Zp).
    if text.isprintable():
        return text
    return "".join(_placeholder(c) if _is_hidden(c) else c for c in text.replace("\t", _TAB))


def visible_lines(text: str) -> list[str]:
    """Text split on newlines, each line made visible (a lone CR is shown, not obeyed)."""
    return [visible(line) for line in text.split("\n")]


def visible_text(text: str) -> str:
    """Text made visible with its newlines kept: what may be written to a terminal, fragment by fragment."""
    return "\n".join(visible_lines(text))


def hidden_characters(text: str) -> list[str]:
    """The distinct characters of `text` that `visible` replaces, in order of first appearance (newline included)."""
    if text.isprintable():
        return []
    return list(dict.fromkeys(c for c in text if c != "\t" and _is_hidden(c)))


def placeholder(char: str) -> str:
    """How `visible` shows one hidden character."""
    return _placeholder(char)
