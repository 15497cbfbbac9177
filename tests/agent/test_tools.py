"""The tools: confined to the workspace, exact edits, commands with a timeout and an output cap."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import resource
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.conftest import run_wren
from wren_tui.agent.tools import Toolbox
from wren_tui.agent.workspace import Place
from wren_tui.journal.events import ToolEnd
from wren_tui.journal.redact import Redactor


def args(**kw: object) -> str:
    return json.dumps(kw)


async def test_paths_outside_the_workspace_are_refused_even_through_a_symlink(tmp_path: Path) -> None:
    """(run_command is a shell with the user's rights: paths do not confine it, and it is not tested here.)"""
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


async def test_tools_never_read_or_write_the_journals_folder(tmp_path: Path) -> None:
    journals = tmp_path / "journals"
    journals.mkdir()
    (journals / "s-y.jsonl").write_text("the journal\n")
    box = Toolbox(tmp_path, protected=(journals,))
    result = await box.run("write_file", args(path="journals/s-x.jsonl", content="{}"))
    assert not result.ok and "journals folder" in result.content
    assert [p.name for p in journals.iterdir()] == ["s-y.jsonl"]
    assert "journals folder" in (await box.run("read_file", args(path="journals/s-y.jsonl"))).content
    assert (await box.run("grep", args(pattern="journal"))).content == "no match for 'journal'"
    assert (await box.run("list_dir", args(path="."))).content == "(empty folder)"


async def test_write_file_refuses_the_workspace_root_before_creating_anything(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "sub").mkdir()
    box = Toolbox(root)
    for given in (".", "", str(root), "sub", "sub/", "./sub/..", "new/"):
        result = await box.run("write_file", args(path=given, content="x"))
        assert not result.ok and "\n" not in result.content, (given, result)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["sub", "ws"]


async def test_write_file_refuses_a_path_through_a_symbolic_link_even_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.txt").write_text("a\n")
    os.symlink("real", tmp_path / "alias")
    os.symlink("real/a.txt", tmp_path / "a-link.txt")
    box = Toolbox(tmp_path)
    for given in ("alias/a.txt", "alias/new.txt", "a-link.txt"):
        result = await box.run("write_file", args(path=given, content="x"))
        assert not result.ok and "do not write through links" in result.content, result
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["a.txt"]
    assert (tmp_path / "real" / "a.txt").read_text() == "a\n"
    assert (await box.run("read_file", args(path="alias/a.txt"))).content == "a\n"  # reading a link inside is fine


async def test_a_failed_write_leaves_no_temporary_file_and_the_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("old\n")

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    result = await Toolbox(tmp_path).run("write_file", args(path="a.txt", content="new\n"))
    assert not result.ok and "No space left on device" in result.content
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"] and (tmp_path / "a.txt").read_text() == "old\n"


async def test_a_folder_swapped_for_a_link_after_the_path_was_resolved_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "a.txt").write_text("SECRET\n")
    box = Toolbox(root)
    resolved = box.workspace.place

    def swap_after_resolving(given: str, *, writing: bool = False) -> Place:
        place = resolved(given, writing=writing)
        (root / "sub").rmdir()
        os.symlink(outside, root / "sub")  # what a command running beside the agent could do
        return place

    monkeypatch.setattr(box.workspace, "place", swap_after_resolving)
    written = await box.run("write_file", args(path="sub/a.txt", content="x"))
    assert not written.ok and "became a symbolic link" in written.content
    assert (outside / "a.txt").read_text() == "SECRET\n" and [p.name for p in outside.iterdir()] == ["a.txt"]


async def test_read_file_of_a_huge_file_reads_its_head_only_and_says_so(tmp_path: Path) -> None:
    with open(tmp_path / "huge.log", "wb") as f:
        f.write(b"first line\n" * 300_000)  # 3.3 MB of text, then a sparse 2 GB hole of spaces' place
        f.truncate(2 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await Toolbox(tmp_path).run("read_file", args(path="huge.log"))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB: far less than 2 GB
    assert result.ok and result.truncated and result.content.startswith("first line\n")
    assert result.content.endswith(f"[... the file has {2 << 30} bytes; only the first 2000000 were read ...]")


async def test_read_file_and_grep_do_not_wait_on_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "a.txt").write_text("needle\n")
    box = Toolbox(tmp_path)
    read = await asyncio.wait_for(box.run("read_file", args(path="pipe")), 5)
    assert not read.ok and read.content.startswith("pipe: is a FIFO (named pipe), not a regular file")
    found = await asyncio.wait_for(box.run("grep", args(pattern="needle")), 5)
    assert found.content == "a.txt:1: needle"


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
    assert (await Toolbox(tmp_path).run("grep", args(pattern=r"len\(", path="pkg"))).content == result.content


async def test_grep_never_follows_a_symbolic_link_out_of_the_workspace(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET-OUTSIDE\n")
    os.symlink(outside / "secret.txt", root / "link.txt")
    os.symlink(outside, root / "linkdir")
    (root / "mine.txt").write_text("SECRET-INSIDE\n")
    result = await Toolbox(root).run("grep", args(pattern="SECRET"))
    assert result.content == "mine.txt:1: SECRET-INSIDE"
    assert (await Toolbox(root).run("list_dir", args(path="."))).content == "link.txt@\nlinkdir@\nmine.txt"


def test_a_command_past_its_timeout_is_killed_and_recorded(workspace: Path) -> None:
    proc = run_wren(
        ["run", "--dir", "../journals", "--yes", "--command-timeout", "0.5", "run `sleep 30; echo never`"],
        cwd=workspace,
    )
    assert proc.returncode == 0, proc.stderr
    end = next(e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolEnd))
    assert (end.ok, end.stopped_by) == (False, "timeout")
    assert "never" not in proc.stdout.replace("echo never", "")


def test_redactor_removes_secret_env_values_and_key_shapes_and_counts_them() -> None:
    redactor = Redactor({"MY_TOKEN": "tok-abcdefgh12", "SHORT_KEY": "abc", "HOME": "/home/me-and-more"})
    text = "token tok-abcdefgh12, aws AKIAABCDEFGHIJKLMNOP, gh ghp_" + "a1" * 18 + ", home /home/me-and-more, abc"
    clean, count = redactor.redact(text)
    assert count == 3
    assert "tok-abcdefgh12" not in clean and "AKIA" not in clean and "ghp_" not in clean
    assert "/home/me-and-more" in clean and clean.endswith("abc")
