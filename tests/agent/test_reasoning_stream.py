"""A model's reasoning through the loop: streamed as reasoning deltas and shown apart, kept with its reply, redacted."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.listed_model import ListedModel
from tests.agent.openai_server import OpenAIServer, Stream, finish_chunk, sse, text_chunk
from tests.agent.test_terminal import assert_shows_every_sequence, pieces
from tests.agent.tty import Tty, assert_inert, hostile_lines
from wren_tui.agent.errors import Ended
from wren_tui.agent.loop import Printer
from wren_tui.agent.models import MODELS
from wren_tui.agent.models.base import FinishPart, Gateway, ModelSetup, ReasoningPart, TextPart, ToolCallPart
from wren_tui.agent.session import Settings, run_task
from wren_tui.journal.events import Delta, Message, Reasoning

SECRET = "sk-proj-" + "Q7w" * 8


def test_reasoning_is_printed_under_a_thinking_line_each_line_marked_then_the_reply_on_its_own_line() -> None:
    out = io.StringIO()
    printer = Printer(out)
    printer.reasoning("First, look.\nThen")
    printer.reasoning(" act.\n\n")
    printer.reasoning("\x1b[2JDone.\n")
    printer.text("The answer.")
    printer.line("")
    assert out.getvalue() == "[thinking]\n┊ First, look.\n┊ Then act.\n\n┊ ␛[2JDone.\nThe answer.\n\n"


def test_text_already_on_the_line_is_ended_before_the_reasoning_starts() -> None:
    out = io.StringIO()
    printer = Printer(out)
    printer.text("Let me think")
    printer.reasoning("about it")
    printer.text("Done.")
    assert out.getvalue() == "Let me think\n[thinking]\n┊ about it\nDone."


async def test_reasoning_streams_as_reasoning_deltas_and_is_kept_with_its_reply_redacted(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    model = ListedModel(
        [
            [
                ReasoningPart("The key is ", kind="thinking"),
                ReasoningPart(f"{SECRET}; I must not print it.", kind="thinking"),
                ReasoningPart(block=0, kind="thinking", signature="EoQDsig"),
                ReasoningPart(block=1, kind="redacted_thinking", data="EtgBsealed"),
                TextPart("I will list the files."),
                ToolCallPart(2, "c1", "list_dir", "{}"),
                FinishPart("tool_use"),
            ],
            [TextPart("Two files."), FinishPart("end_turn")],
        ]
    )

    def listed(setup: ModelSetup) -> Gateway:
        return model

    monkeypatch.setitem(MODELS, "listed", listed)
    out = io.StringIO()
    settings = Settings(workspace=workspace, folder=journals_of(workspace), printer=Printer(out), model="listed")
    assert await run_task(settings, "what is here?", None) == Ended()

    journal = only_journal(journals_of(workspace))
    assert SECRET.encode() not in journal.read_bytes()
    events = events_of(journal)
    deltas = [e for e in events if isinstance(e, Delta)]
    # The reasoning went out whole when the text began: nothing held back was lost.
    assert "".join(d.text for d in deltas if d.reasoning) == "The key is [redacted]; I must not print it."
    said = [e.message for e in events if isinstance(e, Message) and e.message.role == "assistant"]
    assert said[0].reasoning == [
        Reasoning("The key is [redacted]; I must not print it.", "thinking", signature="EoQDsig"),
        Reasoning(kind="redacted_thinking", data="EtgBsealed"),
    ]
    assert said[0].content == "I will list the files." and said[1].reasoning is None
    # What the next request carried: the reasoning as the journal holds it.
    assert model.requests[1][0][1].reasoning == said[0].reasoning
    shown = out.getvalue()
    assert "[thinking]\n┊ The key is [redacted]; I must not print it.\n" in shown
    assert "[thinking: encrypted by the server; kept to send back, not shown]\nI will list the files." in shown
    assert SECRET not in shown


async def test_reasoning_that_holds_every_terminal_sequence_is_shown_and_never_obeyed(workspace: Path) -> None:
    # Cut after every ESC and CR and every 5 characters, so no sequence arrives in one fragment.
    chunks = [{"choices": [{"index": 0, "delta": {"reasoning_content": p}}]} for p in pieces(hostile_lines())]
    data = sse(*chunks, text_chunk("Nothing to do."), finish_chunk("stop"))
    async with OpenAIServer(lambda body, headers: Stream([data])) as srv:

        def session() -> tuple[int, bytes]:
            tty = Tty(["run", "--model", "openai", "look"], workspace, {"WREN_BASE_URL": srv.base_url})
            try:
                return tty.finish(), bytes(tty.data)
            finally:
                tty.kill()

        code, everything = await asyncio.to_thread(session)
    assert code == 0, everything.decode(errors="replace")
    text = assert_inert(everything, "wren run (the model's reasoning)")
    assert_shows_every_sequence(text, "wren run (the model's reasoning)")
    assert "[thinking]\n┊ " in text and "\nNothing to do." in text
