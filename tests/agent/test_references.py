"""`@` references in a task or a message: resolved into it before it is sent, printed, journaled, replayed exactly.

`wren` runs as a separate process. With the scripted model, its reply says the lines it read from
the request it got, so a reply naming them proves the text reached the model; with a local
OpenAI-compatible server the request's bytes are compared.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, only_journal
from tests.agent.openai_server import Answer, OpenAIServer, reply_stream
from tests.agent.test_instructions import user_texts, wren
from tests.conftest import run_wren
from wren_tui.agent.injection import REFERENCE_LIMIT
from wren_tui.journal.events import Event, Injected, Message


def workspace_with_files(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "notes.txt").write_text("".join(f"note line {n}\n" for n in range(1, 61)))
    (workspace / "docs" / "a.md").write_text("alpha\n")
    (workspace / "docs" / "b.md").write_text("beta\n")
    return workspace, tmp_path / "journals"


def messages(events: list[Event]) -> list[Message]:
    return [e for e in events if isinstance(e, Message)]


def test_a_file_a_folder_and_lines_are_given_to_the_model_and_each_is_printed_with_its_size(tmp_path: Path) -> None:
    workspace, journals = workspace_with_files(tmp_path)
    task = "what do @notes.txt:10-40 and @docs/ hold, beside @docs/a.md?"
    done = run_wren(["run", "--dir", str(journals), "--yes", task], cwd=workspace)
    assert done.returncode == 0, done.stderr
    lines = "".join(f"note line {n}\n" for n in range(10, 41))
    listing = "a.md\nb.md"
    # Printed before the request: each reference, its characters and tokens, and the total.
    out = done.stdout
    assert f"  @notes.txt:10-40  {len(lines):,} chars, ~{(len(lines) + 3) // 4:,} tokens" in out
    assert f"  @docs/  {len(listing)} chars, ~{(len(listing) + 3) // 4} tokens" in out
    assert "  @docs/a.md  6 chars, ~2 tokens" in out
    total = len(lines) + len(listing) + 6
    assert f"  total: 3 given, {total:,} chars" in out
    assert out.index("total: 3 given") < out.index("I read what you gave me")
    # The scripted model read them from the request it was given.
    assert "@notes.txt:10-40 holds 31 lines: it begins 'note line 10' and ends 'note line 40'" in out
    assert "@docs/ holds 2 lines: it begins 'a.md' and ends 'b.md'" in out
    events = events_of(only_journal(journals))
    sent = messages(events)[0]
    assert sent.message.content.startswith(task + "\n\n--- @notes.txt:10-40 ---\n" + lines)
    given = [e for e in events if isinstance(e, Injected)]
    assert [g.ref for g in given] == ["@notes.txt:10-40", "@docs/", "@docs/a.md"]
    assert all(g.seq < sent.seq for g in given)


def hostile_target(name: str, workspace: Path, tmp_path: Path) -> str:
    """What a reference of this kind names, made in the workspace when it needs a file."""
    if name == "fifo":
        os.mkfifo(workspace / "pipe")
        return "pipe"
    if name == "binary":
        (workspace / "blob.bin").write_bytes(b"SECRET\0\1\2")
        return "blob.bin"
    if name == "symlink":
        (workspace / "out").symlink_to(tmp_path / "private")
        return "out/key.txt"
    return {"outside": "../../etc/passwd", "journals": "journals/"}[name]


@pytest.mark.parametrize(
    ("name", "sentence"),
    [
        ("outside", "outside the workspace"),
        ("fifo", "it is not a regular file (a FIFO"),
        ("journals", "it is in Wren's journals folder"),
        ("binary", "it is binary"),
        ("symlink", "outside the workspace"),
    ],
)
def test_a_reference_that_may_not_be_given_is_refused_in_a_sentence_and_nothing_of_it_is_sent(
    tmp_path: Path, name: str, sentence: str
) -> None:
    workspace, _ = workspace_with_files(tmp_path)
    journals = workspace / "journals"  # the journals inside the workspace: a reference to them is refused
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "key.txt").write_text("SECRET KEY TEXT\n")
    target = hostile_target(name, workspace, tmp_path)
    run_wren(["run", "--dir", str(journals), "--yes", "hello"], cwd=workspace)  # a journal to point at
    done = run_wren(["run", "--dir", str(journals), "--yes", f"read @{target} please"], cwd=workspace, timeout=60)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith(f"  @{target}"))
    assert ": not given: " in line and sentence in line
    assert "total: 0 given, 0 chars, ~0 tokens, 1 not given" in done.stdout
    newest = max(journals.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
    events = events_of(newest)
    content = messages(events)[0].message.content
    assert f"--- @{target}: not given: " in content and sentence in content
    assert "SECRET" not in content and "root:" not in content
    assert [e.refused for e in events if isinstance(e, Injected)] == [True]


def test_a_reference_to_a_file_of_a_gigabyte_is_clipped_and_the_clip_is_said(tmp_path: Path) -> None:
    workspace, journals = workspace_with_files(tmp_path)
    with (workspace / "big.log").open("wb") as out:
        out.write(b"log line\n" * (REFERENCE_LIMIT // 9 + 10))
        out.truncate(1 << 30)  # sparse: only the first REFERENCE_LIMIT bytes are ever read
    done = run_wren(["run", "--dir", str(journals), "--yes", "what is in @big.log"], cwd=workspace)
    assert done.returncode == 0, done.stderr
    clipped = f"clipped: the first {REFERENCE_LIMIT:,} bytes of {1 << 30:,}"
    assert f"  @big.log  {REFERENCE_LIMIT:,} chars" in done.stdout and clipped in done.stdout
    content = messages(events_of(only_journal(journals)))[0].message.content
    assert f"--- @big.log ({clipped}) ---\nlog line\n" in content
    assert len(content) < REFERENCE_LIMIT + 500


def test_an_address_or_a_name_without_a_file_is_said_as_not_given_not_dropped(tmp_path: Path) -> None:
    workspace, journals = workspace_with_files(tmp_path)
    done = run_wren(["run", "--dir", str(journals), "--yes", "mail me@example.com about @nothing-here."], cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert f"  @nothing-here: not given: there is no {workspace / 'nothing-here'}" in done.stdout
    assert "@example.com" not in done.stdout.replace("me@example.com", "")


async def test_a_resume_after_the_referenced_file_changed_sends_the_text_first_injected(tmp_path: Path) -> None:
    workspace, journals = workspace_with_files(tmp_path)

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return reply_stream("Read.")

    async with OpenAIServer(answer) as server:
        env = {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "not-a-real-key-0000"}
        first = await wren(["run", "--dir", str(journals), "--model", "openai", "see @docs/a.md"], workspace, env)
        assert first.returncode == 0, first.stderr
        (workspace / "docs" / "a.md").write_text("CHANGED\n")
        second = await wren(["resume", "--dir", str(journals), "--model", "openai", "and now?"], workspace, env)
        assert second.returncode == 0, second.stderr
    sent = [user_texts(r) for r in server.requests]
    assert sent[0] == ["see @docs/a.md\n\n--- @docs/a.md ---\nalpha\n\n--- end of @docs/a.md ---"]
    assert sent[1] == [sent[0][0], "and now?"]


def test_a_chat_message_with_a_reference_gives_the_file_and_the_instructions_come_once(tmp_path: Path) -> None:
    workspace, journals = workspace_with_files(tmp_path)
    (workspace / "AGENTS.md").write_text("Be brief.\n")
    typed = ["what is in @docs/b.md", "and @notes.txt:2-3?", "/quit", ""]
    done = run_wren(["chat", "--dir", str(journals), "--yes"], cwd=workspace, input="\n".join(typed))
    assert done.returncode == 0, done.stderr
    assert "@docs/b.md holds 1 line: it begins 'beta'." in done.stdout
    assert "@notes.txt:2-3 holds 2 lines: it begins 'note line 2' and ends 'note line 3'." in done.stdout
    events = events_of(only_journal(journals))
    assert [(e.kind, Path(e.path).name) for e in events if isinstance(e, Injected)] == [
        ("instructions", "AGENTS.md"),
        ("reference", "b.md"),
        ("reference", "notes.txt"),
    ]
