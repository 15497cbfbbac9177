"""Journal text is data: markup and terminal control sequences are shown, never obeyed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.segment import Segment

from tests.tui.conftest import FixedClock, screen_strips, screen_text, wait_for, wait_for_text
from tests.tui.journals import SESSION, assistant, user, write_journal
from wren_tui.journal.events import Error, ToolCall, ToolStart
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.text import visible

# (what a hostile journal holds, what a person must see instead)
PAYLOADS = {
    "bold markup": ("[bold]loud[/bold]", "[bold]loud[/bold]"),
    "link markup": ("[link=https://evil.example]click me[/link]", "[link=https://evil.example]click me[/link]"),
    "click action markup": ("[@click=app.quit]press to quit[/]", "[@click=app.quit]press to quit[/]"),
    "unbalanced close tag": ("before [/] after [/bold]", "before [/] after [/bold]"),
    "clear screen": ("wipe\x1b[2Jdone", "wipe␛[2Jdone"),
    "OSC 52 clipboard write": ("copy\x1b]52;c;SGVsbG8=\x07end", "copy␛]52;c;SGVsbG8=␇end"),
    "OSC 8 hyperlink": (
        "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
        "␛]8;;https://evil.example␛\\link␛]8;;␛\\",
    ),
    "bidi override": ("abc\u202edcba\u202c xyz", "abc<U+202E>dcba<U+202C> xyz"),
}


def _journal(tmp_path: Path, payload: str) -> Path:
    call = ToolCall("call_1", f"tool{payload}", f'{{"arg": "{payload.encode("unicode_escape").decode()}"}}')
    return write_journal(
        tmp_path / f"{SESSION}.jsonl",
        [
            user(f"user says {payload}"),
            assistant(f"assistant says {payload}", call),
            ToolStart(id="call_1", name=f"tool{payload}", read_only=True),
            Error(message=f"error says {payload}"),
            user(f"last {payload}"),
        ],
    )


def _segments_showing(app: WrenApp, shown: str) -> list[Segment]:
    return [seg for strip in screen_strips(app) for seg in strip if shown[:6] in seg.text]


def _assert_inert(app: WrenApp, shown: str) -> None:
    """No raw control character reached the terminal, and the payload carries no link or action."""
    for strip in screen_strips(app):
        for seg in strip:
            assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u202c" for c in seg.text), seg
    segments = _segments_showing(app, shown)
    assert segments, f"{shown!r} is not on screen"
    for seg in segments:
        style = seg.style
        assert style is None or (not style.link and not style.meta.get("@click")), seg


@pytest.mark.parametrize("name", list(PAYLOADS))
async def test_conversation_shows_hostile_text_as_written(tmp_path: Path, name: str) -> None:
    payload, shown = PAYLOADS[name]
    app = WrenApp(folder=tmp_path, session=_journal(tmp_path, payload), clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for_text(pilot, f"user says {shown}")
        text = screen_text(app)
        assert f"assistant says {shown}" in text
        assert f"error says {shown}" in text
        assert f"tool{shown}" in text  # the tool timings row
        _assert_inert(app, shown)
        # The message body is drawn in the plain body style: "[bold]" made nothing bold.
        for seg in _segments_showing(app, "says [bold]loud"):
            assert seg.style is None or not seg.style.bold


@pytest.mark.parametrize("name", list(PAYLOADS))
async def test_fork_picker_and_raw_view_show_hostile_text_as_written(tmp_path: Path, name: str) -> None:
    payload, shown = PAYLOADS[name]
    app = WrenApp(folder=tmp_path, session=_journal(tmp_path, payload), clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("p")
        await wait_for_text(pilot, f"user: user says {shown}"[:40])
        _assert_inert(app, shown)
        await pilot.press("escape", "r")
        await wait_for_text(pilot, "as written")
        # JSON escapes control characters itself; what it leaves (bidi marks) is made visible.
        assert visible(json.dumps(f"last {payload}", ensure_ascii=False)) in screen_text(app)
        for strip in screen_strips(app):
            assert "\x1b" not in strip.text


async def test_clicking_click_markup_does_not_run_the_action(tmp_path: Path) -> None:
    payload = "[@click=app.quit]press to quit[/]"
    app = WrenApp(folder=tmp_path, session=_journal(tmp_path, payload), clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for_text(pilot, "user says [@click=app.quit]")
        row = next(y for y, line in enumerate(screen_text(app).splitlines()) if "user says [@click" in line)
        column = screen_text(app).splitlines()[row].index("press to quit")
        await pilot.click(offset=(column + 2, row))
        await pilot.pause()
        assert app.is_running
        assert isinstance(app.screen, SessionScreen)


async def test_browser_shows_a_hostile_file_name_as_written(tmp_path: Path) -> None:
    write_journal(tmp_path / "evil\x1b[2J\u202ename.jsonl", [user("hi")])
    app = WrenApp(folder=tmp_path, clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for_text(pilot, "evil␛[2J<U+202E>name")
        for strip in screen_strips(app):
            assert "\x1b" not in strip.text and "\u202e" not in strip.text
        await wait_for(pilot, lambda: app.is_running, "the app to keep running")


@pytest.mark.parametrize("name", ["clear screen", "OSC 52 clipboard write", "bidi override", "click action markup"])
async def test_the_waterfall_and_the_side_by_side_show_hostile_text_as_written(tmp_path: Path, name: str) -> None:
    from tests.tui.family import write_fork
    from tests.tui.journals import assistant as reply
    from wren_tui.journal.events import ToolEnd

    payload, shown = PAYLOADS[name]
    parent = _journal(tmp_path, payload)
    call = ToolCall("call_7", f"tool{payload}", f'{{"arg": "{payload.encode("unicode_escape").decode()}"}}')
    fork = write_fork(
        tmp_path / "s-20250301-120000-frk9.jsonl",
        parent,
        2,
        [
            reply(f"fork says {payload}", call),
            ToolStart(id="call_7", name=f"tool{payload}", read_only=True),
            ToolEnd(id="call_7", ok=True, elapsed_ms=4),
        ],
    )
    app = WrenApp(folder=tmp_path, session=fork, clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("w")
        await wait_for_text(pilot, "Tool calls on the session's time axis")
        await wait_for_text(pilot, f"tool{shown}"[:12])
        _assert_inert(app, shown[:12] if len(shown) > 12 else shown)
        await pilot.press("d")
        await wait_for_text(pilot, "── seq 1-2 shared ──")
        await wait_for_text(pilot, f"tool{shown}(")  # the fork's call, beside nothing in the parent
        _assert_inert(app, shown)
