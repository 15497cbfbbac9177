"""Each agent's real session lines, translated into Wren's events: the conversation, the calls' timings and
outcomes, the usage counted once, every line kind of the current clients mapped or left out on purpose, and
what is unknown or damaged counted or reported, never fatal unless it is not JSON."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.foreign.sessions import EXTERNAL, fixture
from wren_tui.foreign import FORMATS, detect
from wren_tui.foreign.base import Skipped, Translated
from wren_tui.foreign.reader import scan
from wren_tui.journal.events import Error, Event, Message, ToolEnd, UnknownEvent, Usage
from wren_tui.journal.verdict import ReadVerdict, Stop


def read(path: Path) -> tuple[list[Event], ReadVerdict]:
    events, verdict, _skipped = read_counted(path)
    return events, verdict


def read_counted(path: Path) -> tuple[list[Event], ReadVerdict, Skipped]:
    """The events shown, the verdict, and the lines left out by kind."""
    fmt = detect(path)
    assert fmt is not None, f"{path} is not recognised"
    events: list[Event] = []
    skipped = Skipped()

    def take(_lineno: int, line: Translated, _data: bytes) -> None:
        events.extend(e for i, e in enumerate(line.events) if i not in line.hidden)

    fd = os.open(path, os.O_RDONLY)
    try:
        return events, scan(fd, fmt, take, skipped=skipped), skipped
    finally:
        os.close(fd)


def messages(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.message.role, e.message.content) for e in events if isinstance(e, Message)]


def tokens(events: list[Event]) -> int:
    return sum(e.input_tokens + e.output_tokens for e in events if isinstance(e, Usage))


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
@pytest.mark.parametrize("name", ["simple", "tool-error", "multi-turn", "killed"])
def test_every_line_kind_the_current_clients_write_is_translated_or_left_out_on_purpose(agent: str, name: str) -> None:
    events, verdict, skipped = read_counted(fixture(agent, name))
    assert verdict.stop is None and verdict.lines == len(fixture(agent, name).read_bytes().splitlines())
    assert skipped.unknown == {} and skipped.malformed == {}
    assert all(e.seq >= 1 and e.ts for e in events)  # seq: the line's number, ts: the line's own time


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_a_tool_call_and_its_result_become_the_messages_and_the_timing_wren_journals(agent: str) -> None:
    events, _ = read(fixture(agent, "simple"))
    said = messages(events)
    assert said[0] == ("user", "List the files in this folder and tell me what they are.")
    assert said[-1] == ("assistant", "The folder holds two files: hello.py (a tiny script) and notes.txt.")
    asked = next(e for e in events if isinstance(e, Message) and e.message.tool_calls)
    call = asked.message.tool_calls[0]  # type: ignore[index]
    assert call.args.replace(" ", "").startswith(('{"command":"ls-la"', '{"cmd":"ls-la"'))
    end = next(e for e in events if isinstance(e, ToolEnd))
    result = next(e for e in events if isinstance(e, Message) and e.message.role == "tool")
    assert end.id == call.id == result.message.tool_call_id and end.ok is True
    assert end.elapsed_ms is not None and 0 <= end.elapsed_ms < 1000 and end.chars == len(result.message.content)
    assert "hello.py" in result.message.content and "notes.txt" in result.message.content
    assert end.seq == result.seq > asked.seq  # the result's line


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_a_failing_tool_is_failed_from_the_record_exit_code_is_error_or_is_error(agent: str) -> None:
    events, _ = read(fixture(agent, "tool-error"))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.ok is False
    result = next(e for e in events if isinstance(e, Message) and e.message.role == "tool")
    assert "No such file or directory" in result.message.content


def test_claude_codes_usage_repeated_on_each_line_of_a_reply_is_counted_once() -> None:
    # The total is what the client's own cost line says: 3000 in and 84 out for two replies of two runs... per run.
    events, _ = read(fixture("claude", "simple"))
    assert tokens(events) == 3000 + 84
    events, _ = read(fixture("claude", "multi-turn"))
    assert tokens(events) == 6000 + 168
    # Older clients repeat a growing usage on each line of a reply: each line counts what it adds.
    events, _ = read(EXTERNAL / "claude-code" / "agentlogs_crud.jsonl")
    outputs = [e.output_tokens for e in events if isinstance(e, Usage)]
    assert outputs[:2] == [6, 270]  # the reply's text line, then its tool call line (276 in all)


def test_codex_usage_comes_from_one_record_per_response_or_once_per_changed_total() -> None:
    events, _ = read(fixture("codex", "multi-turn"))
    assert tokens(events) == 4 * (1200 + 40)  # four responses; the token_count lines repeat them
    events, _ = read(EXTERNAL / "codex" / "agentlogs_crud_rollout.jsonl")
    # Older rollouts: each total is written twice; the last one says 47257 in, 300 out.
    assert sum(e.input_tokens for e in events if isinstance(e, Usage)) == 47257
    assert sum(e.output_tokens for e in events if isinstance(e, Usage)) == 300


def test_what_a_harness_writes_for_the_model_is_context_not_a_persons_words() -> None:
    events, _ = read(fixture("codex", "simple"))
    users = [text for role, text in messages(events) if role == "user"]
    assert users == ["List the files in this folder and tell me what they are."]
    context = [e for e in events if isinstance(e, UnknownEvent) and e.type == "context"]
    assert any("<environment_context>" in str(e.fields["text"]) for e in context)


def test_thinking_and_reasoning_are_notes_of_their_own_and_encrypted_reasoning_is_never_shown() -> None:
    for path in (
        EXTERNAL / "claude-code" / "agentlogs_subagent.jsonl",
        EXTERNAL / "pi" / "agentlogs_crud.jsonl",
        EXTERNAL / "codex" / "claude-code-log_rollout_full_schema.jsonl",
    ):
        events, _ = read(path)
        thoughts = [e for e in events if isinstance(e, UnknownEvent) and e.type == "thinking"]
        assert thoughts and all(isinstance(t.fields["text"], str) and t.fields["text"] for t in thoughts)
    events, _ = read(EXTERNAL / "codex" / "claude-code-log_rollout_full_schema.jsonl")
    assert "I will inspect the synthetic directory." in str(events)
    assert "SYNTHETIC_ENCRYPTED_CONTENT_MUST_NOT_RENDER" not in str(events)


def test_a_line_kind_a_newer_client_writes_is_counted_and_the_reading_goes_on(tmp_path: Path) -> None:
    events, verdict, skipped = read_counted(EXTERNAL / "codex" / "claude-code-log_rollout_full_schema.jsonl")
    assert verdict.stop is None and skipped.unknown == {"future_synthetic_record": 1}
    for agent, line in (
        ("claude", b'{"type":"hologram","uuid":"x","sessionId":"s","depth":{"a":[1,2]}}\n'),
        ("pi", b'{"type":"teleport","id":"abcd1234","parentId":null,"timestamp":"2026-11-30T09:03:20.000Z"}\n'),
        ("codex", b'{"timestamp":"2026-11-30T09:03:00.000Z","type":"response_item","payload":{"type":"hologram"}}\n'),
    ):
        path = tmp_path / f"{agent}.jsonl"
        path.write_bytes(fixture(agent, "simple").read_bytes() + line + fixture(agent, "simple").read_bytes())
        events, verdict, skipped = read_counted(path)
        assert verdict.stop is None and sum(skipped.unknown.values()) == 1
        assert len(messages(events)) == 2 * len(messages(read(fixture(agent, "simple"))[0]))


def test_a_known_line_whose_fields_do_not_fit_is_a_note_that_says_why() -> None:
    events, _verdict, skipped = read_counted(EXTERNAL / "claude-code" / "claude-code-log_edge_cases.jsonl")
    notes = [e for e in events if isinstance(e, UnknownEvent) and e.type == "not understood"]
    assert notes and notes[0].seq == 11 and "$.message" in str(notes[0].fields["why"])
    assert skipped.malformed == {"user": 1}


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_a_line_that_is_not_json_stops_the_reading_with_its_line_number(agent: str, tmp_path: Path) -> None:
    lines = fixture(agent, "simple").read_bytes().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:4]) + b"{not json at all\n" + b"".join(lines[4:]))
    events, verdict = read(path)
    assert verdict.stop == Stop(5, len(b"".join(lines[:4])), "it is not JSON") and not verdict.torn
    assert all(e.seq <= 4 for e in events)
    path.write_bytes(b"".join(lines[:4]) + b'"just a string"\n')
    assert str(read(path)[1].stop) == "line 5: it is JSON but not an object"


def test_a_partial_last_line_is_a_torn_tail_not_a_line() -> None:
    events, verdict = read(EXTERNAL / "codex" / "claude-code-log_rollout_malformed_tail.jsonl")
    # Its last line is both cut short and not JSON: the damage is reported at its line.
    assert verdict.stop is not None and verdict.stop.line == 3
    assert [e.seq for e in events] == [1]


def test_every_format_is_recognised_by_its_content_whatever_its_name(tmp_path: Path) -> None:
    for agent in FORMATS:
        misnamed = tmp_path / "rollout-2026-11-30-looks-like-codex.jsonl"
        misnamed.write_bytes(fixture(agent, "simple").read_bytes())
        found = detect(misnamed)
        assert found is not None and found.name == agent
    wren = tmp_path / "s-20250301-093000-a1b2.jsonl"
    wren.write_bytes(b'{"seq":1,"ts":"2025-03-01T09:30:00.000Z","type":"message","message":{}}\n')
    assert detect(wren) is None
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert detect(tmp_path / "empty.jsonl") is None


def test_errors_the_agent_recorded_are_errors(tmp_path: Path) -> None:
    # The recordings hold no error: each is made from one of their lines, as each client writes errors.
    pi_reply = fixture("pi", "simple").read_bytes().splitlines()[-1]
    claude_reply = fixture("claude", "simple").read_bytes().splitlines()[27]
    made = {
        "pi": pi_reply.replace(b'"stopReason":"stop"', b'"stopReason":"error","errorMessage":"429 rate limited"'),
        "claude": claude_reply.replace(b'"isSidechain":false', b'"isSidechain":false,"isApiErrorMessage":true'),
        "codex": b'{"timestamp":"2026-11-30T09:03:00.000Z","type":"event_msg",'
        b'"payload":{"type":"error","message":"429 rate limited"}}',
    }
    for agent, line in made.items():
        path = tmp_path / f"{agent}.jsonl"
        path.write_bytes(fixture(agent, "simple").read_bytes() + line + b"\n")
        events, verdict = read(path)
        errors = [e for e in events if isinstance(e, Error)]
        assert verdict.stop is None and len(errors) == 1, agent
        assert errors[0].seq == len(path.read_bytes().splitlines())
    assert not any(isinstance(e, Error) for e in read(fixture("claude", "simple"))[0])  # none invented
