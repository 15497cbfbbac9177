"""The raw view (`r`): an event's line as the journal holds it, byte for byte, then pretty."""

from __future__ import annotations

import zlib
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from tests.tui.conftest import screen_text, session_app, wait_for_text
from tests.tui.journals import SESSION, encode, user
from wren_tui.tui.app import WrenApp


def _line(body: bytes) -> bytes:
    """A line with a correct CRC, the way the writer ends one."""
    return body + b',"crc":"' + format(zlib.crc32(body), "08x").encode() + b'"}\n'


def _app(path: Path) -> WrenApp:
    return session_app(path, watch_mode="poll")


async def test_raw_view_shows_the_line_as_written_with_its_crc_and_members_this_version_does_not_know(
    tmp_path: Path,
) -> None:
    body = (
        b'{"seq":2,"ts":"2025-03-01T09:30:01.250Z","type":"message",'
        b'"message":{"role":"user","content":"second","mood":"curious"},"note":"kept as written","n":1.50'
    )
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(encode([user("first")]) + _line(body))
    app = _app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "second")
        await pilot.press("r")
        await wait_for_text(pilot, "Event 2 (message) as written")
        crc = format(zlib.crc32(body), "08x")
        assert _shown(app, "written") == body.decode() + f',"crc":"{crc}"}}'
        # The pretty view keeps every member, in order, and numbers as written.
        pretty = [line.strip() for line in _shown(app, "pretty").splitlines()]
        start = pretty.index('"message": {')
        assert pretty[start : start + 10] == [
            '"message": {',
            '"role": "user",',
            '"content": "second",',
            '"mood": "curious"',
            "},",
            '"note": "kept as written",',
            '"n": 1.50,',
            f'"crc": "{crc}"',
            "}",
        ]
        assert "kept as written" in screen_text(app)


async def test_raw_view_shows_the_control_characters_of_a_line_the_reader_accepted(tmp_path: Path) -> None:
    # A CR is refused by the reader (tests/reliability: CRLF line endings); DEL, a C1 control and a
    # bidi override are valid raw inside a JSON string, so an accepted line can hold them as written.
    body = (
        '{"seq":2,"ts":"2025-03-01T09:30:01.250Z","type":"message",'
        '"message":{"role":"user","content":"second \x7f \x9b31m \u202eabc"}'
    ).encode()
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(encode([user("first")]) + _line(body))
    app = _app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "second")
        await pilot.press("r")
        await wait_for_text(pilot, "Event 2 (message) as written")
        assert '"content":"second ␡ <U+009B>31m <U+202E>abc"},"crc":' in _shown(app, "written")
        assert "second ␡ <U+009B>31m <U+202E>abc" in screen_text(app)


def _shown(app: WrenApp, name: str) -> str:
    """The whole text a part of the raw view holds (the screen shows it wrapped)."""
    content = app.screen.query_one(f"#{name}", Static).content
    return content.plain if isinstance(content, Text) else str(content)
