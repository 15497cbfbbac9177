"""`wren run` against a real local server sending what a broken or hostile model server can send.

Surrogates (an emoji's UTF-16 pair cut between two events, or a lone half) must not kill the run:
the pair is joined, a lone half becomes U+FFFD, the journal stays valid UTF-8. A reply larger than
WREN_MAX_REPLY (or one that never ends) stops the turn with an `error` event and run_end `error`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.hostile_streams import (
    anthropic_call,
    anthropic_charless,
    anthropic_endless,
    anthropic_text,
    env_for,
    openai_call,
    openai_charless,
    openai_endless,
    openai_text,
)
from tests.agent.openai_server import OpenAIServer, Stream
from tests.agent.test_recorded_servers import wren
from tests.conftest import run_wren
from wren_tui.agent.loop import MAX_REPLY
from wren_tui.journal.events import Delta, Error, Message, RunEnd, ToolEnd, ToolStart

MODELS = ["openai", "anthropic"]


def _text(model: str, pieces: list[str]) -> bytes:
    return openai_text(pieces) if model == "openai" else anthropic_text(pieces)


def _reply(journal: Path) -> str:
    events = events_of(journal)
    return [e for e in events if isinstance(e, Message) and e.message.role == "assistant"][-1].message.content


def _assert_valid_utf8_journal(journal: Path) -> None:
    data = journal.read_bytes()
    data.decode("utf-8")  # strict: raises on anything UTF-8 cannot hold
    for line in data.splitlines():
        json.loads(line)


async def _run(
    workspace: Path, model: str, stream: Stream, extra: dict[str, str] | None = None
) -> tuple[int, str, str]:
    async with OpenAIServer(lambda body, headers: stream) as srv:
        env = env_for(model, srv.base_url) | (extra or {})
        return await wren(["run", "--dir", "../journals", "--model", model, "say hi"], workspace, env)


@pytest.mark.parametrize("model", MODELS)
async def test_an_emoji_whose_surrogate_pair_is_cut_between_two_events_is_kept_whole(
    workspace: Path, model: str
) -> None:
    code, out, err = await _run(workspace, model, Stream([_text(model, ["smile \ud83d", "\ude00 done"])]))
    assert (code, err) == (0, "")
    journal = only_journal(journals_of(workspace))
    _assert_valid_utf8_journal(journal)
    assert _reply(journal) == "smile \U0001f600 done"
    events = events_of(journal)
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "done"
    assert "".join(e.text for e in events if isinstance(e, Delta)) in ("", "smile ", "smile \U0001f600 done")
    assert "smile \U0001f600 done" in out  # printed whole, not as two halves


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    ("pieces", "kept"),
    [
        (["lone \ud83d here"], "lone \ufffd here"),
        (["low \ude00 first"], "low \ufffd first"),
        (["ends with a half \ud83d"], "ends with a half \ufffd"),
        (["two highs \ud83d", "\ud83d then text"], "two highs \ufffd\ufffd then text"),
    ],
)
async def test_a_lone_surrogate_in_a_reply_becomes_a_replacement_character_and_the_run_ends_done(
    workspace: Path, model: str, pieces: list[str], kept: str
) -> None:
    code, _, err = await _run(workspace, model, Stream([_text(model, pieces)]))
    assert (code, err) == (0, "")
    journal = only_journal(journals_of(workspace))
    _assert_valid_utf8_journal(journal)
    assert _reply(journal) == kept
    deltas = "".join(e.text for e in events_of(journal) if isinstance(e, Delta))
    assert kept.startswith(deltas)


async def test_a_lone_surrogate_in_reasoning_and_in_a_tool_calls_arguments_is_journaled_as_valid_utf8(
    workspace: Path,
) -> None:
    answers = [
        Stream([openai_call("c1", "list_dir", ['{"path": "', ".\ud83d", '"}'])]),
        Stream([openai_text(["all \ud83d done"], reasoning=["think \udc00 hard"])]),
    ]
    async with OpenAIServer(lambda body, headers: answers.pop(0)) as srv:
        code, _, err = await wren(
            ["run", "--dir", "../journals", "--yes", "look"], workspace, env_for("openai", srv.base_url)
        )
    assert code == 0, err
    journal = only_journal(journals_of(workspace))
    _assert_valid_utf8_journal(journal)
    events = events_of(journal)
    call = next(e.message.tool_calls for e in events if isinstance(e, Message) and e.message.tool_calls)
    assert call is not None and json.loads(call[0].args) == {"path": ".\ufffd"}
    assert any(isinstance(e, ToolEnd) for e in events)
    last = [e for e in events if isinstance(e, Message)][-1].message
    assert last.content == "all \ufffd done"
    assert last.reasoning is not None and last.reasoning[0].text == "think \ufffd hard"


# --- a reply without bounds -------------------------------------------------------------------------


def _assert_stopped_by_the_limit(workspace: Path, code: int, err: str, limit: int) -> None:
    assert code == 1, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"passed {limit:,} characters" in err and "WREN_MAX_REPLY" in err
    journal = only_journal(journals_of(workspace))
    events = events_of(journal)
    errors = [e for e in events if isinstance(e, Error)]
    assert errors and "WREN_MAX_REPLY" in errors[-1].message
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "error"
    streamed = sum(len(e.text) for e in events if isinstance(e, Delta))
    assert streamed <= limit
    # The journal holds what streamed and a little more: it did not grow with the stream.
    assert journal.stat().st_size < 2 * limit + 20_000


@pytest.mark.parametrize("model", MODELS)
async def test_a_reply_larger_than_the_limit_stops_the_turn_with_an_error_event(workspace: Path, model: str) -> None:
    limit = 40_000
    pieces = ["0123456789" * 100] * 200  # 200,000 characters
    code, _, err = await _run(workspace, model, Stream([_text(model, pieces)]), {"WREN_MAX_REPLY": str(limit)})
    _assert_stopped_by_the_limit(workspace, code, err, limit)


@pytest.mark.parametrize(("model", "reasoning"), [("openai", False), ("openai", True), ("anthropic", False)])
async def test_an_endless_stream_is_cut_at_the_limit(workspace: Path, model: str, reasoning: bool) -> None:
    limit = 30_000
    piece = "endless " * 50
    pieces = openai_endless(piece, reasoning=reasoning) if model == "openai" else anthropic_endless(piece)
    code, _, err = await _run(workspace, model, Stream(pieces), {"WREN_MAX_REPLY": str(limit)})
    _assert_stopped_by_the_limit(workspace, code, err, limit)


CHARLESS = ["empty", "role-only", "keepalive"]


@pytest.mark.parametrize("kind", CHARLESS)
@pytest.mark.parametrize("model", MODELS)
async def test_an_endless_stream_that_carries_no_character_is_cut_at_the_limit(
    workspace: Path, model: str, kind: str
) -> None:
    """Empty deltas, role-only deltas (Anthropic: pings) and `: keepalive` comments each count toward the cap."""
    limit = 20_000
    pieces = openai_charless(kind) if model == "openai" else anthropic_charless(kind)
    code, _, err = await _run(workspace, model, Stream(pieces), {"WREN_MAX_REPLY": str(limit)})
    _assert_stopped_by_the_limit(workspace, code, err, limit)


@pytest.mark.parametrize("model", MODELS)
async def test_an_endless_stream_of_keepalives_is_cut_when_no_character_came_for_ten_read_timeouts(
    workspace: Path, model: str
) -> None:
    """Under the default cap (16 million), keep-alives that come fast are cut after ten times WREN_TIMEOUT."""
    pieces = openai_charless("keepalive") if model == "openai" else anthropic_charless("keepalive")
    code, _, err = await _run(workspace, model, Stream(pieces), {"WREN_TIMEOUT": "0.5"})
    assert code == 1, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "sent no character of a reply for 5 s, only keep-alives or empty events" in err
    assert "(it waits 10 times WREN_TIMEOUT)" in err
    events = events_of(only_journal(journals_of(workspace)))
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "error"


@pytest.mark.parametrize("model", MODELS)
async def test_a_tool_name_of_four_megabytes_counts_toward_the_limit(workspace: Path, model: str) -> None:
    limit = 100_000
    name = "n" * (4 << 20)
    stream = openai_call("c1", name, ["{}"]) if model == "openai" else anthropic_call("c1", name, "{}")
    code, _, err = await _run(workspace, model, Stream([stream]), {"WREN_MAX_REPLY": str(limit)})
    _assert_stopped_by_the_limit(workspace, code, err, limit)
    assert not any(isinstance(e, ToolStart) for e in events_of(only_journal(journals_of(workspace))))


def test_the_default_limit_is_sixteen_million_characters_and_a_bad_setting_is_one_sentence(workspace: Path) -> None:
    assert MAX_REPLY == 16_000_000
    proc = run_wren(["run", "--dir", "../journals", "hi"], cwd=workspace, env={"WREN_MAX_REPLY": "lots"})
    assert proc.returncode == 2
    assert proc.stderr.strip() == "wren: WREN_MAX_REPLY='lots' is not a positive whole number of characters"
    assert not (journals_of(workspace)).exists() or not list(journals_of(workspace).iterdir())
