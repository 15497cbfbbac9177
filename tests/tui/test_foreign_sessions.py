"""Claude Code, Codex and pi sessions in the session screen, through Pilot: the same panes, keys and honesty
about damage as a Wren journal, followed live as the other agent writes, forked into Wren from the picker."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.foreign.sessions import AN_HOUR, EXTERNAL, age, copy_session, lines_of
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.journal.events import Fork, Message
from wren_tui.journal.reader import read_events
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.dialogs import Notice
from wren_tui.tui.screens.fork_flow import Picked
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 11, 30, 9, 10, tzinfo=UTC)
# The line each recording's call was asked on ("cat missing.txt"), and the last line of the recording.
CALL_LINE = {"claude": 21, "codex": 10, "pi": 5}
# The tokens of the two replies of each tool-error recording, as its client counted them.
TOKENS = {"claude": 2 * 1542, "codex": 2 * 1240, "pi": 2 * 930}


def _app(path: Path, **kwargs: object) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK), **kwargs)  # type: ignore[arg-type]


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def _fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
async def test_a_session_shows_its_conversation_its_calls_timings_and_outcomes_and_its_tokens(
    agent: str, tmp_path: Path
) -> None:
    path = copy_session(agent, "tool-error", tmp_path)
    before = _fingerprint(path)
    app = _app(path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_text(pilot, "missing.txt does not exist here: cat failed with exit status 1.")
        text = screen_text(app)
        order = ["▌ you", "Show me missing.txt please.", "cat missing.txt", "▌ tool result", "No such file"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        # The tool pane: the call, its elapsed time from the recorded times, failed from the record.
        await wait_for(pilot, lambda: " failed" in screen_text(app), "the call failed")
        row = next(line for line in screen_text(app).splitlines() if "cat missing.txt" in line and " ms " in line)
        assert row.split()[-1] == "failed"
        status = _status(app)
        assert " ended " in status and f"{agent} tool-error" in status and f" {TOKENS[agent]} tokens" in status
    assert _fingerprint(path) == before


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
async def test_a_session_that_ends_in_a_call_is_stopped_mid_call_then_live_when_the_agent_writes_again(
    agent: str, tmp_path: Path
) -> None:
    # What a run killed during its tool leaves: the call's line and nothing after it, no one writing.
    path = copy_session(agent, "tool-error", tmp_path, lines=CALL_LINE[agent])
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        await wait_for(pilot, lambda: " stopped mid-call " in _status(app), "stopped mid-call")
        assert "outcome unknown" not in screen_text(app) and "never started" not in screen_text(app)
        # The agent appends the rest as it writes it: live, and the call gets its result.
        with path.open("ab") as agent_writes:
            agent_writes.write(b"".join(lines_of(agent, "tool-error")[len(path.read_bytes().splitlines()) :]))
        await wait_for_text(pilot, "missing.txt does not exist here")
        await wait_for(pilot, lambda: " live " in _status(app), "live: it just changed")
        await wait_for(pilot, lambda: "no result recorded" not in screen_text(app), "the result")


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
async def test_a_real_run_killed_during_its_tool_shows_its_call_with_no_result_recorded(
    agent: str, tmp_path: Path
) -> None:
    path = copy_session(agent, "killed", tmp_path)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        await wait_for(pilot, lambda: " stopped mid-call " in _status(app), "stopped mid-call")
        text = screen_text(app)
        assert "Run the slow build" in text and "sleep 5; echo build finished" in text
        assert "outcome unknown" not in text and "running" not in text


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
async def test_the_waterfall_draws_a_call_with_no_result_recorded_as_the_tool_pane_does(
    agent: str, tmp_path: Path
) -> None:
    # The two panes share their rows and the style of each state: neither can lack one the other draws.
    path = copy_session(agent, "killed", tmp_path)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        await pilot.press("w")
        await wait_for(pilot, lambda: app.screen.query_one("#waterfall").display, "the waterfall")
        # Beside the row, in the waterfall's label column (12 cells): the state, cut.
        await wait_for(pilot, lambda: "no result r…" in screen_text(app), "the call's state beside its bar")
        assert app.is_running


async def test_a_call_asked_moments_ago_is_running_while_the_session_is_live(tmp_path: Path) -> None:
    path = copy_session("pi", "tool-error", tmp_path, lines=5, age_s=0)
    app = WrenApp(folder=tmp_path, session=path)  # the wall clock: the call ticks from when it was asked
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: " running" in screen_text(app) and " live " in _status(app), "running")
        age(path, AN_HOUR)
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "no result, once no one writes", 15)


async def test_lines_appended_show_as_they_come_and_a_partial_line_waits_for_its_newline(tmp_path: Path) -> None:
    lines = lines_of("claude", "multi-turn")
    path = copy_session("claude", "multi-turn", tmp_path, lines=30)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for_text(pilot, "notes.txt is a short to-do list with two items.")
        prompt = next(i for i, line in enumerate(lines) if b"How many lines does hello.py have?" in line and i >= 30)
        with path.open("ab") as agent:
            agent.write(b"".join(lines[30:prompt]))
            agent.write(lines[prompt][:100])  # the line cut in two, as a write could be caught
            agent.flush()
            screen = app.screen
            assert isinstance(screen, SessionScreen)
            # Read up to the cut line's start, and no further: the partial line waits for its newline.
            whole = len(b"".join(lines[:prompt]))
            await wait_for(
                pilot, lambda: screen.reader.lines is not None and screen.reader.lines.offset == whole, "read"
            )
            assert "How many lines does hello.py have?" not in screen_text(app)
            assert "stopped at" not in _status(app)
            agent.write(lines[prompt][100:] + b"".join(lines[prompt + 1 :]))
        await wait_for_text(pilot, "hello.py has 3 lines.")
        timeline = screen.timeline
        said = [e.message.content for e in map(timeline.event, range(len(timeline))) if isinstance(e, Message)]
        assert said.count("How many lines does hello.py have?") == 1  # the cut line, read once, whole


async def test_a_line_that_is_not_json_is_reported_with_its_line_number(tmp_path: Path) -> None:
    lines = lines_of("codex", "simple")
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(lines[:9]) + b"{oops\n" + b"".join(lines[9:]))
    age(path, AN_HOUR)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: "stopped at line 10: it is not JSON" in _status(app), "the damage")
        assert "List the files in this folder" in screen_text(app)
        assert "The folder holds two files" not in screen_text(app)


async def test_the_newest_branch_is_shown_the_status_says_there_are_others_and_a_new_branch_is_followed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "branched.jsonl"
    path.write_bytes((EXTERNAL / "pi" / "agentlogs_branched.jsonl").read_bytes())
    age(path, AN_HOUR)
    app = _app(path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for(pilot, lambda: "1 other branch in this file" in _status(app), "the other branch")
        await pilot.press("home")
        await wait_for_text(pilot, "instead write a limerick to limerick.txt")
        assert "now write a second haiku" not in screen_text(app)
        # The person goes back to an earlier entry in pi and goes on from there: a new branch.
        entry = {
            "type": "message",
            "id": "0badc0de",
            "parentId": "5b978642",
            "timestamp": "2026-02-03T22:05:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "a third way: a sonnet"}]},
        }
        with path.open("ab") as pi_writes:
            pi_writes.write(json.dumps(entry).encode() + b"\n")
        await wait_for_text(pilot, "a third way: a sonnet")
        await pilot.press("home")
        await wait_for(pilot, lambda: "instead write a limerick" not in screen_text(app), "the old branch hidden")
        await wait_for(pilot, lambda: "2 other branches in this file" in _status(app), "two other branches")


async def test_fork_picker_lists_every_branch_and_forks_into_a_wren_journal_leaving_the_file_as_it_was(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent" / "branched.jsonl"
    path.parent.mkdir()
    path.write_bytes((EXTERNAL / "pi" / "agentlogs_branched.jsonl").read_bytes())
    age(path, AN_HOUR)
    before = _fingerprint(path)
    journals = tmp_path / "journals"
    app = _app(path, journals=journals)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "rm -f haiku1.txt")
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of pi")
        await wait_for_text(pilot, "user · branch 2: now write a second haiku")
        await pilot.press("enter")  # the last point listed: the other branch's answer
        await wait_for_text(pilot, "Fork this pi session at line 11 into a new Wren journal?")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, Notice), "the fork's notice")
        notice = app.screen
        assert isinstance(notice, Notice) and "Continue it with:" in notice.message
        assert f"wren resume --dir {journals}" in notice.message
    forked = list(journals.glob("s-*.jsonl"))
    assert len(forked) == 1 and _fingerprint(path) == before
    result = read_events(forked[0])
    users = [e.message.content for e in result.events if isinstance(e, Message) and e.message.role == "user"]
    assert users == ["write a haiku about coding to haiku1.txt", "now write a second haiku to haiku2.txt"]
    last = result.events[-1]
    assert isinstance(last, Fork) and last.at_seq == 11 and last.from_ == str(path)


async def test_pick_prints_the_files_path_and_the_line(tmp_path: Path) -> None:
    path = copy_session("claude", "simple", tmp_path)
    app = _app(path, pick=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for_text(pilot, "printed as ID SEQ on exit")
        await pilot.press("enter")
    assert app.return_value == Picked(str(path), 28)


async def test_search_raw_view_and_folded_thinking_work_as_for_a_wren_journal(tmp_path: Path) -> None:
    lines = (EXTERNAL / "pi" / "agentlogs_crud.jsonl").read_bytes().splitlines(keepends=True)
    entry = json.loads(lines[4])
    entry["message"]["content"][0]["thinking"] = "\n".join(f"step {n}: think it over" for n in range(1, 21))
    path = tmp_path / "crud.jsonl"
    path.write_bytes(b"".join([*lines[:4], json.dumps(entry).encode() + b"\n", *lines[5:]]))
    age(path, AN_HOUR)
    app = _app(path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_text(pilot, "Done! Here's what I did")
        await pilot.press("/", *"dark mode", "enter")
        view = app.screen.query_one(ConversationView)
        await wait_for(pilot, lambda: view.selected_event is not None, "a match")
        assert "match 1 of" in _status(app)
        await pilot.press("r")
        await wait_for_text(pilot, "as pi wrote it (shown as")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "back")
        # The thinking of line 5, folded under its note until Enter unfolds it.
        await pilot.press("escape", "home")
        await wait_for_text(pilot, "· thinking #5")
        assert "step 5: think it over" in screen_text(app) and "step 12: think it over" not in screen_text(app)
        view.select(next(i for i in range(len(view.timeline)) if view.timeline.event(i).seq == 5))
        await pilot.press("enter")
        await wait_for_text(pilot, "step 12: think it over")


async def test_a_big_session_shows_its_tail_first_then_the_whole_of_it(tmp_path: Path) -> None:
    from tests.bench.agents import claude_session

    path = claude_session(tmp_path / "big.jsonl", 3 << 20)
    age(path, AN_HOUR)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for(
            pilot, lambda: screen.reader.indexing is None and len(screen.timeline) > 0, "the whole index", 60
        )
        await pilot.press("home")
        await wait_for_text(pilot, "What does notes.txt say?")
        lines = path.read_bytes().splitlines()
        answer = max(i for i, line in enumerate(lines, 1) if b'"type":"assistant"' in line)
        # Seq is the line's number counted from the file's start, in the tail shown first and in the index.
        assert screen.timeline.event(len(screen.timeline) - 1).seq == answer
        assert screen.timeline.tokens == sum(1542 for line in lines if b'"type":"assistant"' in line)


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
async def test_only_writes_keeps_another_agents_shell_call_and_hides_its_talk(agent: str, tmp_path: Path) -> None:
    # Other agents record no tool_start saying a call writes: their tools' names must.
    path = copy_session(agent, "tool-error", tmp_path)
    app = _app(path, only="writes")
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for(pilot, lambda: "only writes: " in _status(app), "the filter's status")
        await wait_for_text(pilot, "cat missing.txt")
        text = screen_text(app)
        assert "No such file" in text  # the call's result is the call's
        assert "Show me missing.txt please." not in text  # the person's words are not a write
