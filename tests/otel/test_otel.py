"""`wren otel` against a real Arize Phoenix: the demo session and a killed one sent, then read back through
Phoenix's client; the span tree, names, token counts and error statuses are what the journal says."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, run_wren
from tests.otel.conftest import Phoenix
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart, ToolCall, ToolEnd, ToolStart, Usage
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter

FIX = "run the tests, find the failing case and fix it"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted agent's whole demo run (offline), as `wren run` journals it."""
    base = tmp_path_factory.mktemp("demo")
    workspace = prepare_workspace(base / "ws")
    sid = "s-20261201-100000-demo"
    done = run_wren(
        ["run", "--dir", str(base / "journals"), "--yes", "--pace-factor", "0", "--session-id", sid, FIX],
        cwd=workspace,
    )
    assert done.returncode == 0, done.stderr
    return base / "journals" / f"{sid}.jsonl"


def killed_copy(demo: Path, folder: Path) -> tuple[Path, str]:
    """What a kill during the first call with side effects leaves: the journal up to that call's tool_start."""
    lines = demo.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"type":"tool_start"' in line and b'"readOnly":false' in line)
    sid = "s-20261201-100001-kill"
    path = folder / f"{sid}.jsonl"
    path.write_bytes(b"".join(lines[: cut + 1]))
    return path, sid


