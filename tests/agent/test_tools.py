"""The tools: confined to the workspace, exact edits, commands with a timeout and an output cap."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.conftest import run_wren
from wren_tui.agent.redact import Redactor
from wren_tui.agent.tools import Toolbox
from wren_tui.journal.events import ToolEnd


def args(**kw: object) -> str:
    return json.dumps(kw)


async def test_paths_outside_the_workspace_are_refused_even_through_a_symlink(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    box = Toolbox(root)
    for call, given in (
        ("read_file", args(path="../secret.txt")),
        ("read_file", args(path=str(tmp_path / "secret.txt"))),
        ("read_file", args(path="link.txt")),
        ("write_file", args(path="../new.txt", content="x")),
        ("list_dir", args(path="..")),
    ):
        result = await box.run(call, given)
        assert not result.ok and "outside the workspace" in result.content, (call, given, result)
    assert not (tmp_path / "new.txt").exists()


async def test_tools_never_write_into_the_journals_folder(tmp_path: Path) -> None:
    journals = tmp_path / "journals"
    journals.mkdir()
    box = Toolbox(tmp_path, protected=(journals,))
    result = await box.run("write_file", args(path="journals/s-x.jsonl", content="{}"))
    assert not result.ok and "journals folder" in result.content
    assert list(journals.iterdir()) == []


async def test_edit_file_refuses_missing_and_ambiguous_text_and_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\nx = 1\ny = 2\n")
    box = Toolbox(tmp_path)
    missing = await box.run("edit_file", args(path="a.py", old="z = 3", new="z = 4"))
    assert not missing.ok and "not in the file" in missing.content
    ambiguous = await box.run("edit_file", args(path="a.py", old="x = 1", new="x = 5"))
    assert not ambiguous.ok and "appears 2 times" in ambiguous.content
    assert target.read_text() == "x = 1\nx = 1\ny = 2\n"
    done = await box.run("edit_file", args(path="a.py", old="y = 2", new="y = 3"))
    assert done.ok and target.read_text() == "x = 1\nx = 1\ny = 3\n"


async def test_bad_arguments_are_a_result_the_model_reads(tmp_path: Path) -> None:
    box = Toolbox(tmp_path)
    assert "not valid JSON" in (await box.run("read_file", "{not json")).content
    assert "missing argument 'path'" in (await box.run("read_file", "{}")).content
    assert "no tool named" in (await box.run("rm_rf", "{}")).content


async def test_long_output_is_cut_keeping_its_head_and_tail(tmp_path: Path) -> None:
    box = Toolbox(tmp_path, output_cap=2000)
    result = await box.run("run_command", args(command="seq 1 5000"))
    assert result.ok and result.truncated
    assert result.content.startswith("$ seq 1 5000\n1\n2\n") and "5000\n[exit code 0]" in result.content
    assert "characters cut" in result.content and len(result.content) < 2200


async def test_grep_finds_lines_with_their_paths(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def mean(v):\n    return sum(v) / len(v)\n")
    result = await Toolbox(tmp_path).run("grep", args(pattern=r"len\("))
    assert result.content == "pkg/m.py:2:     return sum(v) / len(v)"


def test_a_command_past_its_timeout_is_killed_and_recorded(workspace: Path) -> None:
    proc = run_wren(
        ["run", "--dir", "../journals", "--yes", "--command-timeout", "0.5", "run `sleep 30; echo never`"],
        cwd=workspace,
    )
    assert proc.returncode == 0, proc.stderr
    end = next(e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolEnd))
    assert (end.ok, end.stoppedBy) == (False, "timeout")
    assert "never" not in proc.stdout.replace("echo never", "")


def test_redactor_removes_secret_env_values_and_key_shapes_and_counts_them() -> None:
    redactor = Redactor({"MY_TOKEN": "tok-abcdefgh12", "SHORT_KEY": "abc", "HOME": "/home/me-and-more"})
    text = "token tok-abcdefgh12, aws AKIAABCDEFGHIJKLMNOP, gh ghp_" + "a1" * 18 + ", home /home/me-and-more, abc"
    clean, count = redactor.redact(text)
    assert count == 3
    assert "tok-abcdefgh12" not in clean and "AKIA" not in clean and "ghp_" not in clean
    assert "/home/me-and-more" in clean and clean.endswith("abc")
