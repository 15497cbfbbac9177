"""What the viewer shows of a long session: a compaction as a divider whose summary opens, the text Wren put into
messages from files (project instructions, `@` references) shown as such and folded, and the context gauge."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_wren
from tests.tui.conftest import screen_text, session_app, wait_for, wait_for_text
from tests.tui.journals import SESSION, assistant, user, write_journal
from wren_tui.journal.events import INSTRUCTIONS_MARK, ChatMessage, Compaction, Message, Usage
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine

SUMMARY = "\n".join(f"Request {n}: 'read part {n}'" for n in range(1, 9))
INSTRUCTIONS = INSTRUCTIONS_MARK + "\n" + "\n".join(f"rule {n}: keep it short" for n in range(12))
REFERENCED = (
    "what does @a.txt say?\n\n--- @a.txt ---\n"
    + "".join(f"alpha line {n}\n" for n in range(20))
    + "--- end of @a.txt ---"
)


def long_session(tmp_path: Path) -> Path:
    events = [
        Message(message=ChatMessage(role="user", content=INSTRUCTIONS)),
        user("read part 1"),
        assistant("Part 1 read."),
        user("read part 2"),
        assistant("Part 2 read."),
        Compaction(
            summary=SUMMARY, first_seq=1, last_seq=5, replaced=5, keep_seq=1, tokens_before=2412, tokens_after=704
        ),
        user(REFERENCED),
        assistant("It says alpha."),
        Usage(input_tokens=900, output_tokens=12, model="scripted", estimated=874, window=3000),
    ]
    return write_journal(tmp_path / f"{SESSION}.jsonl", events)


async def test_a_compaction_is_a_divider_whose_summary_is_folded_until_opened(tmp_path: Path) -> None:
    app = session_app(long_session(tmp_path), watch_mode="poll")
    async with app.run_test(size=(110, 60)) as pilot:
        await wait_for_text(pilot, "It says alpha.")
        text = screen_text(app)
        assert "── compacted 5 messages, ~2,412 tokens → ~704 #6" in text
        assert "summary: Request 1: 'read part 1'" in text and "Request 2: 'read part 2'" not in text
        assert "7 more lines · Enter to expand" in text
        conversation = app.screen.query_one(ConversationView)
        while conversation.cursor != 5:
            await pilot.press("up" if conversation.cursor > 5 else "down")
        await pilot.press("enter")
        await wait_for_text(pilot, "Request 8: 'read part 8'")
        # The messages it replaced stay in view: the viewer shows the journal, not the model's messages.
        assert "Part 1 read." in screen_text(app)


async def test_project_instructions_and_referenced_files_are_shown_as_given_and_folded(tmp_path: Path) -> None:
    app = session_app(long_session(tmp_path), watch_mode="poll")
    async with app.run_test(size=(110, 60)) as pilot:
        await wait_for_text(pilot, "It says alpha.")
        text = screen_text(app)
        assert "▌ project instructions (given by Wren)  #1" in text
        assert "[project instructions]" in text and "rule 0: keep it short" not in text
        # What was typed is shown as typed; the file it gave is one folded line naming it.
        assert "what does @a.txt say?" in text and "given with it: @a.txt" in text
        assert "alpha line 0" not in text
        conversation = app.screen.query_one(ConversationView)
        while conversation.cursor != 6:
            await pilot.press("up" if conversation.cursor > 6 else "down")
        await pilot.press("enter")
        await wait_for_text(pilot, "alpha line 0")
        for _ in range(10):
            if "--- end of @a.txt ---" in screen_text(app):
                break
            await pilot.press("pagedown")
        assert "alpha line 19" in screen_text(app) and "--- end of @a.txt ---" in screen_text(app)


async def test_the_status_line_shows_the_context_gauge_of_the_last_usage(tmp_path: Path) -> None:
    app = session_app(long_session(tmp_path), watch_mode="poll")
    async with app.run_test(size=(140, 40)) as pilot:
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: "context 874 / 3,000 (29%)" in str(status.render()), "the gauge")


async def test_the_fork_picker_marks_the_first_point_after_a_compaction_as_wren_fork_does(tmp_path: Path) -> None:
    journal = long_session(tmp_path)
    listed = run_wren(["fork", SESSION, "--dir", str(journal.parent)], cwd=tmp_path).stdout.splitlines()
    (marked,) = [line.strip() for line in listed if "after the compaction" in line]
    assert marked.startswith("7  user:") and marked.endswith("· after the compaction at seq 6")
    app = session_app(journal, watch_mode="poll")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, "It says alpha.")
        await pilot.press("p")
        await wait_for_text(pilot, "after the compaction at seq 6")
        rows = [row.strip() for row in screen_text(app).splitlines() if "after the compaction" in row]
        assert len(rows) == 1 and "7  after the compaction at seq 6 ·  user: what" in rows[0]
