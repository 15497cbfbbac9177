"""The context gauge: each request's size estimated before it is sent, corrected by the server's usage."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, only_journal
from tests.agent.openai_server import Answer, OpenAIServer, Stream, finish_chunk, sse, text_chunk, usage_chunk
from tests.agent.test_instructions import wren
from tests.conftest import run_wren
from wren_tui.agent.context import WINDOWS, Gauge, window_from
from wren_tui.agent.errors import UsageError
from wren_tui.journal.events import ChatMessage, Usage


def usages(path: Path) -> list[Usage]:
    return [e for e in events_of(path) if isinstance(e, Usage)]


def test_each_request_is_estimated_before_it_is_sent_and_log_shows_it_against_the_window(workspace: Path) -> None:
    journals = workspace.parent / "journals"
    env = {"WREN_CONTEXT_WINDOW": "4000"}
    done = run_wren(["run", "--dir", str(journals), "--yes", "run the tests"], cwd=workspace, env=env)
    assert done.returncode == 0, done.stderr
    journal = only_journal(journals)
    used = usages(journal)
    assert len(used) >= 2 and all(u.window == 4000 and u.estimated > 0 for u in used)
    # The first estimate counts the system prompt and tools the scripted model never reads; from the
    # second request on, the server's count is the base and only what came after it is estimated.
    for earlier, later in itertools.pairwise(used):
        assert abs(later.estimated - later.input_tokens) <= 0.25 * later.input_tokens
        assert later.estimated > earlier.input_tokens
    last = used[-1]
    shown = (
        f"context {last.input_tokens:,} / 4,000 ({100 * last.input_tokens / 4000:.1f}%), estimated {last.estimated:,}"
    )
    log = run_wren(["log", "--dir", str(journals), journal.stem], cwd=workspace)
    assert log.returncode == 0 and shown in log.stdout
    assert "context: " in done.stdout and " / 4,000 tokens (" in done.stdout


async def test_the_servers_usage_corrects_the_estimate_and_a_known_models_window_comes_from_the_table(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    journals = tmp_path / "journals"
    counted = 20_000  # far from what the characters suggest: the server's count wins

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return Stream([sse(text_chunk("Fine."), finish_chunk("stop"), usage_chunk(counted, 3))])

    async with OpenAIServer(answer) as server:
        env = {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "not-a-real-key-0000", "WREN_MODEL": "gpt-4o-mini"}
        first = await wren(["run", "--dir", str(journals), "--model", "openai", "hello"], workspace, env)
        assert first.returncode == 0, first.stderr
        second = await wren(["resume", "--dir", str(journals), "--model", "openai", "again"], workspace, env)
        assert second.returncode == 0, second.stderr
    used = usages(only_journal(journals))
    assert [u.window for u in used] == [128_000, 128_000]
    assert used[0].estimated < 5_000
    # The resumed run starts from the journal's last usage (the server's 20,000) and what came after it.
    assert counted < used[1].estimated < counted + 100
    # Within one run, the gauge after a reply is the server's count plus what came after it.
    assert "context: 20,00" in first.stdout and "/ 128,000 tokens (15.6%)" in first.stdout


def test_the_chat_prompt_shows_the_context_used_of_the_window(workspace: Path) -> None:
    journals = workspace.parent / "journals"
    typed = "list the files\nwhat did I ask?\n/quit\n"
    done = run_wren(["chat", "--dir", str(journals), "--yes"], cwd=workspace, input=typed)
    assert done.returncode == 0, done.stderr
    # No gauge before the first message (no session yet), then one after each reply.
    shown = re.findall(r"\[([\d,]+)/128,000 0%\] you > ", done.stdout)
    assert len(shown) == 2 and int(shown[0].replace(",", "")) < int(shown[1].replace(",", ""))


def test_a_window_set_wrongly_is_one_sentence_and_nothing_runs(workspace: Path) -> None:
    journals = workspace.parent / "journals"
    done = run_wren(["run", "--dir", str(journals), "hello"], cwd=workspace, env={"WREN_CONTEXT_WINDOW": "lots"})
    assert done.returncode == 2
    assert "WREN_CONTEXT_WINDOW='lots' is not a positive whole number of tokens" in done.stderr
    assert not list(journals.glob("*.jsonl"))


@pytest.mark.parametrize(
    ("model", "window"),
    [("gpt-4o-mini", 128_000), ("anthropic/claude-sonnet-4-5", 200_000), ("gpt-4.1-mini", 1_047_576), ("my-own", None)],
)
def test_the_window_of_a_model_comes_from_the_variable_else_the_longest_matching_name_in_the_table(
    model: str, window: int | None
) -> None:
    assert window_from(model, {})[0] == window
    assert window_from(model, {"WREN_CONTEXT_WINDOW": "3000"}) == (3000, "WREN_CONTEXT_WINDOW")
    with pytest.raises(UsageError):
        window_from(model, {"WREN_CONTEXT_WINDOW": "0"})
    assert all(size > 0 for size in WINDOWS.values())


def test_the_gauge_counts_what_came_after_the_servers_count_and_not_before() -> None:
    gauge = Gauge(1000, 400, [ChatMessage(role="user", content="x" * 400)])
    assert gauge.sending() == 200
    gauge.add(ChatMessage(role="assistant", content="y" * 40))
    gauge.reported(900)  # the server counted the request just sent: 900, not the 200 estimated
    assert gauge.used() == 910
    assert gauge.text() == "910 / 1,000 tokens (91.0%)"
    assert gauge.short() == "[910/1,000 91%]"
