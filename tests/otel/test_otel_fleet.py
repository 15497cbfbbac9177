"""`wren otel nats://SERVER/HOST/SESSION --follow`: a session a fleet's mirror ships, sent to a real Phoenix as
it is mirrored, and its run closed as dead (its open call an error, outcome unknown) once the row says so."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.fleet.conftest import mirror_process, nats_server  # noqa: F401 (a fixture)
from tests.fleet.server import NatsServer
from tests.otel.conftest import Phoenix
from tests.otel.test_otel import check_tree
from wren_tui.journal.events import ChatMessage, Message, RunStart, ToolCall, ToolEnd, ToolStart, Usage
from wren_tui.journal.writer import JournalWriter


def test_follow_a_session_a_fleet_mirrors(phoenix: Phoenix, nats_server: NatsServer, tmp_path: Path) -> None:  # noqa: F811
    folder = tmp_path / "journals"
    sid = "s-20261201-100006-nats"
    writer = JournalWriter.create(folder / f"{sid}.jsonl", fsync="none")
    follower = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "otel", f"{nats_server.url}/box/{sid}", "--follow",
         "--endpoint", phoenix.url],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert follower.stdout is not None
    said_first = follower.stdout.readline().decode()
    # Started before any mirror: the server has no session list yet, and the follower waits for one (it stopped
    # at once before: the CI failure of stop 42, where the mirror was a moment late).
    assert said_first.startswith("following nats://"), said_first + follower.stderr.read().decode()  # type: ignore[union-attr]
    mirror = mirror_process(nats_server, folder, tmp_path / "mirror.log", host="box")
    try:
        ls = ToolCall("call_ls", "run_command", '{"command": "ls"}')
        rm = ToolCall("call_rm", "run_command", '{"command": "rm -rf build"}')
        writer.append(RunStart(pid=1, cwd=str(tmp_path), model="scripted", version="0.1.0"))
        writer.append(Message(message=ChatMessage(role="user", content="list, then clean")))
        writer.append(Message(message=ChatMessage(role="assistant", content="Listing.", tool_calls=[ls])))
        writer.append(Usage(input_tokens=50, output_tokens=7, model="scripted"))
        writer.append(ToolStart(id="call_ls", name="run_command", read_only=False, approval="approved"))
        writer.append(ToolEnd(id="call_ls", ok=True, elapsed_ms=12, chars=5))
        spans = phoenix.wait_for_spans(sid, 2, deadline_s=60)
        names = sorted(s["name"] for s in spans)
        assert names == ["chat scripted", "execute_tool run_command"], said(follower, tmp_path / "mirror.log", phoenix)
        writer.append(Message(message=ChatMessage(role="tool", content="a.txt", tool_call_id="call_ls")))
        writer.append(Message(message=ChatMessage(role="assistant", content="Cleaning.", tool_calls=[rm])))
        writer.append(Usage(input_tokens=60, output_tokens=9, model="scripted"))
        writer.append(ToolStart(id="call_rm", name="run_command", read_only=False, approval="approved"))
    except BaseException:
        mirror.terminate()  # a failure here: neither process outlives the test
        mirror.wait(30)
        follower.kill()
        follower.wait(30)
        raise
    finally:
        writer.close()  # gone with a call running and no run_end; the mirror's row says so
    try:
        spans = phoenix.wait_for_spans(sid, 5, deadline_s=60)
        root, children = check_tree(spans)
        assert root["status_code"] == "ERROR" and root["attributes"]["gen_ai.usage.input_tokens"] == 110
        died = next(s for s in children if s["attributes"].get("gen_ai.tool.call.id") == "call_rm")
        assert died["status_code"] == "ERROR" and "outcome unknown" in died["status_message"]
    finally:
        mirror.terminate()  # first: a failure's message (`said`) may have read the follower's pipes already
        mirror.wait(30)
        follower.send_signal(signal.SIGINT)
        _out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0, err.decode()


def said(follower: subprocess.Popen[bytes], mirror_log: Path, phoenix: Phoenix) -> str:
    """What the follower (stopped now), the mirror and Phoenix said: a failure's message."""
    if follower.poll() is None:
        follower.kill()
    _out, err = follower.communicate(timeout=30)
    lines = [f"the follower ({follower.returncode}) said: {err.decode(errors='replace')[-2000:]}"]
    for path in (mirror_log, phoenix.log):
        lines.append(f"{path.name}: {path.read_text(errors='replace')[-2000:] if path.exists() else '(none)'}")
    return "\n".join(lines)
