"""Long texts in the viewer: a multi-megabyte message never freezes it, long texts fold, partial replies show."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import screen_text, session_app, wait_for, wait_for_text
from tests.tui.journals import SESSION, assistant, finished_story, story, tool_result, user, write_journal
from wren_tui.journal.events import Delta, Error, KnownEvent, RunStart, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.writer import JournalWriter
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine

OPENING = "The start of a very long message"


def _app(path: Path) -> WrenApp:
    return session_app(path, watch_mode="poll")


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def _huge(folder: Path, megabytes: int) -> Path:
    """The sample session, then one user message of `megabytes` MB on a single line (as QA made it)."""
    body = f"{OPENING} " + "B" * (megabytes << 20)
    return write_journal(folder / f"{SESSION}.jsonl", [*finished_story(), user(body)])


@pytest.fixture(scope="module", params=[8, 50], ids=["8 MB", "50 MB"])
def huge(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _huge(tmp_path_factory.mktemp(f"huge{request.param}"), request.param)


async def _answers_help_and_quit(pilot: Pilot[object], app: WrenApp) -> None:
    await pilot.press("question_mark")
    await wait_for(pilot, lambda: bool(app.screen.query("HelpPanel")), "the help panel")
    await pilot.press("question_mark")
    await wait_for(pilot, lambda: not app.screen.query("HelpPanel"), "the help panel to close")
    await pilot.press("q")
    await wait_for(pilot, lambda: not app.is_running, "the app to quit")


async def test_a_journal_ending_in_a_huge_message_paints_it_and_keys_work(huge: Path) -> None:
    events = len(finished_story()) + 1
    app = _app(huge)
    async with app.run_test(size=(100, 30)) as pilot:
        # Keys are answered while the journal is still being read.
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: bool(app.screen.query("HelpPanel")), "the help panel while indexing")
        await pilot.press("question_mark")
        await wait_for_text(pilot, "more characters · Enter to expand", timeout=60)
        await wait_for(pilot, lambda: f"{events} events" in _status(app), "the whole journal in the status line")
        assert _status(app).startswith(" done ")
        # Following shows the end of the last item; selecting it shows its start.
        await pilot.press("up", "down")
        await wait_for_text(pilot, OPENING)
        assert "BBBBBBBBBB" in screen_text(app)
        await _answers_help_and_quit(pilot, app)


async def test_a_huge_message_appended_live_is_read_without_freezing(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_text(pilot, "run the tests, find the failing case")
        with JournalWriter.open(path, fsync="none") as writer:
            writer.append(assistant(f"{OPENING} " + "B" * (20 << 20)))
            writer.append(user("after the long reply"))
            await wait_for_text(pilot, "after the long reply", timeout=60)
            assert OPENING in screen_text(app) or "more characters" in screen_text(app)
            await pilot.press("home")
            await wait_for_text(pilot, "run the tests, find the failing case")
            await _answers_help_and_quit(pilot, app)


async def test_a_huge_torn_last_line_does_not_hold_the_first_frame(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    with open(path, "ab") as out:
        out.write(b'{"seq":27,"ts":"2025-03-01T09:31:00.000Z","type":"message","message":{"role":"user","content":"')
        out.write(b"B" * (30 << 20))
    app = _app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, "Fixed: mean([]) now returns 0.0", timeout=60)
        await wait_for(pilot, lambda: "stopped at line 27" in _status(app), "the torn tail in the status line")
        assert "26 events" in _status(app)
        await _answers_help_and_quit(pilot, app)


async def test_a_long_user_message_folds_until_enter_expands_it(tmp_path: Path) -> None:
    body = "\n".join(f"line {n} of the request" for n in range(1, 101))
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user(body), assistant("ok")])
    app = _app(path)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.press("home")
        await wait_for_text(pilot, "… 70 more lines · Enter to expand")
        assert "line 30 of the request" in screen_text(app)
        assert "line 31 of the request" not in screen_text(app)
        await pilot.press("enter")
        await wait_for_text(pilot, "line 31 of the request")
        assert "more lines" not in screen_text(app)


async def test_a_16000_character_tool_output_line_folds_to_a_few_rows(tmp_path: Path) -> None:
    words = " ".join(f"w{n:05d}" for n in range(2667))[:16_000]
    last = words.split()[-2]
    call = ToolCall("call_1", "run_command", '{"command": "cat big.txt"}')
    events: list[KnownEvent] = [
        user("show it"),
        assistant("", call),
        ToolStart(id="call_1", name="run_command", read_only=False, approval="approved"),
        ToolEnd(id="call_1", ok=True, elapsed_ms=4, chars=len(words)),
        tool_result("call_1", words),
        assistant("done"),
    ]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    app = _app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("home", "down", "down", "down", "down")
        await wait_for_text(pilot, "more characters · Enter to expand")
        rows = [line for line in screen_text(app).splitlines() if line.lstrip().startswith("w0")]
        assert len(rows) == 5
        await pilot.press("enter")
        await wait_for_text(pilot, "w00100")
        for _ in range(40):
            if last in screen_text(app):
                break
            await pilot.press("pagedown")
        assert last in screen_text(app)
        assert "Enter to fold" in screen_text(app)


async def test_a_reply_streaming_in_shows_its_end_and_what_came_before(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        with JournalWriter.open(path, fsync="none") as writer:
            for n in range(400):
                writer.append(Delta(text=f"sentence {n:04d} of a long reply. " * 40))
            writer.append(Delta(text="THE LATEST WORDS"))
            await wait_for_text(pilot, "THE LATEST WORDS", timeout=60)
            text = screen_text(app)
            assert "assistant · writing…" in text
            assert "characters before this" in text
            assert "sentence 0000" not in text


async def test_a_reply_a_retry_threw_away_is_shown_as_a_partial_reply_and_found_by_search(tmp_path: Path) -> None:
    events: list[KnownEvent] = [
        user("what is wrong?"),
        Delta(text="The failing case is test_mean_of_emp"),
        Delta(text="ty, which divides by zero"),
        Error(message="the stream was cut; retrying in 1.0 s", retryable=True, attempt=1),
        assistant("It is test_mean_of_empty."),
    ]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    app = _app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, "partial reply, discarded")
        assert "The failing case is test_mean_of_empty, which divides by zero" in screen_text(app)
        assert "#2–#3" in screen_text(app)
        # Only the discarded text holds this, cut across its two deltas.
        await pilot.press("/", *"mean_of_empty, which", "enter")
        view = app.screen.query_one(ConversationView)
        await wait_for(pilot, lambda: "match 1 of 1" in _status(app), "the match in the partial reply")
        assert view.cursor == 1
        await pilot.press("r")
        await wait_for_text(pilot, "Events 2–3 (delta: a partial reply) as written")
        assert '"type":"delta","text":"ty, which divides by' in screen_text(app)
        assert '"text": "ty, which divides by zero",' in screen_text(app)


async def test_a_reply_cut_off_by_a_crash_is_shown_as_partial_after_the_next_run_starts(tmp_path: Path) -> None:
    events: list[KnownEvent] = [
        user("what is wrong?"),
        Delta(text="Half a reply when the power went"),
        RunStart(pid=1, cwd="/w", model="scripted", version="0.1.0", resumed=True),
        user("again please"),
    ]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    app = _app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, "partial reply, discarded")
        assert "Half a reply when the power went" in screen_text(app)
        assert "writing…" not in screen_text(app)
        await pilot.press("home", "down", "r")
        await wait_for_text(pilot, "Event 2 (delta: a partial reply) as written")


async def test_a_stream_whose_writer_is_gone_is_said_to_be_cut_off(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("hi"), Delta(text="Half a reply")])
    app = _app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, "Half a reply")
        assert "cut off: its writer is gone" in screen_text(app)
        assert "writing…" not in screen_text(app)
