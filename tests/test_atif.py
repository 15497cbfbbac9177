"""ATIF out and in, as a user runs them: `wren export --format atif`, then `wren log`, `wren fork` on the file.

Every trajectory written is validated by `atif` (Pydantic models of ATIF-v1.8 from PyPI, a reader
that is not ours), and read back through Wren's own ATIF reader gives the same conversation.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from atif import Trajectory

from tests.conftest import FIXTURES, run_wren
from tests.foreign.sessions import peak_rss_kb_of_wren
from tests.tui.journals import (
    SESSION,
    assistant,
    encode,
    finished_story,
    story,
    user,
    write_journal,
)
from wren_tui.journal.events import Delta, Error, Message, RunStart, ToolCall, ToolEnd, ToolStart, Usage
from wren_tui.journal.reader import read_events

AGENTS = ("claude-code", "codex", "pi")
RECORDINGS = ("simple", "multi-turn", "tool-error", "killed")


def export(journal: Path, out: Path, *extra: str) -> tuple[Trajectory, dict[str, Any], int]:
    done = run_wren(["export", str(journal), "--format", "atif", "-o", str(out), *extra], cwd=out.parent)
    assert done.returncode in (0, 4), done.stderr
    raw = out.read_bytes()
    return Trajectory.model_validate_json(raw), json.loads(raw), done.returncode


def conversation_of_journal(path: Path) -> list[tuple[Any, ...]]:
    return conversation([e for e in read_events(path).events if isinstance(e, Message)])


def conversation(messages: list[Message]) -> list[tuple[Any, ...]]:
    """Each message as (role, text, calls with their parsed arguments, the call it answers)."""
    return [
        (
            m.message.role,
            m.message.content,
            [(c.id, c.name, json.loads(c.args)) for c in m.message.tool_calls or ()],
            m.message.tool_call_id,
        )
        for m in messages
    ]


def logged(path: Path, cwd: Path) -> dict[str, Any]:
    done = run_wren(["log", str(path), "--json"], cwd=cwd)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def logged_conversation(path: Path, cwd: Path) -> list[tuple[Any, ...]]:
    events = logged(path, cwd)["events"]
    return [
        (
            e["message"]["role"],
            e["message"]["content"],
            [(c["id"], c["name"], json.loads(c["args"])) for c in e["message"].get("toolCalls") or ()],
            e["message"].get("toolCallId"),
        )
        for e in events
        if e["type"] == "message"
    ]


def test_a_finished_session_is_one_valid_trajectory_with_steps_calls_results_and_tokens(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    before = journal.read_bytes()
    traj, raw, code = export(journal, tmp_path / "out.json")
    assert code == 0
    assert journal.read_bytes() == before  # read-only
    assert traj.schema_version == "ATIF-v1.8" and traj.session_id == SESSION
    assert traj.agent.name == "wren" and traj.agent.model_name == "scripted"
    sources = [s.source for s in traj.steps]
    assert sources[:2] == ["system", "user"] and sources.count("agent") == 5 and sources[-1] == "system"
    agents = [s for s in traj.steps if s.source == "agent"]
    first = agents[0]
    assert first.message == "I'll run the test suite first."
    assert first.tool_calls is not None and first.tool_calls[0].function_name == "shell"
    assert first.tool_calls[0].arguments == {"command": "python -m pytest -q"}
    assert first.observation is not None
    result = first.observation.results[0]
    assert result.source_call_id == "call_1" and isinstance(result.content, str) and "1 failed" in result.content
    assert result.extra is not None and result.extra["wren_status"] == "failed" and result.extra["ok"] is False
    assert first.metrics is not None and (first.metrics.prompt_tokens, first.metrics.completion_tokens) == (812, 64)
    assert first.extra is not None and first.extra["wren_seq"] == 5
    # The model error between two replies is a system step of its own, after the step it interrupted.
    errors = [s for s in traj.steps if s.source == "system" and s.extra and s.extra["wren_event"]["type"] == "error"]
    assert len(errors) == 1 and "model gateway timed out" in str(errors[0].message)
    assert traj.final_metrics is not None
    assert traj.final_metrics.total_prompt_tokens == 812 + 1104 + 1390
    assert traj.final_metrics.total_completion_tokens == 64 + 71 + 40
    assert traj.final_metrics.total_steps == len(traj.steps)
    assert raw["extra"]["wren"]["ended"] == "done"
    # Every event of the journal is in it: its seq in a step, a result, a usage list or a call's start and end.
    seqs: set[int] = set()
    for step in raw["steps"]:
        seqs.add(step["extra"]["wren_seq"])
        seqs.update(step["extra"].get("wren_usage_seqs", ()))
        for r in (step.get("observation") or {}).get("results", ()):
            seqs.update(r["extra"][k] for k in ("wren_seq", "wren_start_seq", "wren_end_seq") if k in r["extra"])
    deltas = {e.seq for e in read_events(journal).events if isinstance(e, Delta)}
    assert seqs | deltas == set(range(1, len(finished_story()) + 1))


def test_a_killed_session_says_the_open_call_outcome_is_unknown_never_success(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    traj, raw, code = export(journal, tmp_path / "killed.json")
    assert code == 0
    last = [s for s in traj.steps if s.source == "agent"][-1]
    assert last.tool_calls is not None and last.tool_calls[0].tool_call_id == "call_3"
    assert last.observation is not None
    result = last.observation.results[0]
    assert result.extra is not None and result.extra["wren_status"] == "outcome unknown"
    assert "ok" not in result.extra and "unknown" in str(result.content)
    assert raw["final_metrics"]["extra"]["wren_call_outcomes"] == {"failed": 1, "ok": 1, "outcome unknown": 1}
    # Read back, the call is open again (started, no end, no result): not turned into success.
    events = logged(tmp_path / "killed.json", tmp_path)["events"]
    call_3 = [
        e
        for e in events
        if e.get("id") == "call_3" or (e["type"] == "message" and e["message"].get("toolCallId") == "call_3")
    ]
    assert [e["type"] for e in call_3] == ["tool_start"]


def test_cancelled_refused_and_cut_off_replies_are_said_as_they_were(tmp_path: Path) -> None:
    cancelled = ToolCall("call_c", "shell", '{"command": "sleep 100"}')
    refused = ToolCall("call_r", "shell", '{"command": "rm -rf build"}')
    broken = ToolCall("call_b", "shell", "{not json")
    events = [
        RunStart(pid=1, cwd="/work/demo", model="scripted", version="0.1.0"),
        user("try things"),
        assistant("Sleeping, then cleaning.", cancelled, refused, broken),
        ToolStart(id="call_c", name="shell", read_only=False, approval="approved"),
        ToolEnd(id="call_c", ok=False, elapsed_ms=900, stopped_by="cancel"),
        ToolStart(id="call_r", name="shell", read_only=False, approval="denied"),
        ToolEnd(id="call_r", ok=False, stopped_by="approval"),
        Usage(input_tokens=10, output_tokens=5, model="scripted"),
        Error(message="the gateway closed the stream"),
        Delta(text="I was about to "),
        Delta(text="say"),
    ]
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    traj, _raw, _code = export(journal, tmp_path / "t.json")
    step = next(s for s in traj.steps if s.tool_calls)
    assert step.observation is not None
    by_id = {r.source_call_id: r for r in step.observation.results}
    assert by_id["call_c"].extra == {
        "wren_status": "stopped: cancel",
        "wren_start_seq": 4,
        "wren_end_seq": 5,
        "ok": False,
        "elapsed_ms": 900,
        "stopped_by": "cancel",
    }
    assert "stopped by cancel" in str(by_id["call_c"].content)
    assert by_id["call_r"].extra is not None and by_id["call_r"].extra["wren_status"] == "stopped: approval"
    assert by_id["call_b"].extra is not None and by_id["call_b"].extra["wren_status"] == "never started"
    broken_call = next(c for c in step.tool_calls or () if c.tool_call_id == "call_b")
    assert broken_call.arguments == {} and broken_call.extra == {"wren_arguments_text": "{not json"}
    partial = traj.steps[-1]
    assert partial.source == "agent" and partial.message == "I was about to say"
    assert partial.extra is not None and "cut off" in partial.extra["wren_partial"]


def test_a_damaged_journal_says_where_reading_stopped_and_exits_4(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:12]) + b'{"seq": 13, "garbage\n' + b"".join(lines[13:]))
    traj, raw, code = export(journal, tmp_path / "damaged.json")
    assert code == 4
    assert traj.notes is not None and "line 13" in traj.notes
    stopped = raw["extra"]["wren"]["stopped"]
    assert stopped["line"] == 13 and stopped["torn"] is False
    assert max(s["extra"]["wren_seq"] for s in raw["steps"]) <= 12


def test_a_fork_is_its_path_from_the_root_with_its_lineage(tmp_path: Path) -> None:
    parent = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    done = run_wren(["fork", str(parent), "25", "--json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    child = Path(json.loads(done.stdout)["path"])
    with child.open("ab") as more:  # the fork goes on: one more turn of its own
        more.write(encode([user("now add a test"), assistant("Added.")], first_seq=27))
    traj, raw, _code = export(child, tmp_path / "fork.json")
    assert raw["extra"]["wren"]["lineage"] == [{"parent": SESSION, "at_seq": 25, "wren_seq": 26}]
    texts = [s.message for s in traj.steps if s.source in ("user", "agent")]
    assert texts[0] == "run the tests, find the failing case and fix it" and texts[-2:] == ["now add a test", "Added."]
    assert raw["session_id"] == child.name.removesuffix(".jsonl")


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("recording", RECORDINGS)
def test_other_agents_sessions_export_as_valid_trajectories(agent: str, recording: str, tmp_path: Path) -> None:
    source = FIXTURES / "agents" / agent / f"{recording}.jsonl"
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    traj, raw, code = export(path, tmp_path / "out.json")
    assert code == 0
    assert raw["extra"]["wren"]["agent"] in ("claude", "codex", "pi")
    assert any(s.source == "user" for s in traj.steps) and any(s.source == "agent" for s in traj.steps)
    # The same conversation read back (an agent's reply written as several lines stays several messages).
    assert logged_conversation(tmp_path / "out.json", tmp_path) == logged_conversation(path, tmp_path)


@pytest.mark.parametrize("events", [finished_story, story])
def test_a_round_trip_through_wrens_atif_reader_gives_the_same_conversation(events: Any, tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", events())
    export(journal, tmp_path / "trip.json")
    assert logged_conversation(tmp_path / "trip.json", tmp_path) == conversation_of_journal(journal)
    # And once more: the trajectory exported again from the trajectory is the same conversation.
    traj, _raw, _code = export(tmp_path / "trip.json", tmp_path / "again.json")
    assert traj.agent.name == "ATIF trajectory" or traj.agent.name
    assert logged_conversation(tmp_path / "again.json", tmp_path) == conversation_of_journal(journal)


HARBOR_STYLE = {
    "schema_version": "ATIF-v1.6",
    "session_id": "run-7",
    "agent": {"name": "terminus", "version": "2.0", "model_name": "gpt-5"},
    "steps": [
        {"step_id": 1, "source": "system", "message": "You are a careful agent."},
        {"step_id": 2, "source": "user", "message": "List the files, please."},
        {
            "step_id": 3,
            "timestamp": "2026-11-30T09:00:01Z",
            "source": "agent",
            "message": "Listing them.",
            "reasoning_content": "ls shows them",
            "tool_calls": [{"tool_call_id": "t1", "function_name": "bash", "arguments": {"cmd": "ls"}}],
            "observation": {"results": [{"source_call_id": "t1", "content": "a.txt\nb.txt"}]},
            "metrics": {"prompt_tokens": 100, "completion_tokens": 20},
        },
        {"step_id": 4, "source": "agent", "message": [{"type": "text", "text": "Two files: a.txt and b.txt."}]},
    ],
    "final_metrics": {"total_prompt_tokens": 100, "total_completion_tokens": 20, "total_steps": 4},
}


def test_a_pretty_printed_trajectory_from_another_tool_is_read_logged_and_forked_into_wren(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(HARBOR_STYLE, indent=2) + "\n")
    before = path.read_bytes()
    assert conversation_of_trajectory(path, tmp_path) == [
        ("user", "List the files, please.", [], None),
        ("assistant", "Listing them.", [("t1", "bash", {"cmd": "ls"})], None),
        ("tool", "a.txt\nb.txt", [], "t1"),
        ("assistant", "Two files: a.txt and b.txt.", [], None),
    ]
    events = logged(path, tmp_path)["events"]
    usage = next(e for e in events if e["type"] == "usage")
    assert (usage["inputTokens"], usage["outputTokens"], usage["model"]) == (100, 20, "gpt-5")
    reply = next(e for e in events if e["type"] == "message" and e["message"]["role"] == "assistant")
    assert reply["message"]["reasoning"] == [{"text": "ls shows them", "kind": "reasoning_content"}]
    text = run_wren(["log", str(path)], cwd=tmp_path)
    assert text.returncode == 0 and "system" in text.stdout and "You are a careful agent." in text.stdout
    # Fork at the last reply (step 4: seq 5, the head being seq 1), into Wren's journals folder.
    listing = run_wren(["fork", str(path), "--json"], cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert 5 in [p["seq"] for p in json.loads(listing.stdout)]
    journals = tmp_path / "journals"
    done = run_wren(["fork", str(path), "5", "--dir", str(journals), "--json"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    forked = Path(json.loads(done.stdout)["path"])
    messages = [e for e in read_events(forked).events if isinstance(e, Message)]
    assert [m.message.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert path.read_bytes() == before


def conversation_of_trajectory(path: Path, cwd: Path) -> list[tuple[Any, ...]]:
    return logged_conversation(path, cwd)


def test_a_json_file_that_is_no_trajectory_is_refused_in_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"theme": "dark"}\n')
    commands = (
        ["log", str(path)],
        ["fork", str(path)],
        ["export", str(path), "--format", "atif"],
        ["watch", str(path)],
        ["diff", str(path), str(path)],
    )
    for command in commands:
        done = run_wren(command, cwd=tmp_path)
        assert done.returncode == 4 and "Traceback" not in done.stderr
        # The one refusal: what Wren reads (ATIF among them), and why this .json is none of them.
        opens = "not a Wren journal, an ATIF trajectory, a design journal (mca) or a session of "
        assert done.stderr.startswith(f"wren: {path}: {opens}")
        assert '(no "schema_version": "ATIF-v..." at its start)' in done.stderr, done.stderr


def test_a_trajectory_cut_short_stops_reading_where_it_breaks(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    whole = json.dumps(HARBOR_STYLE, indent=2).encode()
    path.write_bytes(whole[: whole.index(b'"step_id": 4') + 20])
    done = run_wren(["log", str(path)], cwd=tmp_path)
    assert done.returncode == 4 and "Traceback" not in done.stderr
    assert "Listing them." in done.stdout and "stopped at line 5" in done.stdout


async def test_the_viewer_opens_a_trajectory_as_another_agents_session_and_never_writes_it(tmp_path: Path) -> None:
    from tests.tui.conftest import screen_text, wait_for, wait_for_text
    from wren_tui.tui.app import WrenApp
    from wren_tui.tui.widgets.status_line import StatusLine

    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(HARBOR_STYLE, indent=2) + "\n")
    before = path.read_bytes()
    app = WrenApp(folder=tmp_path, session=path, journals=tmp_path / "journals")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for_text(pilot, "Two files: a.txt and b.txt.")
        text = screen_text(app)
        order = ["List the files, please.", "Listing them.", "a.txt", "Two files: a.txt and b.txt."]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        await wait_for(pilot, lambda: "120 tokens" in str(app.screen.query_one(StatusLine).render()), "the tokens")
    assert path.read_bytes() == before


def test_another_agents_thinking_is_the_reasoning_of_the_reply_it_led_to(tmp_path: Path) -> None:
    from wren_tui.export.atif import AtifWriter
    from wren_tui.export.atomic import AtomicOutput
    from wren_tui.foreign.make import thinking

    out = AtomicOutput(tmp_path / "t.json")
    writer = AtifWriter(out)
    reply = assistant("The answer is 4.")
    writer.take([Message(seq=1, ts="", message=user("2+2?").message), thinking(2, "", "two and two make four")])
    writer.take([Message(seq=3, ts="", message=reply.message), thinking(4, "", "nothing followed this")])
    writer.finish(session_id="x", agent="Claude Code", agent_version="unknown")
    traj = Trajectory.model_validate_json((tmp_path / "t.json").read_bytes())
    agent_step = next(s for s in traj.steps if s.source == "agent")
    assert agent_step.reasoning_content == "two and two make four"
    assert agent_step.extra is not None and agent_step.extra["wren_thinking_seqs"] == [2]
    assert traj.steps[-1].source == "system" and "nothing followed this" in str(traj.steps[-1].message)


def _trajectory_with(step: dict[str, Any]) -> dict[str, Any]:
    """A trajectory whose conversation has a clean point (a user's prompt, the reply) before `step`."""
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": "deep",
        "agent": {"name": "terminus", "version": "2.0", "model_name": "gpt-5"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hello"},
            {"step_id": 2, "source": "agent", "message": "Hello."},
            step,
        ],
    }


