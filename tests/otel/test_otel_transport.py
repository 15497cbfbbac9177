"""`wren otel` against small collectors on 127.0.0.1 (no Phoenix needed): the spans' times as received, and
endpoints that misbehave (a redirect, an answer dripped a byte a second, an answer of 300 MB), each said in
one sentence with exit 1, the spans never counted as taken; --follow keeps them and sends them again."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_wren
from tests.otel.collector import running_collector, wait_for
from wren_tui.journal.events import (
    ChatMessage,
    KnownEvent,
    Message,
    RunEnd,
    RunStart,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from wren_tui.journal.timing import ts_ms
from wren_tui.journal.writer import JournalWriter, encode_line

pytest.importorskip("opentelemetry.sdk", reason="wren otel needs the otel extra (pip install -e '.[otel]')")

ASKED = "2026-12-01T10:00:01.000Z"
APPROVED = "2026-12-01T10:05:01.250Z"  # five minutes waiting for the person's yes
ENDED = "2026-12-01T10:05:03.500Z"  # the command ran 2.25 s


def approved_late(folder: Path, sid: str = "s-20261201-100000-wait", result: str = "ok") -> Path:
    """A run whose one call was approved five minutes after the model asked for it, then ran 2.25 s."""
    call = ToolCall("c1", "run_command", '{"command": "make test"}')
    lines: list[tuple[KnownEvent, str]] = [
        (RunStart(pid=1, cwd="/tmp", model="scripted", version="0.1.0"), "2026-12-01T10:00:00.000Z"),
        (Message(message=ChatMessage(role="user", content="run the tests")), "2026-12-01T10:00:00.100Z"),
        (Message(message=ChatMessage(role="assistant", content="", tool_calls=[call])), ASKED),
        (Usage(input_tokens=10, output_tokens=5, model="scripted"), ASKED),
        (ToolStart(id="c1", name="run_command", read_only=False, approval="approved"), APPROVED),
        (ToolEnd(id="c1", ok=True, elapsed_ms=2250, chars=2), ENDED),
        (Message(message=ChatMessage(role="tool", content=result, tool_call_id="c1")), ENDED),
        (Message(message=ChatMessage(role="assistant", content="The tests pass.")), "2026-12-01T10:05:04.000Z"),
        (Usage(input_tokens=20, output_tokens=4, model="scripted"), "2026-12-01T10:05:04.000Z"),
        (RunEnd(reason="done"), "2026-12-01T10:05:04.100Z"),
    ]
    path = folder / f"{sid}.jsonl"
    path.write_bytes(b"".join(encode_line(event, seq, ts) for seq, (event, ts) in enumerate(lines, 1)))
    return path


def ns(ts: str) -> int:
    ms = ts_ms(ts)
    assert ms is not None
    return ms * 1_000_000


@pytest.mark.parametrize("content", [False, True], ids=["plain", "with-content"])
def test_a_tool_span_times_the_tool_from_its_start_to_its_end_not_the_wait_for_approval(
    tmp_path: Path, content: bool
) -> None:
    journal = approved_late(tmp_path)
    with running_collector() as collector:
        done = run_wren(
            ["otel", str(journal), "--endpoint", collector.url, *(["--content"] if content else [])], cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        [tool] = collector.named("execute_tool ")
        [root] = collector.named("invoke_agent ")
    assert (tool.start_time_unix_nano, tool.end_time_unix_nano) == (ns(APPROVED), ns(ENDED))
    assert tool.parent_span_id == root.span_id
    assert (root.start_time_unix_nano, root.end_time_unix_nano) == (
        ns("2026-12-01T10:00:00.000Z"),
        ns("2026-12-01T10:05:04.100Z"),
    )


def test_a_redirect_is_an_error_and_the_spans_are_not_counted_as_sent(tmp_path: Path) -> None:
    journal = approved_late(tmp_path)
    with running_collector("redirect") as collector:
        done = run_wren(["otel", str(journal), "--endpoint", collector.url], cwd=tmp_path)
    assert done.returncode == 1 and "sent " not in done.stdout
    assert done.stderr.strip().splitlines() == [
        f"wren: the endpoint {collector.url}/v1/traces answered 307 Temporary Redirect (a redirect to "
        "http://127.0.0.1:9/v1/traces, which wren otel does not follow); nothing was sent: give --endpoint the "
        "collector's own address"
    ]


def test_an_answer_dripped_a_byte_a_second_is_cut_by_the_deadline_in_one_sentence(tmp_path: Path) -> None:
    journal = approved_late(tmp_path)
    with running_collector("drip") as collector:
        # The bound is generous (the deadline is 10 s): what fails here is never ending, not being slow.
        done = run_wren(["otel", str(journal), "--endpoint", collector.url], cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and "sent " not in done.stdout and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"wren: {collector.url}/v1/traces did not answer within 10 s; the spans are not counted as sent "
        "(is an OTLP/HTTP endpoint listening there?)"
    ]


@pytest.mark.parametrize("mode", ["huge", "huge-streamed"], ids=["length-said", "streamed"])
def test_an_answer_of_300_mb_is_not_read_whole_and_is_said_in_one_sentence(tmp_path: Path, mode: str) -> None:
    journal = approved_late(tmp_path)
    with running_collector(mode) as collector:
        done = run_wren(["otel", str(journal), "--endpoint", collector.url], cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and "sent " not in done.stdout and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"wren: {collector.url}/v1/traces answered with more than 1 MB (an OTLP endpoint answers a few bytes); "
        "the spans are not counted as sent"
    ]


def test_follow_keeps_the_spans_a_redirect_refused_and_sends_them_when_the_endpoint_takes_them(
    tmp_path: Path,
) -> None:
    sid = "s-20261201-100006-moved"
    journal = tmp_path / f"{sid}.jsonl"
    follower = None
    with running_collector("redirect") as collector:
        try:
            with JournalWriter.create(journal, fsync="none") as writer:
                follower = subprocess.Popen(
                    [sys.executable, "-m", "wren_tui", "otel", str(journal), "--follow", "--endpoint", collector.url],
                    cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                )  # fmt: skip
                writer.append(RunStart(pid=1, cwd=str(tmp_path), model="scripted", version="0.1.0"))
                writer.append(Message(message=ChatMessage(role="user", content="hello")))
                writer.append(Message(message=ChatMessage(role="assistant", content="Hello.")))
                writer.append(Usage(input_tokens=5, output_tokens=2, model="scripted"))
                deadline = time.monotonic() + 60
                while collector.requests < 2:  # redirected more than once: it was sent again
                    assert time.monotonic() < deadline and follower.poll() is None, "the follower stopped trying"
                    time.sleep(0.05)
                collector.mode = "take"
                assert [s.name for s in wait_for(collector, "chat ")] == ["chat scripted"]
                writer.append(RunEnd(reason="done"))
            assert [s.name for s in wait_for(collector, "invoke_agent ")] == ["invoke_agent wren"]
        finally:
            if follower is not None:
                follower.send_signal(signal.SIGINT)
                _out, err = follower.communicate(timeout=30)
    assert follower is not None and follower.returncode == 0
    assert sorted(s.name for s in collector.spans) == ["chat scripted", "invoke_agent wren"]
    said = err.decode()
    assert "answered 307 Temporary Redirect" in said and "the spans are kept and sent again" in said


def test_otel_all_of_a_folder_that_is_not_there_is_one_sentence_and_exit_1(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-journals"
    with running_collector() as collector:
        done = run_wren(["otel", "--all", "--dir", str(missing), "--endpoint", collector.url], cwd=tmp_path)
        assert collector.requests == 0
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"wren: {missing}: no such folder; name the journals folder with --dir (or WREN_DIR), or leave both out"
    ]
    assert not missing.exists()


def test_the_otlp_headers_variable_is_sent_with_the_spans(tmp_path: Path) -> None:
    journal = approved_late(tmp_path)
    env = {"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=k-0123456789,authorization=Bearer%20t"}
    with running_collector() as collector:
        done = run_wren(["otel", str(journal), "--endpoint", collector.url], cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"sent 4 spans of s-20261201-100000-wait to {collector.url}/v1/traces"
        [headers] = collector.headers
    assert headers["x-api-key"] == "k-0123456789" and headers["authorization"] == "Bearer t"
    assert headers["content-type"] == "application/x-protobuf"


def test_a_redirect_answered_before_the_body_is_read_is_said_as_the_redirect(tmp_path: Path) -> None:
    """A server (a proxy sending http to https) that answers 301 and closes without reading the spans' body."""
    import socket
    import threading

    # A result of 16 MB, sent with --content: more than the socket buffers take while no one reads.
    journal = approved_late(tmp_path, result="o" * (16 << 20))
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(4096)
            conn.sendall(b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://127.0.0.1/v1/traces\r\n"
                         b"Content-Length: 0\r\nConnection: close\r\n\r\n")  # fmt: skip
            conn.shutdown(socket.SHUT_WR)
        server.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    done = run_wren(["otel", str(journal), "--endpoint", f"http://127.0.0.1:{port}", "--content"], cwd=tmp_path)
    thread.join(30)
    assert done.returncode == 1 and "sent " not in done.stdout
    assert done.stderr.strip().splitlines() == [
        f"wren: the endpoint http://127.0.0.1:{port}/v1/traces answered 301 Moved Permanently (a redirect to "
        "https://127.0.0.1/v1/traces, which wren otel does not follow); nothing was sent: give --endpoint the "
        "collector's own address"
    ]


def test_a_header_variable_http_cannot_carry_is_one_sentence_and_nothing_is_sent(tmp_path: Path) -> None:
    journal = approved_late(tmp_path)
    with running_collector() as collector:
        done = run_wren(
            ["otel", str(journal), "--endpoint", collector.url],
            cwd=tmp_path,
            env={"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=k\u20ac"},
        )
        assert collector.requests == 0
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "wren: OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=k\u20ac' is not a name=value an HTTP header can carry "
        "(printable Latin-1 once %-decoded); nothing was sent"
    ]
