"""Nothing a model or a tool sends can drive the terminal: the approval prompt, `wren run`, `wren chat`,
`wren resume`, `wren log` and the viewer show every control sequence, under a real pseudo-terminal.

A fake OpenAI-compatible server on 127.0.0.1 plays a hostile model: its text carries every sequence
of `HOSTILE`, streamed so that escape sequences are cut across fragments; its command prints them
too (tests/fixtures/evil.py.txt); a server error and a tool name carry them as well.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.agent.conftest import events_of, journals_of, messages_of, only_journal
from tests.agent.openai_server import (
    Answer,
    OpenAIServer,
    Status,
    Stream,
    call_chunk,
    finish_chunk,
    sse,
    text_chunk,
    usage_chunk,
)
from tests.agent.tty import HOSTILE, Tty, assert_inert, hostile_lines, shown_forms
from tests.conftest import run_wren
from tests.tui.conftest import FixedClock, screen_strips, screen_text, wait_for_text
from wren_tui.journal.events import Error, Message, ToolStart
from wren_tui.journal.store import session_id_of
from wren_tui.tui.app import WrenApp

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# The command the hostile model asks for: it prints every sequence, and carries them in a comment.
COMMAND = "python evil.py # " + "".join(f"<{name}: {raw}>" for name, raw, _ in HOSTILE)
HOSTILE_TOOL = "list\x1b]0;TOOL-TITLE\x07dir"
REPLY_END = "That is all it printed."
TASK = "look \x1b]0;TASK-TITLE\x07 now"


def pieces(text: str) -> list[str]:
    """`text` cut right after every ESC and CR and every 5 characters, so no sequence arrives whole."""
    out: list[str] = []
    for part in re.split(r"(?<=[\x1b\r])", text):
        out.extend(part[i : i + 5] for i in range(0, len(part), 5))
    return out


def streamed(text: str, *tail: dict[str, Any]) -> Stream:
    return Stream([sse(*(text_chunk(p) for p in pieces(text)), *tail, usage_chunk(10, 5))])


class HostileModel:
    """A model whose every word is an attack on the terminal; it fails once first, with a hostile error."""

    def __init__(self) -> None:
        self.failed = False

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> Answer:
        if not self.failed:
            self.failed = True
            return Status(500, {"error": {"message": f"overloaded {hostile_lines()}"}}, {"Retry-After": "0"})
        last = body["messages"][-1]
        if last["role"] == "tool":
            output = next(m["content"] for m in body["messages"] if m.get("tool_call_id") == "c1")
            return streamed(f"The command printed:\n{output}\n{REPLY_END}\n", finish_chunk("stop"))
        return streamed(
            f"Model text follows.\n{hostile_lines()}",
            call_chunk(0, json.dumps({"command": COMMAND}), call_id="c1", name="run_command"),
            call_chunk(1, "{}", call_id="c2", name=HOSTILE_TOOL),
            finish_chunk("tool_calls"),
        )


def evil_workspace(workspace: Path) -> Path:
    shutil.copy(FIXTURES / "evil.py.txt", workspace / "evil.py")
    return workspace


def assert_shows_every_sequence(text: str, where: str) -> None:
    missing = [shown for shown in shown_forms().values() if shown not in text]
    assert not missing, f"{where}: these were not shown: {missing}\n{text[:3000]}"


def model_env(server: OpenAIServer) -> dict[str, str]:
    return {"WREN_BASE_URL": server.base_url}


async def test_approval_prompt_and_run_show_every_sequence_from_the_model_and_the_tool(workspace: Path) -> None:
    evil_workspace(workspace)
    async with OpenAIServer(HostileModel()) as srv:

        def session() -> tuple[int, bytes, bytes]:
            tty = Tty(["run", "--model", "openai", "look"], workspace, model_env(srv))
            try:
                tty.wait_for(b"[a]lways run_command: ")
                prompt = bytes(tty.data)
                tty.send(b"y\n")
                return tty.finish(), prompt, bytes(tty.data)
            finally:
                tty.kill()

        code, prompt, everything = await asyncio.to_thread(session)
    assert code == 0, everything.decode(errors="replace")
    shown_prompt = assert_inert(prompt, "the approval prompt")
    question = shown_prompt[shown_prompt.rindex("allow run_command") :]
    assert_shows_every_sequence(question, "the approval prompt")
    assert "(the command contains control characters, shown as ␛ escape, ␍ carriage return, ␇ bell" in question
    text = assert_inert(everything, "wren run")
    assert_shows_every_sequence(text, "wren run (the model's text)")
    # The tool's output came back through the model's reply: every sequence evil.py prints is shown.
    assert "␛[2J␛[H␛]0;PWNED-TITLE␇␛[31mRED-ESC␛[0m ␛]52;c;cHduZWQ=␇ osc52" in text
    assert "carriage␍return and backspace␈␈XX and bell␇" in text
    assert "<U+009B>31m utf8-c1" in text
    assert REPLY_END in text
    # The server's error and the tool's name were printed too, made visible.
    assert "list␛]0;TOOL-TITLE␇dir" in text


class ChangingModel:
    """A model that asks for an edit whose new text is an attack on the terminal, then for a write of 60 lines."""

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> Answer:
        told = [m for m in body["messages"] if m["role"] == "tool"]
        if not told:
            edit = {"path": "notes.txt", "old": "old line", "new": f"new line\n{hostile_lines()}"}
            call = call_chunk(0, json.dumps(edit), call_id="c1", name="edit_file")
        elif len(told) == 1:
            write = {"path": "long.txt", "content": "\n".join(f"line {n}" for n in range(60))}
            call = call_chunk(0, json.dumps(write), call_id="c2", name="write_file")
        else:
            return streamed("Both were refused.", finish_chunk("stop"))
        return streamed("Changing a file.", call, finish_chunk("tool_calls"))


async def test_the_approval_of_an_edit_or_a_write_shows_its_diff_made_visible_and_counts_what_does_not_fit(
    workspace: Path,
) -> None:
    (workspace / "notes.txt").write_text("old line\n")
    async with OpenAIServer(ChangingModel()) as srv:

        def session() -> tuple[int, bytes, bytes]:
            tty = Tty(["run", "--model", "openai", "change the notes"], workspace, model_env(srv))
            try:
                tty.wait_for(b"[a]lways edit_file: ")
                edit = bytes(tty.data)
                tty.send(b"n\n")
                tty.wait_for(b"[a]lways write_file: ")
                write = bytes(tty.data[len(edit) :])
                tty.send(b"n\n")
                return tty.finish(), edit, write
            finally:
                tty.kill()

        code, edit, write = await asyncio.to_thread(session)
    assert code == 0, (edit + write).decode(errors="replace")
    # The edit: its diff before the question (a terminal of 80x24, as a pty nobody sized), every sequence shown.
    shown = assert_inert(edit, "the edit's approval prompt")
    question = shown[shown.rindex("allow edit_file notes.txt") :]
    assert "\n  | -old line\n  | +new line\n" in question
    assert_shows_every_sequence(question, "the edit's diff")
    assert "(the edit contains control characters, shown as ␛ escape, ␍ carriage return" in question
    assert question.index("  | +new line") < question.index("[y]es / [n]o")
    # The write: its first lines as added, as many as fit, and how many more.
    shown = assert_inert(write, "the write's approval prompt")
    question = shown[shown.rindex("allow write_file long.txt") :]
    assert "\n  | +line 0\n" in question and "\n  | +line 17\n" in question and "line 18" not in question
    assert "\n  ... 42 more lines of the diff not shown here ...\n[y]es / [n]o / [a]lways write_file: " in question
    # Both answered no: nothing changed.
    assert (workspace / "notes.txt").read_text() == "old line\n" and not (workspace / "long.txt").exists()


async def test_chat_and_resume_show_every_sequence_from_the_model_and_the_tool(workspace: Path) -> None:
    evil_workspace(workspace)
    async with OpenAIServer(HostileModel()) as srv:

        def chat() -> tuple[int, bytes]:
            tty = Tty(["chat", "--dir", "../journals", "--yes", "--model", "openai"], workspace, model_env(srv))
            try:
                tty.wait_for(b"you > ")
                tty.send(b"look\n")
                tty.wait_until(lambda: tty.data.count(b"you > ") == 2, "the prompt after the reply")
                tty.send(b"/quit\n")
                return tty.finish(), bytes(tty.data)
            finally:
                tty.kill()

        def resume(sid: str) -> tuple[int, bytes]:
            tty = Tty(
                ["resume", "--dir", "../journals", "--yes", "--model", "openai", sid, "again"],
                workspace,
                model_env(srv),
            )
            try:
                return tty.finish(), bytes(tty.data)
            finally:
                tty.kill()

        code, chatted = await asyncio.to_thread(chat)
        assert code == 0, chatted.decode(errors="replace")
        sid = session_id_of(only_journal(journals_of(workspace)))
        code, resumed = await asyncio.to_thread(resume, sid)
    assert code == 0, resumed.decode(errors="replace")
    for where, data in (("wren chat", chatted), ("wren resume", resumed)):
        text = assert_inert(data, where)
        assert_shows_every_sequence(text, where)
        assert "␛[2J␛[H␛]0;PWNED-TITLE␇" in text and REPLY_END in text


async def test_wren_log_and_the_viewer_show_every_sequence_of_the_journal(workspace: Path) -> None:
    evil_workspace(workspace)
    async with OpenAIServer(HostileModel()) as srv:
        code, _, err = await asyncio.to_thread(
            lambda: _quiet_run(
                ["run", "--dir", "../journals", "--yes", "--model", "openai", TASK], workspace, model_env(srv)
            )
        )
    assert code == 0, err
    journal = only_journal(journals_of(workspace))
    events = events_of(journal)
    assert any(isinstance(e, Error) and "\x1b" in e.message for e in events)
    # A tool that does not exist never starts: the model's call names it, and its end says it was not run.
    assert any(
        isinstance(e, Message) and any(c.name == HOSTILE_TOOL for c in e.message.tool_calls or ()) for e in events
    )
    assert not any(isinstance(e, ToolStart) and e.name == HOSTILE_TOOL for e in events)

    logged = subprocess.run(
        [sys.executable, "-m", "wren_tui", "log", str(journal)], cwd=workspace, capture_output=True, timeout=60
    )
    assert logged.returncode == 0
    text = assert_inert(logged.stdout, "wren log")
    # The error's message and the tool's name are printed as they are described, every sequence shown.
    error_line = next(line for line in text.splitlines() if "  error  " in line)
    assert "overloaded <CSI erase screen: ␛[2J␛[H>␊<CR + erase line (the spoof): ␍␛[2K>" in error_line
    assert "-> list␛]0;TOOL-TITLE␇dir({})" in text
    # The fork points list the messages' first words: the model's text among them.
    points = subprocess.run(
        [sys.executable, "-m", "wren_tui", "fork", str(journal)], cwd=workspace, capture_output=True, timeout=60
    )
    assert points.returncode == 0
    # Each point ends with what changed in the files since it: the command changed nothing.
    assert "  2  user: look ␛]0;TASK-TITLE␇ now  · files as now\n" in assert_inert(points.stdout, "wren fork")

    said = next(m.message.content for m in messages_of(events) if m.message.content.startswith("Model text"))
    assert said == f"Model text follows.\n{hostile_lines()}"
    app = WrenApp(folder=journal.parent, session=journal, clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(200, 60)) as pilot:
        # The whole journal is shown once its last event is (the reply before it is long, so it is folded).
        await wait_for_text(pilot, f"run_end #{events[-1].seq} ")
        await pilot.press("home")
        await wait_for_text(pilot, "Model text follows.")
        for strip in screen_strips(app):
            assert_inert(strip.text.encode(), "the viewer")
        assert_shows_every_sequence(screen_text(app), "the viewer")


def _quiet_run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    proc = run_wren(args, cwd=cwd, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_the_spoofed_approval_prompt_shows_the_hidden_command(workspace: Path) -> None:
    # The task of the QA pass: a backquoted command whose CR and erase-line hide `touch pwned.txt`.
    task = "run `touch pwned.txt #\r\x1b[2Kls -la`"
    tty = Tty(["run", task], workspace)
    try:
        tty.wait_for(b"[a]lways run_command: ")
        prompt = assert_inert(bytes(tty.data), "the approval prompt")
        tty.send(b"n\n")
        assert tty.finish() == 0
    finally:
        tty.kill()
    assert "allow run_command `touch pwned.txt #␍␛[2Kls -la`?\n" in prompt
    assert "(the command contains control characters, shown as ␍ carriage return, ␛ escape)" in prompt
    assert not (workspace / "pwned.txt").exists()
    assert_inert(bytes(tty.data), "wren run")


def test_the_scripted_model_quoting_a_hostile_command_output_sends_no_sequence_to_the_terminal(
    workspace: Path,
) -> None:
    evil_workspace(workspace)
    tty = Tty(["run", "--yes", "run `python evil.py`"], workspace)
    try:
        code = tty.finish()
    finally:
        tty.kill()
    assert code == 0, tty.text()
    text = assert_inert(bytes(tty.data), "wren run")
    assert "start\n␛[2J␛[H␛]0;PWNED-TITLE␇␛[31mRED-ESC␛[0m ␛]52;c;cHduZWQ=␇ osc52\n" in text
    assert "invalid utf8: \ufffd\ufffd\ufffd( end" in text
    assert "tail-line" in text


def test_wren_ls_shows_a_hostile_journal_name_without_obeying_it(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", "hi"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    journal = only_journal(journals_of(workspace))
    shutil.copy(journal, journal.with_name("s-\x1b]0;NAME-TITLE\x07\r\x1b[2Kok.jsonl"))
    listed = subprocess.run(
        [sys.executable, "-m", "wren_tui", "ls", "--dir", "../journals"], cwd=workspace, capture_output=True, timeout=60
    )
    assert listed.returncode == 0
    assert "s-␛]0;NAME-TITLE␇␍␛[2Kok" in assert_inert(listed.stdout, "wren ls")


def test_wren_ls_shows_a_hostile_project_folder_the_same_way(tmp_path: Path) -> None:
    project = tmp_path / "p\x1b]0;DIR-TITLE\x07\u202e"
    project.mkdir()
    folder = tmp_path / "journals"
    assert run_wren(["run", "--dir", str(folder), "hi"], cwd=project).returncode == 0
    listed = run_wren(["ls", "--dir", str(folder)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "p␛]0;DIR-TITLE␇<U+202E>" in assert_inert(listed.stdout.encode(), "wren ls")