def _nested(depth: int) -> str:
    """A trajectory whose third step's `extra` holds one value nested `depth` deep (written as text: json.dumps
    itself recurses)."""
    head = json.dumps(_trajectory_with({"step_id": 3, "source": "user", "message": "again", "extra": {"x": 0}}))
    return head.replace('{"x": 0}', '{"x": ' + "[" * depth + "]" * depth + "}")


class _Collector:
    """An OTLP/HTTP endpoint on 127.0.0.1 that takes every request (so what `wren otel` says is about the file)."""

    def __init__(self) -> None:
        import http.server
        import threading

        class Take(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Take)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("depth", [1_000, 10_000, 50_000])
def test_a_trajectory_nested_thousands_deep_stops_log_fork_and_otel_in_one_sentence(depth: int, tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(_nested(depth))
    journals = tmp_path / "journals"
    commands = [["log", str(path)], ["fork", "--dir", str(journals), str(path)]]
    collector = None
    try:
        import opentelemetry.sdk  # noqa: F401
    except ImportError:
        pass  # the otel extra is not installed here: log and fork still say it
    else:
        collector = _Collector()
        commands.append(["otel", str(path), "--endpoint", collector.url])
    try:
        for command in commands:
            done = run_wren(command, cwd=tmp_path)
            assert done.returncode == 4, (command, done.stderr)
            assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr, done.stderr
            said = [line for line in done.stderr.splitlines() if line.strip()]
            assert len(said) == 1 and "line 4: its JSON is nested more than 200 deep" in said[0], done.stderr
    finally:
        if collector is not None:
            collector.close()
    # What comes before it is still read: the prompt and the reply, a clean point to fork from.
    forked = run_wren(["fork", "--dir", str(journals), str(path), "3"], cwd=tmp_path)
    assert forked.returncode == 0, forked.stderr
    (child,) = journals.glob("*.jsonl")
    texts = [e.message.content for e in read_events(child).events if isinstance(e, Message)]
    assert texts == ["hello", "Hello."]


def test_every_bracket_walker_of_the_atif_reader_is_bounded_in_depth() -> None:
    from wren_tui.foreign.atif import MAX_DEPTH, depth_of, spans

    deep = ("[" * 100_000 + "]" * 100_000).encode()
    assert depth_of(deep, MAX_DEPTH) == MAX_DEPTH + 1  # counted no further than the bound
    assert depth_of(b'{"b": [[1]]}', 3) == 0  # too few brackets to nest past the bound: not even looked at
    assert depth_of(b'{"a": "[[[[\\"[[[[", "b": [[1]]}', 5) == 3  # brackets inside a string (an escaped quote) skipped
    # The structure of a document is found without recursion however deep its steps nest.
    found, broken = spans(_nested(50_000).encode())
    assert broken is None and len(found) == 5


@pytest.mark.parametrize("megabytes", [5, 20])
def test_a_huge_atif_message_is_read_in_bounded_memory_and_clipped_with_a_sentence(
    megabytes: int, tmp_path: Path
) -> None:
    from wren_tui.foreign.atif import MESSAGE_CAP

    size = megabytes << 20
    path = tmp_path / "big.json"
    step = {"step_id": 3, "source": "user", "message": "é" * (size // 2)}
    path.write_text(json.dumps(_trajectory_with(step), ensure_ascii=False), encoding="utf-8")
    peak_kb, done = peak_rss_kb_of_wren(["log", str(path), "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    # A few times the message, as the other formats' readers take (it was 630 MB and 2.4 GB).
    assert peak_kb * 1024 < 60 * (1 << 20) + 8 * size, f"{peak_kb} KB for a {megabytes} MB message"
    texts = [e["message"]["content"] for e in json.loads(done.stdout)["events"] if e["type"] == "message"]
    assert texts[:2] == ["hello", "Hello."]
    if size // 2 > MESSAGE_CAP:
        assert texts[2].startswith("é" * MESSAGE_CAP) and texts[2][MESSAGE_CAP:].startswith("\n[Wren clipped")
        assert f"{size // 2 - MESSAGE_CAP:,} more characters" in texts[2]
    else:
        assert texts[2] == "é" * (size // 2)


@pytest.mark.parametrize("how", ["timeout", "cancel", "approval"])
def test_a_call_stopped_by_timeout_cancel_or_refusal_is_still_so_after_an_atif_round_trip(
    how: str, tmp_path: Path
) -> None:
    call = ToolCall("call_s", "shell", '{"command": "sleep 100"}')
    approval = "denied" if how == "approval" else "approved"
    events = [
        RunStart(pid=1, cwd="/work/demo", model="scripted", version="0.1.0"),
        user("try it"),
        assistant("Trying.", call),
        ToolStart(id="call_s", name="shell", read_only=False, approval=approval),
        ToolEnd(id="call_s", ok=False, elapsed_ms=None if how == "approval" else 900, stopped_by=how),  # type: ignore[arg-type]
        assistant("It was stopped."),
    ]
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    export(journal, tmp_path / "trip.json")
    back = logged(tmp_path / "trip.json", tmp_path)["events"]
    ends = [e for e in back if e["type"] == "tool_end"]
    starts = [e for e in back if e["type"] == "tool_start"]
    assert len(ends) == 1 and len(starts) == 1
    assert ends[0]["stoppedBy"] == how and ends[0]["ok"] is False
    assert ends[0].get("elapsedMs") == (None if how == "approval" else 900)
    assert starts[0]["approval"] == approval and starts[0]["readOnly"] is False
