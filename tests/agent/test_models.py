"""The model registry: one table feeds the gateway choice and `--model`; a new model is one module and one line."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.listed_model import ListedModel
from tests.conftest import REPO, run_wren
from wren_tui.agent.errors import Ended, UsageError
from wren_tui.agent.loop import Printer
from wren_tui.agent.models import MODELS, default_model
from wren_tui.agent.models.base import FinishPart, Gateway, ModelSetup, TextPart, ToolCallPart, UsagePart
from wren_tui.agent.session import Settings, run_task
from wren_tui.journal.events import Delta, Message, RunEnd, RunStart, ToolEnd, ToolStart, Usage


def _settings(workspace: Path, **kw: object) -> Settings:
    return Settings(
        workspace=workspace,
        folder=journals_of(workspace),
        printer=Printer(io.StringIO()),
        **kw,  # type: ignore[arg-type]
    )


async def test_a_model_registered_with_one_line_runs_through_the_real_loop_into_the_journal(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (workspace / "README.md").read_text()
    model = ListedModel(
        [
            [
                TextPart("Let me read "),
                TextPart("the readme."),
                ToolCallPart(0, "c1", "read_file", '{"path": '),
                ToolCallPart(0, args='"README.md"}'),
                UsagePart(120, 9),
                FinishPart("tool_calls"),
            ],
            [TextPart("It describes the stats package."), UsagePart(400, 7), FinishPart("stop")],
        ]
    )
    made: list[ModelSetup] = []

    def listed(setup: ModelSetup) -> Gateway:
        made.append(setup)
        return model

    monkeypatch.setitem(MODELS, "listed", listed)
    ended = await run_task(_settings(workspace, model="listed", pace=0.5), "what does the readme say?", None)

    assert ended == Ended()
    assert [(s.workspace, s.pace) for s in made] == [(workspace, 0.5)]
    assert str(workspace) in made[0].system and "not run:" in made[0].system
    events = [e for e in events_of(only_journal(journals_of(workspace))) if not isinstance(e, Delta)]
    assert [type(e).__name__ for e in events] == [
        "RunStart", "Message", "Message", "Usage", "ToolStart", "ToolEnd", "Message", "Message", "Usage", "Snapshot",
        "RunEnd",
    ]  # fmt: skip
    start, user, call, usage, tool_start, tool_end, result, answer, _, _, end = events
    assert isinstance(start, RunStart) and start.model == "listed"
    assert isinstance(user, Message) and user.message.content == "what does the readme say?"
    assert isinstance(call, Message) and call.message.content == "Let me read the readme."
    assert [(c.id, c.name, c.args) for c in call.message.tool_calls or ()] == [
        ("c1", "read_file", '{"path": "README.md"}')
    ]
    assert isinstance(usage, Usage) and (usage.input_tokens, usage.output_tokens, usage.model) == (120, 9, "listed")
    assert isinstance(tool_start, ToolStart) and (tool_start.read_only, tool_start.approval) == (True, "auto")
    assert isinstance(tool_end, ToolEnd) and tool_end.ok
    assert isinstance(result, Message) and result.message.content == readme
    assert isinstance(answer, Message) and answer.message.content == "It describes the stats package."
    assert isinstance(end, RunEnd) and end.reason == "done"
    # The second request carried the tool's result back to the model.
    assert model.requests[1][0][-1].content == readme


def test_the_model_option_offers_every_model_in_the_registry(workspace: Path) -> None:
    """Registered before the parser is built, a model is a `--model` choice with no other change."""
    script = (
        "import sys\n"
        "from tests.agent.listed_model import ListedModel\n"
        "from wren_tui.agent.models import MODELS\n"
        "from wren_tui.agent.models.base import FinishPart, TextPart\n"
        "reply = [TextPart('hello from the listed model'), FinishPart('stop')]\n"
        "MODELS['listed'] = lambda setup: ListedModel([reply])\n"
        "from wren_tui.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "run", "--dir", "journals", "--workspace", "ws", "--model", "listed", "hi"],
        cwd=workspace.parent,  # not the workspace: its own `tests` package would hide ours
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "XDG_STATE_HOME": str(workspace.parent / "state")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "hello from the listed model" in proc.stdout
    events = events_of(only_journal(journals_of(workspace)))
    assert isinstance(events[0], RunStart) and events[0].model == "listed"


def test_an_unknown_model_is_a_usage_error_that_names_the_models(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", "--model", "nope", "hi"], cwd=workspace)
    assert proc.returncode == 2
    assert "--model" in proc.stderr and "'nope'" in proc.stderr
    assert "'scripted'" in proc.stderr and "'openai'" in proc.stderr
    assert not journals_of(workspace).exists()
    with pytest.raises(UsageError) as caught:
        _settings(workspace, model="nope")
    assert str(caught.value) == "--model nope: there is no such model; choose one of: scripted, openai, anthropic"


def test_model_openai_without_a_key_or_a_server_is_a_usage_error_and_leaves_no_journal(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", "--model", "openai", "hi"], cwd=workspace)
    assert proc.returncode == 2
    assert proc.stderr == (
        "wren: --model openai needs WREN_API_KEY (or WREN_BASE_URL for a local server that needs no key)\n"
    )
    assert list(journals_of(workspace).glob("*.jsonl")) == []


def test_the_default_is_openai_with_an_api_key_and_the_offline_model_without() -> None:
    assert default_model({"WREN_API_KEY": "sk-anything"}) == "openai"
    assert default_model({"WREN_BASE_URL": "http://127.0.0.1:1/v1"}) == "scripted"
    assert default_model({}) == "scripted"
    assert {"scripted", "openai"} <= MODELS.keys()


def test_a_run_with_the_scripted_model_never_loads_httpx_or_the_openai_gateway(workspace: Path) -> None:
    """And the loop, resume and chat load no model at all: the registry imports a model when it is chosen."""
    script = (
        "import sys\n"
        "import wren_tui.agent.chat, wren_tui.agent.session\n"
        "print(sorted(m for m in sys.modules if m.startswith('wren_tui.agent.models.')))\n"
        "from wren_tui.cli import main\n"
        "code = main(['run', '--dir', '../journals', 'hello'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('wren_tui.agent.models.') or m == 'httpx'))\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=workspace,
        env={"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(workspace.parent / "state")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "['wren_tui.agent.models.base']"
    assert lines[-1] == str(
        ["wren_tui.agent.models.base", "wren_tui.agent.models.scripted", "wren_tui.agent.models.testreport"]
    )
