"""The approval prompt on a small terminal (tmux): a command too long for the screen is folded, never scrolled away.

The QA pass's command: `touch pwned-scroll.txt`, 200 newlines, `echo safe`. On a 35-row terminal the
header and the first line scrolled off and the screen showed only `| echo safe` above the question.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.hostile_streams import env_for, openai_call, openai_text
from tests.agent.openai_server import OpenAIServer, Stream
from tests.tmux import python_argv, terminal
from wren_tui.agent.approval import approval_prompt
from wren_tui.journal.events import ToolCall, ToolEnd

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SCROLLOFF = "touch pwned-scroll.txt" + "\n" * 200 + "echo safe"
QUESTION = "allow this command of 201 lines (the first: `touch pwned-scroll.txt`)? [y]es / [n]o / [a]lways run_command:"


@pytest.mark.parametrize("size", [(80, 20), (120, 35)])
async def test_a_command_of_201_lines_is_folded_and_its_question_says_what_it_is(
    workspace: Path, size: tuple[int, int]
) -> None:
    answers = [
        Stream([openai_call("c1", "run_command", [json.dumps({"command": SCROLLOFF})])]),
        Stream([openai_text(["Not run, as you said."])]),
    ]
    async with OpenAIServer(lambda body, headers: answers.pop(0)) as srv:

        def session() -> tuple[str, str, str]:
            with terminal("wren-approval") as term:
                argv = python_argv("run", "--dir", "../journals", "--model", "openai", "hi")
                term.start(argv, workspace, size, env_for("openai", srv.base_url))
                screen = term.wait_for("[a]lways run_command:")
                joined = term.capture(joined=True)
                term.keys("n", "Enter")
                return screen, joined, term.wait_for("WREN-EXITED-")

        screen, joined, end = await asyncio.to_thread(session)
    rows = screen.rstrip("\n").split("\n")
    # Everything that says what will run is on the screen: the header, the first line, the fold, the question.
    assert "allow run_command, a command of 201 lines?" in screen, screen
    assert "  | touch pwned-scroll.txt" in screen
    assert "more lines not shown here ..." in screen
    assert "  | echo safe" in screen
    assert QUESTION in joined, joined
    assert len(rows) <= size[1]
    assert "WREN-EXITED-0" in end
    assert not (workspace / "pwned-scroll.txt").exists()
    ended = next(e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolEnd))
    assert (ended.ok, ended.stopped_by) == (False, "approval")


@pytest.mark.parametrize("rows", [16, 24, 35, 60])
@pytest.mark.parametrize("columns", [40, 80, 200])
@pytest.mark.parametrize(
    "command",
    [
        SCROLLOFF,
        "echo " + "x" * 3000 + " && rm -rf build",
        "\n".join(f"step {i}" for i in range(500)),
        "echo " + "y" * 10_000 + "\nrm -rf build",
    ],
    ids=["200 newlines", "one line of 3,000", "500 lines", "two lines past PROMPT_LIMIT"],
)
def test_the_prompt_fits_the_screen_whatever_the_command(rows: int, columns: int, command: str) -> None:
    prompt = approval_prompt(ToolCall("c1", "run_command", json.dumps({"command": command})), (columns, rows))
    lines = prompt.split("\n")
    used = sum(max(1, -(-len(line) // columns)) for line in lines)
    question = lines[-1]
    count = command.count("\n") + 1
    assert used <= rows, prompt  # it fits: the header never scrolls away
    if len(lines) == 2:  # one line that fits the screen: the question is the command itself
        assert lines[1].startswith("allow run_command `echo xxx") and question.endswith(
            "rm -rf build`?  [y]es / [n]o / [a]lways run_command: "
        )
        return
    assert question.startswith(f"allow this command of {count} line")
    assert question.endswith("[y]es / [n]o / [a]lways run_command: ")
    assert f"(the first: `{command.split(chr(10))[0][:20]}" in question
    assert lines[1].startswith("allow run_command, a command of")  # the header is the prompt's first line
    assert command.rsplit("\n", 1)[-1][-12:] in prompt  # the command's end is always shown
