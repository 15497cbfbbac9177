"""A model's reasoning in the viewer: folded above its reply, streamed live apart from the reply, found by search."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import screen_text, session_app, wait_for, wait_for_text
from tests.tui.journals import SESSION, story, user, write_journal
from wren_tui.journal.events import ChatMessage, Delta, Message, Reasoning
from wren_tui.journal.writer import JournalWriter
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine

THOUGHT = "\n".join(f"step {n:02d} of the plan: look before leaping" for n in range(30))


def _app(path: Path) -> WrenApp:
    return session_app(path, watch_mode="poll")


def thoughtful(content: str, *pieces: Reasoning) -> Message:
    return Message(message=ChatMessage(role="assistant", content=content, reasoning=list(pieces)))


async def test_reasoning_shows_folded_above_its_reply_and_enter_unfolds_it(tmp_path: Path) -> None:
    events = [
        user("plan it"),
        thoughtful("The plan is ready.", Reasoning(THOUGHT, "thinking", signature="EoQDsig")),
        thoughtful("Sealed.", Reasoning(kind="redacted_thinking", data="EtgBsealed")),
    ]
    app = _app(write_journal(tmp_path / f"{SESSION}.jsonl", events))
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for_text(pilot, "The plan is ready.")
        text = screen_text(app)
        assert "thinking: step 00 of the plan" in text and "step 01 of the plan" in text
        assert "step 02 of the plan" not in text and "28 more lines · Enter to expand" in text
        assert text.index("step 00") < text.index("The plan is ready.")
        assert "thinking: encrypted by the server (kept to send back, not shown)" in text
        assert "EtgBsealed" not in text and "EoQDsig" not in text
        await pilot.press("up")
        await wait_for(pilot, lambda: app.screen.query_one(ConversationView).cursor == 1, "the thoughtful reply")
        await pilot.press("enter")
        await wait_for_text(pilot, "step 21 of the plan")
        for _ in range(10):
            if "step 29 of the plan" in screen_text(app):
                break
            await pilot.press("pagedown")
        assert "step 29 of the plan" in screen_text(app) and "Enter to expand" not in screen_text(app)


async def test_search_finds_words_that_are_only_in_the_reasoning(tmp_path: Path) -> None:
    events = [user("plan it"), thoughtful("Done.", Reasoning(THOUGHT, "reasoning_content")), user("thanks")]
    app = _app(write_journal(tmp_path / f"{SESSION}.jsonl", events))
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for_text(pilot, "thanks")
        await pilot.press("/", *"step 17 of the plan", "enter")
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: "match 1 of 1" in str(status.render()), "the match in the reasoning")
        await wait_for_text(pilot, "step 17 of the plan")
        assert app.screen.query_one(ConversationView).cursor == 1


async def test_reasoning_streams_live_then_the_reply_streams_under_how_long_the_model_thought(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        with JournalWriter.open(path, fsync="none") as writer:
            writer.append(Delta(text="Considering the failing test first. ", reasoning=True))
            writer.append(Delta(text="Then the code it calls.", reasoning=True))
            await wait_for_text(pilot, "Then the code it calls.")
            assert "assistant · thinking…" in screen_text(app)
            writer.append(Delta(text="The failing case is"))
            await wait_for_text(pilot, "assistant · writing…")
            text = screen_text(app)
            assert "(thought first: 59 characters, shown with the reply)" in text
            assert "The failing case is" in text and "Then the code it calls." not in text
            writer.append(thoughtful("The failing case is test_mean_of_empty.", Reasoning("Considering…", "thinking")))
            await wait_for_text(pilot, "test_mean_of_empty.")
            assert "writing…" not in screen_text(app) and "thinking: Considering…" in screen_text(app)