def send(journal: Path, phoenix: Phoenix, *extra: str) -> str:
    done = run_wren(["otel", str(journal), "--endpoint", phoenix.url, *extra], cwd=journal.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout


def check_tree(spans: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The one root (invoke_agent) and its children; every span in the root's trace, under it."""
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 1 and roots[0]["name"].startswith("invoke_agent ")
    root = roots[0]
    children = [s for s in spans if s is not root]
    assert {s["context"]["trace_id"] for s in spans} == {root["context"]["trace_id"]}
    assert {s["parent_id"] for s in children} == {root["context"]["span_id"]}
    return root, children


def test_the_demo_session_arrives_as_one_trace_with_its_replies_calls_tokens_and_failures(
    phoenix: Phoenix, demo: Path
) -> None:
    events = read_events(demo).events
    sid = demo.name.removesuffix(".jsonl")
    out = send(demo, phoenix)
    usages = [e for e in events if isinstance(e, Usage)]
    replies = [e for e in events if isinstance(e, Message) and e.message.role == "assistant"]
    ends = {e.id: e for e in events if isinstance(e, ToolEnd)}
    calls = [c for r in replies for c in r.message.tool_calls or ()]
    expected = 1 + len(replies) + len(calls)
    assert f"sent {expected} spans" in out
    spans = phoenix.wait_for_spans(sid, expected)
    assert len(spans) == expected
    root, children = check_tree(spans)
    assert root["name"] == "invoke_agent wren" and root["status_code"] != "ERROR"
    assert root["attributes"]["wren.run.end_reason"] == "done"
    assert root["attributes"]["gen_ai.usage.input_tokens"] == sum(u.input_tokens for u in usages)
    assert root["attributes"]["gen_ai.usage.output_tokens"] == sum(u.output_tokens for u in usages)
    chats = sorted((s for s in children if s["name"].startswith("chat ")), key=lambda s: s["attributes"]["wren.seq"])
    assert [s["name"] for s in chats] == ["chat scripted"] * len(replies)
    assert [
        (s["attributes"]["gen_ai.usage.input_tokens"], s["attributes"]["gen_ai.usage.output_tokens"]) for s in chats
    ] == [(u.input_tokens, u.output_tokens) for u in usages]
    tools = [s for s in children if s["name"].startswith("execute_tool ")]
    assert Counter(s["name"] for s in tools) == Counter(f"execute_tool {c.name}" for c in calls)
    for span in tools:
        end = ends[span["attributes"]["gen_ai.tool.call.id"]]
        assert span["status_code"] == ("ERROR" if end.ok is False else "UNSET"), span
        assert span["attributes"]["wren.tool.outcome"] == ("failed" if end.ok is False else "ok")
    assert any(s["status_code"] == "ERROR" for s in tools)  # the demo's first test run fails
    # No content by default: no message, argument or result is on any span.
    assert not [k for s in spans for k in s["attributes"] if k.endswith(("messages", "arguments", "result"))]
    # Sent again: the same spans, not twice as many. A session sent after it marks when Phoenix has
    # taken in what was sent before (it inserts in the order received).
    send(demo, phoenix)
    marker = demo.parent / "s-20261201-100009-mark.jsonl"
    shutil.copyfile(demo, marker)
    send(marker, phoenix)
    assert len(phoenix.wait_for_spans(marker.name.removesuffix(".jsonl"), expected)) == expected
    assert len(phoenix.spans(sid)) == expected


def test_a_killed_session_says_the_run_died_and_its_open_call_has_an_unknown_outcome(
    phoenix: Phoenix, demo: Path, tmp_path: Path
) -> None:
    journal, sid = killed_copy(demo, tmp_path)
    events = read_events(journal).events
    started = [e for e in events if isinstance(e, ToolStart)][-1]
    replies = [e for e in events if isinstance(e, Message) and e.message.role == "assistant"]
    send(journal, phoenix)
    spans = phoenix.wait_for_spans(sid, 1 + len(replies) + 1)
    root, children = check_tree(spans)
    assert root["status_code"] == "ERROR" and "died" in root["status_message"]
    open_call = [s for s in children if s["attributes"].get("gen_ai.tool.call.id") == started.id]
    assert len(open_call) == 1
    assert open_call[0]["name"] == f"execute_tool {started.name}"
    assert open_call[0]["status_code"] == "ERROR" and "outcome unknown" in open_call[0]["status_message"]
    assert open_call[0]["attributes"]["wren.tool.outcome"] == "outcome unknown"


def test_content_is_sent_only_when_asked_for(phoenix: Phoenix, demo: Path, tmp_path: Path) -> None:
    journal = tmp_path / "s-20261201-100002-text.jsonl"
    shutil.copyfile(demo, journal)
    send(journal, phoenix, "--content")
    events = read_events(journal).events
    replies = [e for e in events if isinstance(e, Message) and e.message.role == "assistant"]
    calls = [c for r in replies for c in r.message.tool_calls or ()]
    spans = phoenix.wait_for_spans(journal.name.removesuffix(".jsonl"), 1 + len(replies) + len(calls))
    first = min((s for s in spans if s["name"].startswith("chat ")), key=lambda s: s["attributes"]["wren.seq"])
    output = json.loads(first["attributes"]["gen_ai.output.messages"])
    assert output[0]["parts"][0] == {"type": "text", "content": replies[0].message.content}
    inputs = json.loads(first["attributes"]["gen_ai.input.messages"])
    assert inputs[-1]["parts"][0]["content"] == FIX
    tool = next(s for s in spans if s["attributes"].get("gen_ai.tool.call.id") == calls[0].id)
    assert json.loads(tool["attributes"]["gen_ai.tool.call.arguments"]) == json.loads(calls[0].args)
    assert "FAILED" in tool["attributes"]["gen_ai.tool.call.result"]


def test_follow_sends_each_span_as_it_closes_and_a_run_that_dies_as_errors(phoenix: Phoenix, tmp_path: Path) -> None:
    sid = "s-20261201-100003-live"
    journal = tmp_path / f"{sid}.jsonl"
    writer = JournalWriter.create(journal, fsync="none")
    follower = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "otel", str(journal), "--follow", "--endpoint", phoenix.url],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        writer.append(RunStart(pid=1, cwd=str(tmp_path), model="scripted", version="0.1.0"))
        writer.append(Message(message=ChatMessage(role="user", content="list the files")))
        ls = ToolCall("call_ls", "run_command", '{"command": "ls"}')
        rm = ToolCall("call_rm", "run_command", '{"command": "rm -rf build"}')
        writer.append(Message(message=ChatMessage(role="assistant", content="Listing.", tool_calls=[ls])))
        writer.append(Usage(input_tokens=50, output_tokens=7, model="scripted"))
        writer.append(ToolStart(id="call_ls", name="run_command", read_only=False, approval="approved"))
        writer.append(ToolEnd(id="call_ls", ok=True, elapsed_ms=12, chars=5))
        # The call's span arrives while the run goes on (the run's own span is still open).
        spans = phoenix.wait_for_spans(sid, 2)
        assert sorted(s["name"] for s in spans) == ["chat scripted", "execute_tool run_command"]
        writer.append(Message(message=ChatMessage(role="tool", content="a.txt", tool_call_id="call_ls")))
        writer.append(Message(message=ChatMessage(role="assistant", content="Cleaning.", tool_calls=[rm])))
        writer.append(Usage(input_tokens=60, output_tokens=9, model="scripted"))
        writer.append(ToolStart(id="call_rm", name="run_command", read_only=False, approval="approved"))
    finally:
        writer.close()  # the writer is gone with a call running and no run_end: the run died
    try:
        spans = phoenix.wait_for_spans(sid, 5)
        root, children = check_tree(spans)
        assert root["status_code"] == "ERROR"
        assert (root["attributes"]["gen_ai.usage.input_tokens"], root["attributes"]["gen_ai.usage.output_tokens"]) == (
            110,
            16,
        )
        died = next(s for s in children if s["attributes"].get("gen_ai.tool.call.id") == "call_rm")
        assert died["status_code"] == "ERROR" and "outcome unknown" in died["status_message"]
    finally:
        follower.send_signal(signal.SIGINT)
        _out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0, err.decode()
    assert len(phoenix.spans(sid)) == 5


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_another_agents_session_is_sent_the_same_way(phoenix: Phoenix, agent: str, tmp_path: Path) -> None:
    from tests.conftest import FIXTURES
    from wren_tui.foreign import detect

    path = tmp_path / f"{agent}-tool-error.jsonl"
    shutil.copyfile(FIXTURES / "agents" / agent / "tool-error.jsonl", path)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))  # written a while ago: no one is writing it now
    fmt = detect(path)
    assert fmt is not None
    done = run_wren(["otel", str(path), "--endpoint", phoenix.url], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    log = json.loads(run_wren(["log", str(path), "--json"], cwd=tmp_path).stdout)["events"]
    usages = [e for e in log if e["type"] == "usage"]
    replies = [e for e in log if e["type"] == "message" and e["message"]["role"] == "assistant"]
    calls = [c for r in replies for c in r["message"].get("toolCalls") or ()]
    spans = phoenix.wait_for_spans(fmt.session_id(path), 1 + len(replies) + len(calls))
    root, children = check_tree(spans)
    assert root["name"] == f"invoke_agent {fmt.name}" and root["status_code"] != "ERROR"
    assert root["attributes"]["gen_ai.usage.input_tokens"] == sum(u["inputTokens"] for u in usages)
    tool = next(s for s in children if s["name"].startswith("execute_tool "))
    assert tool["status_code"] == "ERROR" and tool["attributes"]["wren.tool.outcome"] == "failed"


def test_an_endpoint_that_does_not_answer_is_said_in_one_sentence(demo: Path, tmp_path: Path) -> None:
    from tests.otel.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    done = run_wren(["otel", str(demo), "--endpoint", url], cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"wren: {url}/v1/traces did not take the spans (is an OTLP/HTTP endpoint listening there?)"
    ]


def test_follow_all_picks_up_sessions_that_start_after_it(phoenix: Phoenix, tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    follower = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wren_tui",
            "otel",
            "--all",
            "--dir",
            str(folder),
            "--follow",
            "--endpoint",
            phoenix.url,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        sid = "s-20261201-100004-late"
        with JournalWriter.create(folder / f"{sid}.jsonl", fsync="none") as writer:
            writer.append(RunStart(pid=1, cwd=str(tmp_path), model="scripted", version="0.1.0"))
            writer.append(Message(message=ChatMessage(role="user", content="hello")))
            writer.append(Message(message=ChatMessage(role="assistant", content="Hello.")))
            writer.append(Usage(input_tokens=5, output_tokens=2, model="scripted"))
            writer.append(RunEnd(reason="done"))
        spans = phoenix.wait_for_spans(sid, 2)
        root, children = check_tree(spans)
        assert root["status_code"] != "ERROR" and [s["name"] for s in children] == ["chat scripted"]
    finally:
        follower.send_signal(signal.SIGINT)
        _out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0, err.decode()


def test_follow_keeps_the_spans_a_backend_refused_and_sends_them_when_it_takes_them(tmp_path: Path) -> None:
    """A collector that fails at first (HTTP 500), then takes spans: nothing closed meanwhile is lost."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    state = {"refusing": True, "refused": 0}
    received: list[str] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if state["refusing"]:
                state["refused"] += 1
                self.send_response(500)
                self.end_headers()
                return
            request = ExportTraceServiceRequest.FromString(body)
            received.extend(s.name for r in request.resource_spans for ss in r.scope_spans for s in ss.spans)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sid = "s-20261201-100005-down"
    journal = tmp_path / f"{sid}.jsonl"
    follower = None
    try:
        with JournalWriter.create(journal, fsync="none") as writer:
            follower = subprocess.Popen(
                [sys.executable, "-m", "wren_tui", "otel", str(journal), "--follow", "--endpoint",
                 f"http://127.0.0.1:{server.server_address[1]}"],
                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
            writer.append(RunStart(pid=1, cwd=str(tmp_path), model="scripted", version="0.1.0"))
            writer.append(Message(message=ChatMessage(role="user", content="hello")))
            writer.append(Message(message=ChatMessage(role="assistant", content="Hello.")))
            writer.append(Usage(input_tokens=5, output_tokens=2, model="scripted"))
            deadline = time.monotonic() + 60
            while state["refused"] < 2:  # refused more than once: it was sent again
                assert time.monotonic() < deadline and follower.poll() is None, "the follower stopped trying"
                time.sleep(0.05)
            state["refusing"] = False
            while "chat scripted" not in received:
                assert time.monotonic() < deadline, f"only {received} arrived"
                time.sleep(0.05)
            writer.append(RunEnd(reason="done"))
        while "invoke_agent wren" not in received:
            assert time.monotonic() < deadline, f"only {received} arrived"
            time.sleep(0.05)
    finally:
        if follower is not None:
            follower.send_signal(signal.SIGINT)
            _out, err = follower.communicate(timeout=30)
        server.shutdown()
    assert follower.returncode == 0
    assert sorted(received) == ["chat scripted", "invoke_agent wren"]
    assert "the spans are kept and sent again" in err.decode()


def _signal_taken(pid: int, signum: int) -> bool:
    """Whether no `signum` waits for process `pid` any more (Linux's /proc says; elsewhere, taken as taken)."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return True
    for line in status.read_text().splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")) and int(line.split()[1], 16) & (1 << (signum - 1)):
            return False
    return True


def test_ctrl_c_while_spans_are_being_sent_lets_the_request_finish_and_sends_nothing_twice(tmp_path: Path) -> None:
    """The collector has taken the spans and not yet answered when Ctrl+C comes: the follower waits for its
    answer, then stops, and the last flush has nothing left to send (it sent the batch again before: the CI
    failure of stop 42)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    received: list[str] = []
    posts: list[int] = []
    holding, release = threading.Event(), threading.Event()

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = ExportTraceServiceRequest.FromString(body)
            names = [s.name for r in request.resource_spans for ss in r.scope_spans for s in ss.spans]
            received.extend(names)
            posts.append(len(names))
            if "invoke_agent wren" in names:  # the run's last batch: taken, the answer held back
                holding.set()
                release.wait(60)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    journal = tmp_path / "s-20261201-100007-ctrlc.jsonl"
    follower = None
    try:
        with JournalWriter.create(journal, fsync="none") as writer:
            writer.append(RunStart(pid=1, cwd=str(tmp_path), model="scripted", version="0.1.0"))
            writer.append(Message(message=ChatMessage(role="user", content="hello")))
            writer.append(Message(message=ChatMessage(role="assistant", content="Hello.")))
            writer.append(Usage(input_tokens=5, output_tokens=2, model="scripted"))
            writer.append(RunEnd(reason="done"))
        follower = subprocess.Popen(
            [sys.executable, "-m", "wren_tui", "otel", str(journal), "--follow", "--endpoint",
             f"http://127.0.0.1:{server.server_address[1]}"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert holding.wait(60), f"the spans never arrived: {received}"
        follower.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        while not _signal_taken(follower.pid, signal.SIGINT):  # the interrupt has landed in the request
            assert time.monotonic() < deadline, "the follower never took its Ctrl+C"
            time.sleep(0.01)
        assert follower.poll() is None, "the follower stopped before its request was answered"
        release.set()
        _out, err = follower.communicate(timeout=30)
    finally:
        release.set()
        if follower is not None and follower.poll() is None:
            follower.kill()
            follower.communicate()
        server.shutdown()
    assert follower.returncode == 0, err.decode()
    assert sorted(received) == ["chat scripted", "invoke_agent wren"], posts
